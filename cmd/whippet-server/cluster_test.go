package main

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/whippetio/whippet/bench"
	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire/classic"
)

// Cluster test sizes and bounds.
const (
	clusterSize = 3
	// failoverMax is how soon the survivors of a failed primary must
	// serve its partition again.
	failoverMax = time.Second
	// catchUpMax bounds how long a restarted node may take to hold what
	// the others hold.
	catchUpMax = 90 * time.Second
	// redirectMax bounds how long a producer's client takes to reach a
	// live node: a paused node still accepts connections, so its clients
	// first wait out a reply timeout.
	redirectMax = 60 * time.Second
)

// TestClusterReplicates: three nodes agree on one leader and list each
// other healthy at their client addresses; a topic created through the
// leader appears on every node; writes sent to every node (so that
// non-primaries forward to each partition's primary) are acknowledged,
// and every node then serves the same partitions, in order, exactly once.
func TestClusterReplicates(t *testing.T) {
	c := startCluster(t, clusterSize)
	leader := c.awaitStable(clusterStartMax)
	metadata, err := c.roster(leader)
	if err != nil {
		t.Fatal(err)
	}
	for replica, node := range metadata.Nodes {
		if node.Name != fmt.Sprintf("node-%d", replica) || c.replicaOf(node) != replica {
			t.Fatalf("roster entry %d is %+v, want node-%d at %s", replica, node, replica, c.clientAddresses[replica])
		}
	}
	c.checkClassicRoster()
	all := survivors(clusterSize)
	target := c.createTopic(clusterSize, all)
	var producers []*producer
	for replica := range clusterSize {
		pinned, err := c.pinned(replica)
		if err != nil {
			t.Fatal(err)
		}
		for partition := range target.partitions {
			lane := newProducer(fmt.Sprintf("n%dp%d", replica, partition), target, partition, pinned, 10)
			for sequence := 0; sequence < 30; {
				sequence = lane.sendOne(sequence, 20*time.Second)
			}
			if lane.ackedCount() != 30 {
				logProducers(t, []*producer{lane})
				t.Fatalf("node %d partition %d: %d of 30 acknowledged in a healthy cluster\n%s", replica, partition,
					lane.ackedCount(), c.logs())
			}
			producers = append(producers, lane)
		}
	}
	for partition := range target.partitions {
		contents := c.awaitSameLog(all, target, partition, producers, 30*time.Second)
		if len(contents) != 30*clusterSize {
			t.Fatalf("partition %d holds %d messages, want %d", partition, len(contents), 30*clusterSize)
		}
	}
}

// checkClassicRoster: a 0.8 (classic) client reads the roster, in the
// 0.8 layout, from every node: every node at its client address, healthy,
// and exactly one leader, so that the classic SDK follows a leader too.
func (c *testCluster) checkClassicRoster() {
	c.t.Helper()
	for replica, node := range c.nodes {
		legacy := node.dialClassic(c.t)
		classicLogin(c.t, legacy)
		var metadata classic.ClusterMetadata
		found, err := legacy.Call(ctxTimeout(c.t), classic.GetClusterMetadata{}, &metadata)
		if err != nil || !found || len(metadata.Nodes) != clusterSize {
			c.t.Fatalf("node %d: classic cluster metadata %+v found %v err %v", replica, metadata, found, err)
		}
		leaders := 0
		for index, entry := range metadata.Nodes {
			address := net.JoinHostPort(entry.IP, strconv.Itoa(int(entry.TCP)))
			if !sameHostPort(address, c.clientAddresses[index]) || entry.Status != classic.NodeStatusHealthy {
				c.t.Fatalf("node %d: classic roster entry %d is %+v, want %s healthy", replica, index, entry,
					c.clientAddresses[index])
			}
			if entry.Role == classic.NodeRoleLeader {
				leaders++
			}
		}
		if leaders != 1 {
			c.t.Fatalf("node %d: classic roster %+v names %d leaders, want 1", replica, metadata.Nodes, leaders)
		}
	}
}

