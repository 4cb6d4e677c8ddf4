package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/whippetio/whippet/bench"
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

// failoverRun is one failover scenario's shared state.
type failoverRun struct {
	c         *testCluster
	target    clusterTopic
	victim    int // the node that fails
	producers []*producer
	probes    []*producer // one per partition, on a survivor
	stop      chan struct{}
	running   sync.WaitGroup
}

// startFailover starts a cluster, a topic of clusterSize partitions and
// one producer per partition following the leader, and picks the victim:
// the metadata leader. Groups' views move at start as nodes join, so
// which partitions the victim leads is not known from outside: every
// partition is probed, and the slowest to serve again measures the
// failover.
func startFailover(t *testing.T) *failoverRun {
	if testing.Short() {
		t.Skip("a cluster failover takes seconds: make test-all")
	}
	c := startCluster(t, clusterSize)
	leader := c.awaitStable(clusterStartMax)
	run := &failoverRun{c: c, target: c.createTopic(clusterSize, survivors(clusterSize)), victim: leader,
		stop: make(chan struct{})}
	for partition := range run.target.partitions {
		if partitionPrimary(run.target.stream, run.target.topic, partition, clusterSize) == leader {
			t.Logf("victim node %d: metadata leader; primary of partition %d while its group is in view 0",
				run.victim, partition)
		}
	}
	others := survivors(clusterSize, run.victim)
	for partition := range run.target.partitions {
		lane := newProducer(fmt.Sprintf("p%d", partition), run.target, partition, c.following(leader), 10)
		run.producers = append(run.producers, lane)
		run.running.Add(1)
		go lane.run(run.stop, &run.running)
		pinned, err := c.pinned(others[int(partition)%len(others)])
		if err != nil {
			t.Fatal(err)
		}
		run.probes = append(run.probes, newProducer(fmt.Sprintf("probe%d", partition), run.target, partition, pinned, 1))
	}
	return run
}

// failAndMeasure lets the producers run, fails the victim with fail, and
// returns how long until survivors acknowledged a write to every
// partition (the slowest partition's time).
func (r *failoverRun) failAndMeasure(t *testing.T, fail func() time.Time) time.Duration {
	time.Sleep(1500 * time.Millisecond) // producers fill the pipelines before the failure
	failed := fail()
	served := make([]time.Duration, len(r.probes))
	var probing sync.WaitGroup
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
	for partition, took := range served {
		if took == 0 {
			t.Fatalf("no survivor acknowledged a write to partition %d within 30 s of the failure\n%s", partition, r.c.logs())
		}
		failover = max(failover, took)
	}
	t.Logf("failover: survivors acknowledged a write to each partition after %v (by partition); slowest %v", served, failover)
	if failover > failoverMax {
		t.Errorf("failover took %v, more than %v", failover, failoverMax)
	}
	time.Sleep(1500 * time.Millisecond) // producers redirect and carry on
	close(r.stop)
	r.running.Wait()
	for _, lane := range r.producers {
		outage, ok := lane.outage(failed)
		if !ok {
			logProducers(t, r.producers)
			t.Fatalf("lane %s acknowledged nothing after the failure", lane.lane)
		}
		t.Logf("lane %s (a client following the leader): no acknowledgement for %v around the failure", lane.lane, outage)
	}
	return failover
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
