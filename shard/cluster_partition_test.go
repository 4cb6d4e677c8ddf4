package shard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// clusterTestNode is one whippet server of an in-process cluster.
type clusterTestNode struct {
	server *Server
	dir    string
	conn   net.Conn
	client wire.Uint128
	sess   uint64
	next   uint64
	reply  []byte
}

// startClusterServer runs node of a cluster of nodes on dir, joined to
// the others by transport (a memoryNet link, or ClusterNet).
func startClusterServer(t *testing.T, node, nodes int, dir string, link func(*Cluster) ClusterTransport) *clusterTestNode {
	t.Helper()
	return startClusterServerSplit(t, node, nodes, dir, dir+"/cluster", link)
}

// startClusterServerSplit is startClusterServer with the group journals
// in clusterDir, apart from the data directory. The node logs in at first
// use, once every node of the test runs.
func startClusterServerSplit(t *testing.T, node, nodes int, dataDir, clusterDir string, link func(*Cluster) ClusterTransport) *clusterTestNode {
	t.Helper()
	n, err := tryStartClusterServer(t, node, nodes, dataDir, clusterDir, link)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// tryStartClusterServer is startClusterServerSplit returning the server's
// start error (a listener that cannot bind, say) instead of failing the
// test.
func tryStartClusterServer(t *testing.T, node, nodes int, dataDir, clusterDir string,
	link func(*Cluster) ClusterTransport) (*clusterTestNode, error) {
	t.Helper()
	cluster, err := NewCluster(ClusterOptions{Cluster: 99, Replica: node, ReplicaCount: nodes,
		Tick: 2 * time.Millisecond, HeartbeatTimeout: 100 * time.Millisecond, Directory: clusterDir,
		Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	cluster.SetTransport(link(cluster))
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	server, err := StartServer(ServerOptions{Runtime: Options{CPUs: cpus[:min(2, len(cpus))], Unpinned: true,
		Listen: "127.0.0.1:0", Logger: testLogger()}, DataPath: dataDir, Durability: 0, Cluster: cluster,
		Logger: testLogger(), CacheBytes: dataTestCacheBytes})
	if err != nil {
		return nil, err
	}
	n := &clusterTestNode{server: server, dir: dataDir, client: wire.Uint128{Lo: uint64(node + 1)}, reply: make([]byte, 8<<20)}
	t.Cleanup(n.stop)
	return n, nil
}

func (n *clusterTestNode) stop() {
	if n.server == nil {
		return
	}
	if n.conn != nil {
		n.conn.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = n.server.Shutdown(ctx) // stopping is the point; a slow close changes nothing
	n.server = nil
}

// login logs in as the root user, retrying while the cluster has not
// created it yet (a fresh cluster creates it through the metadata group
// once a quorum of nodes runs).
func (n *clusterTestNode) login(t *testing.T) {
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		err := n.loginOnce(t)
		if errors.Is(err, wire.StatusInvalidCredentials) && time.Now().Before(deadline) {
			continue
		}
		if err != nil {
			t.Fatalf("login: %v", err)
		}
		return
	}
}

func (n *clusterTestNode) loginOnce(t *testing.T) error {
	conn, err := net.Dial("tcp", n.server.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	login := &wire.LoginRegister{Version: wire.ClientVersion{Protocol: wire.ProtocolVersion, SDKName: "t", SDKVersion: "1"},
		Username: "iggy", Password: "iggy"}
	frame := make([]byte, wire.RequestBytes(login))
	wire.EncodeRequest(frame, wire.RequestHeader{Client: n.client, Operation: wire.OperationRegister}, login)
	decoded, _, err := wire.DecodeReply(exchange(t, conn, frame, n.reply))
	if err == nil {
		err = decoded.Err()
	}
	if err != nil {
		conn.Close()
		return err
	}
	var session wire.LoginReply
	if err := wire.DecodeAll(&session, decoded.Payload); err != nil {
		t.Fatal(err)
	}
	n.conn, n.sess = conn, session.Session
	return nil
}

// request sends one request and returns its reply.
func (n *clusterTestNode) request(t *testing.T, operation wire.Operation, code wire.Code, body wire.Body) wire.Reply {
	if n.conn == nil {
		n.login(t) // first use: by now every node of the test runs
	}
	n.next++
	h := wire.RequestHeader{Client: n.client, Operation: operation, Code: code, Session: n.sess, Request: n.next}
	frame := make([]byte, wire.RequestBytes(body))
	wire.EncodeRequest(frame, h, body)
	decoded, _, err := wire.DecodeReply(exchange(t, n.conn, frame, n.reply))
	if err != nil {
		t.Fatal(err)
	}
	return decoded
}

func (n *clusterTestNode) setup(t *testing.T, partitions uint32) {
	n.write(t, wire.OperationCreateStream, &wire.CreateStream{Name: "s"})
	n.write(t, wire.OperationCreateTopic, &wire.CreateTopic{Stream: wire.NumericID(0), PartitionsCount: partitions, Name: "t"})
}

// write runs a metadata write, retrying while the metadata group cannot
// take it yet (58: its links are still coming up).
func (n *clusterTestNode) write(t *testing.T, operation wire.Operation, body wire.Body) {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r := n.request(t, operation, 0, body)
		if errors.Is(r.Err(), wire.StatusTransientNotAccepted) && time.Now().Before(deadline) {
			continue
		}
		if r.Err() != nil {
			t.Fatalf("metadata write %v: %v", operation, r.Err())
		}
		return
	}
}

// send sends payloads to partition, retrying TransientNotAccepted, and
// returns the base offset.
func (n *clusterTestNode) send(t *testing.T, partition uint32, payloads ...string) uint64 {
	messages := make([]wire.OutgoingMessage, len(payloads))
	for i, payload := range payloads {
		messages[i] = wire.OutgoingMessage{Payload: []byte(payload)}
	}
	batch := make([]byte, wire.BatchBytes(messages))
	wire.EncodeBatch(batch, messages)
	body := &wire.SendMessages{Stream: wire.NumericID(0), Topic: wire.NumericID(0),
		Partitioning: wire.PartitionID(partition), MessagesCount: uint32(len(messages)), Batch: batch}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		r := n.request(t, wire.OperationSendMessages, 0, body)
		if r.Header.Status == wire.StatusTransientNotAccepted || r.Result == wire.StatusTransientNotAccepted {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		if r.Err() != nil {
			t.Fatalf("send: %v", r.Err())
		}
		var confirmations wire.SendConfirmations
		if err := wire.DecodeAll(&confirmations, r.Payload); err != nil || len(confirmations) != 1 {
			t.Fatalf("send confirmation: %v %d", err, len(confirmations))
		}
		return confirmations[0].BaseOffset
	}
	t.Fatal("send never accepted")
	return 0
}

// poll returns every payload of partition from offset 0 with its offset,
// and false while the partition is not there yet.
func (n *clusterTestNode) poll(t *testing.T, partition uint32) ([]string, bool) {
	body := &wire.PollMessages{Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(1)},
		Stream: wire.NumericID(0), Topic: wire.NumericID(0), Partition: wire.PartitionOf(partition),
		Strategy: wire.Strategy{Kind: wire.StrategyOffset}, Count: 100000}
	r := n.request(t, wire.OperationNonReplicated, wire.CodePollMessages, body)
	switch r.Header.Status {
	case wire.StatusStreamIDNotFound, wire.StatusTopicIDNotFound, wire.StatusPartitionNotFound:
		return nil, false
	}
	if r.Err() != nil {
		t.Fatalf("poll: %v", r.Err())
	}
	var polled wire.PolledMessages
	if err := wire.DecodeAll(&polled, r.Payload); err != nil {
		t.Fatal(err)
	}
	var payloads []string
	it := polled.Messages()
	for message, ok := it.Next(); ok; message, ok = it.Next() {
		payloads = append(payloads, fmt.Sprintf("%d:%s", message.Offset, message.Payload))
	}
	return payloads, true
}

// waitPoll polls partition on n until it holds want messages.
func (n *clusterTestNode) waitPoll(t *testing.T, partition uint32, want int) []string {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		got, found := n.poll(t, partition)
		if found && len(got) >= want || time.Now().After(deadline) {
			return got
		}
	}
}

// memoryTransport returns link makers for the nodes of a memoryNet.
func memoryTransport(net *memoryNet, node int) func(*Cluster) ClusterTransport {
	return func(c *Cluster) ClusterTransport { return &memoryLink{net: net, node: node, cluster: c} }
}

// TestClusterPartitionReplicates checks replicated partitions end to end on
// three servers in one process: sends to each partition through every node
// (the partitions' primaries differ, so some go through the primary and
// some are forwarded) leave every node's copy with the same offsets and
// payloads; the primary of partition 0 stops, the others elect a new one
// and take more sends; the stopped node restarts from its data and catches
// up.
func TestClusterPartitionReplicates(t *testing.T) {
	const partitions = 3
	memory, nodes := startMemoryCluster(t)
	nodes[1].setup(t, partitions) // through the metadata group: every node creates them
	checkSame(t, nodes, partitions, 0)
	for round := range 4 {
		for p := range uint32(partitions) {
			for i, n := range nodes {
				n.send(t, p, fmt.Sprintf("p%d-r%d-n%d-a", p, round, i), fmt.Sprintf("p%d-r%d-n%d-b", p, round, i))
			}
		}
	}
	checkSame(t, nodes, partitions, 24)
	key := PartitionKey{Stream: 0, Topic: 0, Partition: 0}
	primary := memory.primary(partitionGroup(key))
	memory.setUp(primary, false)
	nodes[primary].stop()
	stoppedDir := nodes[primary].dir
	survivors := []*clusterTestNode{nodes[(primary+1)%3], nodes[(primary+2)%3]}
	started := time.Now()
	survivors[0].send(t, 0, "after-failover")
	t.Logf("first send after the primary stopped took %v", time.Since(started))
	for round := range 3 {
		for i, n := range survivors {
			n.send(t, 0, fmt.Sprintf("after-r%d-s%d", round, i))
		}
	}
	checkSame(t, survivors, 1, 31)
	nodes[primary] = startClusterServer(t, primary, 3, stoppedDir, memoryTransport(memory, primary))
	survivors[1].send(t, 0, "after-restart")
	checkSame(t, nodes, 1, 32)
}

// checkSame waits until every node's partitions below count hold want
// messages and checks they hold the same offsets and payloads.
func checkSame(t *testing.T, nodes []*clusterTestNode, partitions uint32, want int) {
	t.Helper()
	for p := range partitions {
		first := nodes[0].waitPoll(t, p, want)
		if len(first) != want {
			t.Fatalf("partition %d holds %d messages, want %d", p, len(first), want)
		}
		for i, n := range nodes[1:] {
			got := n.waitPoll(t, p, want)
			if fmt.Sprint(got) != fmt.Sprint(first) {
				t.Fatalf("partition %d: node %d holds %v, first node %v", p, i+1, got, first)
			}
		}
	}
}

// TestClusterPartitionStateTransfer checks that a node too far behind for
// journal repair catches up by state transfer: a backup stops, the
// partition takes more ops than a journal holds, and the backup restarts,
// once on its own data and once on a wiped data directory.
func TestClusterPartitionStateTransfer(t *testing.T) {
	if testing.Short() {
		t.Skip("two restarts behind a long log take seconds")
	}
	memory, nodes := startMemoryCluster(t)
	nodes[0].setup(t, 1)
	checkSame(t, nodes, 1, 0)
	key := PartitionKey{Stream: 0, Topic: 0, Partition: 0}
	sent := 0
	for _, wipe := range []bool{false, true} {
		victim := (memory.primary(partitionGroup(key)) + 1) % 3
		if victim == memory.primary(0) {
			victim = (victim + 1) % 3 // keep the metadata group's primary
		}
		memory.setUp(victim, false)
		nodes[victim].stop()
		if wipe {
			if err := os.RemoveAll(nodes[victim].dir); err != nil {
				t.Fatal(err)
			}
		}
		others := []*clusterTestNode{nodes[(victim+1)%3], nodes[(victim+2)%3]}
		for i := range 3 * clusterJournalSlotCount {
			others[i%2].send(t, 0, fmt.Sprintf("m%d", sent))
			sent++
		}
		nodes[victim] = startClusterServer(t, victim, 3, nodes[victim].dir, memoryTransport(memory, victim))
		others[0].send(t, 0, fmt.Sprintf("m%d", sent))
		sent++
		checkSame(t, nodes, 1, sent)
	}
}

// netTransport returns link makers that join the nodes with ClusterNet on
// loopback addresses.
func netTransport(t *testing.T, addresses []string, node int) func(*Cluster) ClusterTransport {
	return func(c *Cluster) ClusterTransport {
		transport, err := NewClusterNet(ClusterNetOptions{Cluster: c.Options().Cluster, Replica: node,
			ReplicaAddresses: addresses, Secret: []byte("cluster-partition-test-secret-0123456789"),
			Deliver: c.Deliver, Logger: testLogger()})
		if err != nil {
			t.Fatal(err)
		}
		return transport
	}
}

// TestClusterPartitionOverClusterNet runs the replication of
// TestClusterPartitionReplicates over the real replica transport, with
// many sends in flight from every node at once.
func TestClusterPartitionOverClusterNet(t *testing.T) {
	var nodes []*clusterTestNode
	startOnFreeAddresses(t, 3, func(addresses []string) error {
		base := t.TempDir()
		nodes = make([]*clusterTestNode, 3)
		for i := range nodes {
			dir := fmt.Sprintf("%s/n%d", base, i)
			n, err := tryStartClusterServer(t, i, 3, dir, dir+"/cluster", netTransport(t, addresses, i))
			if err != nil {
				for _, started := range nodes[:i] {
					started.stop()
				}
				return err
			}
			nodes[i] = n
		}
		return nil
	})
	nodes[0].setup(t, 2)
	checkSame(t, nodes, 2, 0)
	rounds := 200
	if testing.Short() {
		rounds = 40
	}
	for round := range rounds {
		for p := range uint32(2) {
			for i, n := range nodes {
				n.send(t, p, fmt.Sprintf("p%d-r%d-n%d", p, round, i))
			}
		}
	}
	checkSame(t, nodes, 2, 3*rounds)
}

// TestClusterPartitionDeleteRecreate checks that deleting a topic closes
// its partitions' groups and removes their journals on every node, and
// that a topic created again in its place replicates from a fresh log.
func TestClusterPartitionDeleteRecreate(t *testing.T) {
	_, nodes := startMemoryCluster(t)
	nodes[0].setup(t, 1)
	checkSame(t, nodes, 1, 0)
	nodes[1].send(t, 0, "before")
	checkSame(t, nodes, 1, 1)
	nodes[0].write(t, wire.OperationDeleteTopic, &wire.DeleteTopic{Stream: wire.NumericID(0), Topic: wire.NumericID(0)})
	waitJournalsGone(t, nodes, PartitionKey{}, 10*time.Second)
	nodes[2].write(t, wire.OperationCreateTopic, &wire.CreateTopic{Stream: wire.NumericID(0), PartitionsCount: 1, Name: "t"})
	checkSame(t, nodes, 1, 0)
	if base := nodes[2].send(t, 0, "after"); base != 0 {
		t.Fatalf("the recreated partition took its first message at offset %d", base)
	}
	checkSame(t, nodes, 1, 1)
}

// waitJournalsGone waits up to within for every node to have removed the
// journal of key's partition group (its partition was deleted).
func waitJournalsGone(t *testing.T, nodes []*clusterTestNode, key PartitionKey, within time.Duration) {
	t.Helper()
	journal := fmt.Sprintf("%x", partitionGroup(key))
	for i, n := range nodes {
		path := n.dir + "/cluster/" + journal
		for deadline := time.Now().Add(within); ; time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(path); os.IsNotExist(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d still holds the deleted partition's journal %s", i, path)
			}
		}
	}
}

// startMemoryCluster starts three in-process cluster nodes joined by one
// in-memory network, each under its own directory.
func startMemoryCluster(t *testing.T) (*memoryNet, []*clusterTestNode) {
	t.Helper()
	memory := newMemoryNet(3)
	base := t.TempDir()
	nodes := make([]*clusterTestNode, 3)
	for i := range nodes {
		nodes[i] = startClusterServer(t, i, 3, fmt.Sprintf("%s/n%d", base, i), memoryTransport(memory, i))
	}
	return memory, nodes
}