// failoverRun is one failover scenario's shared state.
type failoverRun struct {
	c         *testCluster
	target    clusterTopic
	victim    int // the node that fails
	producers []*producer
	probes    []*producer // one per partition, on a survivor
	metaProbe *client.Client
	stop      chan struct{}
	running   sync.WaitGroup
}

// startFailover starts a cluster, a topic of clusterSize partitions and
// one producer per partition following the leader.
func startFailover(t *testing.T) *failoverRun {
	if testing.Short() {
		t.Skip("a cluster failover takes seconds: make test-all")
	}
	c := startCluster(t, clusterSize)
	leader := c.awaitStable(clusterStartMax)
	run := &failoverRun{c: c, target: c.createTopic(clusterSize, survivors(clusterSize)), stop: make(chan struct{})}
	for partition := range run.target.partitions {
		lane := newProducer(fmt.Sprintf("p%d", partition), run.target, partition, c.following(leader), 10)
		run.producers = append(run.producers, lane)
		run.running.Add(1)
		go lane.run(run.stop, &run.running)
	}
	return run
}

// chooseVictim picks the node to fail once the producers run: the
// metadata leader of that moment (leadership can move under load), so
// that at least the metadata group must change view. Which partitions it
// leads is not visible from outside (their views move on their own), so
// every partition is probed from the survivors too, and the slowest
// group to serve again measures the failover.
func (r *failoverRun) chooseVictim(t *testing.T) {
	r.victim = r.c.awaitStable(10 * time.Second)
	for partition := range r.target.partitions {
		if partitionPrimary(r.target.stream, r.target.topic, partition, clusterSize) == r.victim {
			t.Logf("victim node %d: metadata leader; primary of partition %d while its group is in view 0",
				r.victim, partition)
		}
	}
	others := survivors(clusterSize, r.victim)
	for partition := range r.target.partitions {
		pinned, err := r.c.pinned(others[int(partition)%len(others)])
		if err != nil {
			t.Fatal(err)
		}
		r.probes = append(r.probes, newProducer(fmt.Sprintf("probe%d", partition), r.target, partition, pinned, 1))
	}
	metaProbe, err := r.c.pinned(others[0])
	if err != nil {
		t.Fatal(err)
	}
	r.metaProbe = metaProbe
}

// failAndMeasure lets the producers run, fails the victim with fail, and
// returns how long until survivors acknowledged a write to every group
// (the slowest group's time).
func (r *failoverRun) failAndMeasure(t *testing.T, fail func() time.Time) time.Duration {
	time.Sleep(1500 * time.Millisecond) // producers fill the pipelines before the failure
	r.chooseVictim(t)
	r.logRosters(t, "before the failure")
	failed := fail()
	served := make([]time.Duration, len(r.probes)+1) // by partition, then the metadata group
	var probing sync.WaitGroup
	probing.Add(1)
	go func() {
		defer probing.Done()
		if at, ok := probeMetadataFailover(r.metaProbe, failed.Add(30*time.Second)); ok {
			served[len(r.probes)] = at.Sub(failed)
		}
	}()
	for partition, probe := range r.probes {
		probing.Add(1)
		go func() {
			defer probing.Done()
			if at, ok := probeFailover(probe, failed.Add(30*time.Second)); ok {
				served[partition] = at.Sub(failed)
			}
		}()
	}
	probing.Wait()
	failover := time.Duration(0)
	for _, took := range served {
		if took == 0 {
			r.logRosters(t, "30 s after the failure")
			logProducers(t, append(slices.Clone(r.producers), r.probes...))
			t.Fatalf("survivors acknowledged writes (by partition, then metadata; 0 = none) after %v: not every group "+
				"served again within 30 s of the failure\n%s", served, r.c.logs())
		}
		failover = max(failover, took)
	}
	t.Logf("failover: survivors acknowledged a write to each partition after %v and a metadata write after %v; slowest %v",
		served[:len(r.probes)], served[len(r.probes)], failover)
	if failover > failoverMax {
		t.Errorf("failover took %v, more than %v", failover, failoverMax)
	}
	r.logRosters(t, "after the failover")
	r.c.eventually(redirectMax, "every producer acknowledged after the failure", func() string {
		for _, lane := range r.producers {
			if _, ok := lane.outage(failed); !ok {
				return "lane " + lane.lane + " has not"
			}
		}
		return ""
	})
	time.Sleep(500 * time.Millisecond) // the producers carry on at the new leader for a while
	close(r.stop)
	r.running.Wait()
	for _, lane := range r.producers {
		outage, _ := lane.outage(failed)
		t.Logf("lane %s (a client following the leader): longest wait for an acknowledgement after the failure %v",
			lane.lane, outage)
	}
	return failover
}

// logRosters logs the leader each node names, for the record.
func (r *failoverRun) logRosters(t *testing.T, when string) {
	leaders := make([]string, len(r.c.nodes))
	for replica, node := range r.c.nodes {
		leaders[replica] = "down"
		if r.c.paused[replica] {
			leaders[replica] = "paused" // it would only cost a reply timeout
			continue
		}
		if node.command == nil {
			continue
		}
		if metadata, err := r.c.roster(replica); err == nil {
			leaders[replica] = "none"
			if leader, ok := metadata.Leader(); ok {
				leaders[replica] = strconv.Itoa(r.c.replicaOf(leader))
			}
		}
	}
	t.Logf("%s: the leader by node: %v", when, leaders)
}

// verify checks every partition on nodes and logs acked vs read back.
func (r *failoverRun) verify(t *testing.T, nodes []int, timeout time.Duration) {
	lanes := append(slices.Clone(r.producers), r.probes...)
	ackedTotal, readTotal := 0, 0
	for partition := range r.target.partitions {
		contents := r.c.awaitSameLog(nodes, r.target, partition, lanes, timeout)
		acked, _ := verifyLog(contents, lanesOf(lanes, partition))
		ackedTotal += acked
		readTotal += len(contents)
	}
	logProducers(t, lanes)
	t.Logf("nodes %v: %d messages acknowledged, %d read back (every acknowledged one exactly once, in order)",
		nodes, ackedTotal, readTotal)
}

// TestClusterFailoverKill: the primary of a partition (also the metadata
// leader) is killed with SIGKILL while producers send under persisted;
// the survivors elect a new primary and serve within failoverMax, the
// producers' clients redirect, and every acknowledged message is read
// back exactly once, in order, from the survivors. The killed node then
// restarts on its data, catches up and rejoins.
func TestClusterFailoverKill(t *testing.T) {
	run := startFailover(t)
	run.failAndMeasure(t, func() time.Time { return run.c.kill(run.victim) })
	run.verify(t, survivors(clusterSize, run.victim), 30*time.Second)
	restarted := time.Now()
	run.c.restart(run.victim)
	run.verify(t, survivors(clusterSize), catchUpMax)
	run.c.awaitStable(catchUpMax)
	t.Logf("node %d restarted, caught up and rejoined in %v", run.victim, time.Since(restarted))
}

// TestClusterFailoverPause: the primary is partitioned away by SIGSTOP
// (its sockets stay open, it just stops answering); the survivors fail
// over as for a crash. Resumed, the old primary learns the new view,
// keeps nothing the cluster did not commit, and catches up.
func TestClusterFailoverPause(t *testing.T) {
	run := startFailover(t)
	run.failAndMeasure(t, func() time.Time { return run.c.signal(run.victim, syscall.SIGSTOP) })
	run.verify(t, survivors(clusterSize, run.victim), 30*time.Second)
	run.c.signal(run.victim, syscall.SIGCONT)
	run.verify(t, survivors(clusterSize), catchUpMax)
	run.c.awaitStable(catchUpMax)
}

// TestClusterStateTransfer: a backup is killed and its data directory
// wiped; while it is down the partitions take far more operations than a
// journal holds (64 slots), so on restart it can only catch up by state
// transfer. It must then hold exactly what the others hold.
func TestClusterStateTransfer(t *testing.T) {
	if testing.Short() {
		t.Skip("state transfer writes hundreds of operations: make test-all")
	}
	c := startCluster(t, clusterSize)
	leader := c.awaitStable(clusterStartMax)
	target := c.createTopic(2, survivors(clusterSize))
	victim := (leader + 1) % clusterSize
	c.kill(victim)
	c.wipe(victim)
	writer := c.following(leader)
	var lanes []*producer
	for partition := range target.partitions {
		lane := newProducer(fmt.Sprintf("s%d", partition), target, partition, writer, 5)
		for sequence := 0; sequence < 5*300; {
			sequence = lane.sendOne(sequence, 20*time.Second)
		}
		if lane.ackedCount() != 5*300 {
			logProducers(t, []*producer{lane})
			t.Fatalf("partition %d: %d of %d acknowledged with one node down", partition, lane.ackedCount(), 5*300)
		}
		lanes = append(lanes, lane)
	}
	restarted := time.Now()
	c.restart(victim)
	for partition := range target.partitions {
		contents := c.awaitSameLog(survivors(clusterSize), target, partition, lanes, catchUpMax)
		if len(contents) != 5*300 {
			t.Fatalf("partition %d holds %d messages, want %d", partition, len(contents), 5*300)
		}
	}
	c.awaitStable(catchUpMax)
	t.Logf("node %d restarted empty and caught up by state transfer in %v", victim, time.Since(restarted))
}

// TestClusterThroughput measures the lab's p1 workload (one pinned
// producer, 1000 messages of 1000 bytes a batch, persisted) against one
// node and against a three-node cluster, and logs both. Replication must
// not cost more than clusterThroughputRatioMin of a single node's
// throughput (Iggy publishes 1,134 vs 2,062 MB/s, 0.55).
func TestClusterThroughput(t *testing.T) {
	if testing.Short() {
		t.Skip("a throughput comparison: make test-all")
	}
	const clusterThroughputRatioMin = 0.1
	c := startCluster(t, clusterSize)
	leader := c.awaitStable(clusterStartMax)
	clustered := measureP1(t, c.clientAddresses[leader])
	c.stopAll() // the single node gets the machine to itself
	single := startServer(t, "WHIPPET_SYSTEM_SHARDING_CPU_ALLOCATION=1")
	alone := measureP1(t, single.address)
	ratio := clustered.WallThroughputMBps / alone.WallThroughputMBps
	t.Logf("p1 persisted: 1 node %.0f MB/s (p50 %.2f ms, p99 %.2f ms); 3 nodes %.0f MB/s (p50 %.2f ms, p99 %.2f ms); ratio %.2f",
		alone.WallThroughputMBps, alone.P50Ms, alone.P99Ms, clustered.WallThroughputMBps, clustered.P50Ms,
		clustered.P99Ms, ratio)
	if ratio < clusterThroughputRatioMin {
		t.Errorf("3 nodes reach %.2f of one node's p1 throughput, below %.2f", ratio, clusterThroughputRatioMin)
	}
}

func measureP1(t *testing.T, address string) bench.ActorSummary {
	t.Helper()
	options := bench.DefaultSuiteOptions()
	options.ServerAddress, options.Durability, options.Duration = address, "persisted", 5*time.Second
	config, err := bench.WorkloadConfig("p1", &options)
	if err != nil {
		t.Fatal(err)
	}
	config.Username, config.Password = "iggy", "iggy"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	result, err := bench.Run(ctx, config, bench.Environment{NoFiles: true, Server: &bench.Server{Address: address}})
	if err != nil {
		t.Fatalf("p1 against %s: %v", address, err)
	}
	if len(result.Report.IndividualMetrics) != 1 || result.Report.IndividualMetrics[0].Summary.WallThroughputMBps <= 0 {
		t.Fatalf("p1 against %s measured nothing: %+v", address, result.Report.IndividualMetrics)
	}
	return result.Report.IndividualMetrics[0].Summary
}
