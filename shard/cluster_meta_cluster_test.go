package shard

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// metaNode is one whippet server of an in-process cluster test: a real
// server (front, metadata store, data plane) with a group host on a
// memory net.
type metaNode struct {
	server *Server
	dir    string
}

func startMetaNode(t *testing.T, memory *memoryNet, node, nodes int, dir string) *metaNode {
	t.Helper()
	return startMetaNodeOn(t, node, nodes, dir, func(cluster *Cluster) ClusterTransport {
		return &memoryLink{net: memory, node: node, cluster: cluster}
	})
}

// startMetaNodeOn starts a node whose transport transport builds.
func startMetaNodeOn(t *testing.T, node, nodes int, dir string, transport func(*Cluster) ClusterTransport) *metaNode {
	t.Helper()
	n, err := tryStartMetaNodeOn(t, node, nodes, dir, transport)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// tryStartMetaNodeOn is startMetaNodeOn returning the server's start error
// (a listener that cannot bind, say) instead of failing the test.
func tryStartMetaNodeOn(t *testing.T, node, nodes int, dir string, transport func(*Cluster) ClusterTransport) (*metaNode, error) {
	t.Helper()
	cluster, err := NewCluster(ClusterOptions{Cluster: 77, Replica: node, ReplicaCount: nodes,
		Tick: 2 * time.Millisecond, HeartbeatTimeout: 100 * time.Millisecond, Directory: dir + "/cluster",
		Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	cluster.SetTransport(transport(cluster))
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	server, err := StartServer(ServerOptions{Runtime: Options{CPUs: cpus[:1], Backend: BackendAuto,
		Listen: "127.0.0.1:0"}, DataPath: dir + "/data", Durability: 1, Cluster: cluster, Logger: testLogger(),
		Roster: ClusterConfig{Secret: []byte("a shared secret of at least thirty-two bytes")}})
	if err != nil {
		return nil, err
	}
	return &metaNode{server: server, dir: dir}, nil
}

func (n *metaNode) stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.server.Shutdown(ctx); err != nil {
		t.Logf("shutdown: %v", err)
	}
}

// metaClient speaks the wire protocol to one node.
type metaClient struct {
	t       *testing.T
	conn    net.Conn
	client  wire.Uint128
	session uint64
	request uint64
	reply   []byte
}

func dialMeta(t *testing.T, n *metaNode) *metaClient {
	t.Helper()
	// In a cluster the root user is created through the metadata group, so
	// a fresh node knows it only once the group committed it.
	waitView(t, n, "the root user is replicated", func(v *frontView) bool {
		return v.userByName("iggy") != nil
	})
	conn, err := net.Dial("tcp", n.server.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	c := &metaClient{t: t, conn: conn, client: wire.Uint128{Lo: 9}, reply: make([]byte, 1<<20)}
	login := &wire.LoginRegister{Version: wire.ClientVersion{Protocol: wire.ProtocolVersion, SDKName: "t",
		SDKVersion: "1"}, Username: "iggy", Password: "iggy"}
	frame := make([]byte, wire.RequestBytes(login))
	wire.EncodeRequest(frame, wire.RequestHeader{Client: c.client, Operation: wire.OperationRegister}, login)
	reply, _, err := wire.DecodeReply(exchange(t, conn, frame, c.reply))
	if err != nil || reply.Err() != nil {
		t.Fatalf("login: %v %v", err, reply.Err())
	}
	var session wire.LoginReply
	if err := wire.DecodeAll(&session, reply.Payload); err != nil {
		t.Fatal(err)
	}
	c.session = session.Session
	return c
}

// write sends a metadata write, replaying it while the node answers 58
// (nothing proposed: no primary known yet, or a view change).
func (c *metaClient) write(operation wire.Operation, body wire.Body) wire.Reply {
	c.t.Helper()
	c.request++
	frame := make([]byte, wire.RequestBytes(body))
	wire.EncodeRequest(frame, wire.RequestHeader{Client: c.client, Operation: operation, Session: c.session,
		Request: c.request}, body)
	deadline := time.Now().Add(10 * time.Second)
	for {
		reply, _, err := wire.DecodeReply(exchange(c.t, c.conn, frame, c.reply))
		if err != nil {
			c.t.Fatal(err)
		}
		if !errors.Is(reply.Err(), wire.StatusTransientNotAccepted) || time.Now().After(deadline) {
			return reply
		}
		time.Sleep(10 * time.Millisecond) // the cluster elects a primary in ticks of real time
	}
}

// waitView waits until node's published view satisfies ok.
func waitView(t *testing.T, n *metaNode, what string, ok func(v *frontView) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(n.server.view.Load()) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached in 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// streamTopics describes node's view: stream and topic ids, names and
// partition counts, with creation times, in id order.
func streamTopics(v *frontView) []string {
	var out []string
	for _, stream := range v.streams {
		if stream == nil {
			continue
		}
		out = append(out, stream.Name+"#"+itoa(stream.ID)+"@"+itoa64(stream.CreatedAt))
		for _, topic := range stream.Topics {
			if topic != nil {
				out = append(out, " "+topic.Name+"#"+itoa(topic.ID)+"/"+itoa(uint32(len(topic.Partitions)))+
					"@"+itoa64(topic.CreatedAt))
			}
		}
	}
	return out
}

func itoa(v uint32) string   { return itoa64(uint64(v)) }
func itoa64(v uint64) string { return string(appendUint(nil, v)) }

func appendUint(dst []byte, v uint64) []byte {
	if v >= 10 {
		dst = appendUint(dst, v/10)
	}
	return append(dst, byte('0'+v%10))
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestClusterMetadataReplicates runs three whippet servers joined by the
// metadata group on a memory net: a stream created through one backup and
// a topic through the other are visible on all three with the same ids
// and creation times; with the primary stopped the survivors elect a new
// one and take metadata writes; the stopped node restarts from its disk
// and catches up.
func TestClusterMetadataReplicates(t *testing.T) {
	memory := newMemoryNet(3)
	nodes := make([]*metaNode, 3)
	dirs := make([]string, 3)
	for i := range nodes {
		dirs[i] = t.TempDir()
		nodes[i] = startMetaNode(t, memory, i, 3, dirs[i])
	}
	defer func() {
		for _, n := range nodes {
			if n != nil {
				n.stop(t)
			}
		}
	}()
	reply := dialMeta(t, nodes[1]).write(wire.OperationCreateStream, &wire.CreateStream{Name: "orders"})
	if reply.Err() != nil {
		t.Fatalf("create stream on a backup: %v", reply.Err())
	}
	// A node resolves names against the metadata it has applied: the other
	// backup learns of the stream at its next commit, not at once.
	waitView(t, nodes[2], "node 2 applied the stream", func(v *frontView) bool {
		return len(streamTopics(v)) == 1
	})
	reply = dialMeta(t, nodes[2]).write(wire.OperationCreateTopic, &wire.CreateTopic{Stream: wire.NumericID(0),
		PartitionsCount: 3, Name: "fills"})
	if reply.Err() != nil {
		t.Fatalf("create topic on the other backup: %v", reply.Err())
	}
	reply = dialMeta(t, nodes[0]).write(wire.OperationCreateStream, &wire.CreateStream{Name: "orders"})
	if !errors.Is(reply.Err(), wire.StatusStreamNameAlreadyExists) {
		t.Fatalf("duplicate stream on the primary: %v, want StreamNameAlreadyExists", reply.Err())
	}
	want := streamTopics(nodes[2].server.view.Load())
	if len(want) != 2 {
		t.Fatalf("node 2 shows %v", want)
	}
	for i, n := range nodes {
		waitView(t, n, "node "+itoa(uint32(i))+" shows the stream and topic", func(v *frontView) bool {
			return sameStrings(streamTopics(v), want)
		})
	}
	t.Logf("replicated: %v", want)
	root := nodes[0].server.view.Load().user(0).PasswordHash
	for i, n := range nodes {
		if hash := n.server.view.Load().user(0).PasswordHash; hash != root || !checkPassword("iggy", hash) {
			t.Fatalf("node %d's bootstrap root hash %q differs from node 0's %q", i, hash, root)
		}
	}

	primary, ok := nodes[0].server.options.Cluster.MetadataPrimary()
	if !ok {
		t.Fatal("node 0 knows no metadata primary")
	}
	survivor := (primary + 1) % 3
	t.Logf("stopping the metadata primary, node %d", primary)
	nodes[primary].stop(t)
	memory.setUp(primary, false)
	nodes[primary] = nil
	started := time.Now()
	reply = dialMeta(t, nodes[survivor]).write(wire.OperationCreateStream, &wire.CreateStream{Name: "after-failover"})
	if reply.Err() != nil {
		t.Fatalf("create stream after the primary stopped: %v", reply.Err())
	}
	t.Logf("first metadata write after the primary stopped took %v", time.Since(started))
	want = streamTopics(nodes[survivor].server.view.Load())
	if len(want) != 3 {
		t.Fatalf("node %d shows %v", survivor, want)
	}
	other := (primary + 2) % 3
	waitView(t, nodes[other], "the other survivor follows the new primary", func(v *frontView) bool {
		return sameStrings(streamTopics(v), want)
	})

	nodes[primary] = startMetaNode(t, memory, primary, 3, dirs[primary])
	waitView(t, nodes[primary], "the restarted node catches up", func(v *frontView) bool {
		return sameStrings(streamTopics(v), want)
	})
	reply = dialMeta(t, nodes[primary]).write(wire.OperationDeleteStream, &wire.StreamTarget{Stream: wire.NumericID(0)})
	if reply.Err() != nil {
		t.Fatalf("delete stream through the restarted node: %v", reply.Err())
	}
	for i, n := range nodes {
		waitView(t, n, "node "+itoa(uint32(i))+" deleted the stream", func(v *frontView) bool {
			return len(streamTopics(v)) == 1
		})
	}
}

// TestClusterMetadataStateTransfer: a node whose data directory was wiped
// rejoins after more metadata ops than a journal holds committed without
// it, so it catches up by state transfer: the installed state equals the
// others' and the data plane follows it (the topic's partitions exist on
// disk again).
func TestClusterMetadataStateTransfer(t *testing.T) {
	memory, nodes := startMetaNodes(t)
	primary, ok := nodes[0].server.options.Cluster.MetadataPrimary()
	for !ok {
		time.Sleep(5 * time.Millisecond) // the first view settles in ticks of real time
		primary, ok = nodes[0].server.options.Cluster.MetadataPrimary()
	}
	lagging := (primary + 1) % 3
	client := dialMeta(t, nodes[primary])
	if reply := client.write(wire.OperationCreateStream, &wire.CreateStream{Name: "kept"}); reply.Err() != nil {
		t.Fatalf("create stream: %v", reply.Err())
	}
	nodes[lagging].stop(t)
	memory.setUp(lagging, false)
	nodes[lagging] = nil
	reply := client.write(wire.OperationCreateTopic, &wire.CreateTopic{Stream: wire.NumericID(0), PartitionsCount: 2,
		Name: "moved"})
	if reply.Err() != nil {
		t.Fatalf("create topic: %v", reply.Err())
	}
	for i := range clusterJournalSlotCount + 8 {
		reply := client.write(wire.OperationCreateStream, &wire.CreateStream{Name: "s" + itoa(uint32(i))})
		if reply.Err() != nil {
			t.Fatalf("create stream %d: %v", i, reply.Err())
		}
		if i%2 == 1 {
			client.write(wire.OperationDeleteStream, &wire.StreamTarget{Stream: wire.NamedID("s" + itoa(uint32(i)))})
		}
	}
	want := streamTopics(nodes[primary].server.view.Load())
	dir := t.TempDir()
	nodes[lagging] = startMetaNode(t, memory, lagging, 3, dir)
	waitView(t, nodes[lagging], "the wiped node installs the state", func(v *frontView) bool {
		return sameStrings(streamTopics(v), want)
	})
	// Only an installed transfer writes a snapshot this early (a store
	// writes one every 1024 records).
	waitFile(t, dir+"/data/metadata/snapshot")
	for partition := range 2 {
		waitFile(t, dir+"/data/streams/0/topics/0/partitions/"+itoa(uint32(partition)))
	}
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not exist", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestClusterMetadataOverClusterNet: the same replication over the real
// replica transport (TCP on loopback, authenticated links): a stream
// created through each node in turn shows on all three with the same ids.
func TestClusterMetadataOverClusterNet(t *testing.T) {
	secret := []byte("a shared secret of at least thirty-two bytes")
	var nodes []*metaNode
	startOnFreeAddresses(t, 3, func(addresses []string) error {
		nodes = make([]*metaNode, 3)
		for i := range nodes {
			n, err := tryStartMetaNodeOn(t, i, 3, t.TempDir(), func(cluster *Cluster) ClusterTransport {
				link, err := NewClusterNet(ClusterNetOptions{Cluster: 77, Replica: i, ReplicaAddresses: addresses,
					Secret: secret, Deliver: cluster.Deliver, Logger: testLogger()})
				if err != nil {
					t.Fatal(err)
				}
				return link
			})
			if err != nil {
				for _, started := range nodes[:i] {
					started.stop(t)
				}
				return err
			}
			nodes[i] = n
		}
		return nil
	})
	defer func() {
		for _, n := range nodes {
			n.stop(t)
		}
	}()
	for i, n := range nodes {
		reply := dialMeta(t, n).write(wire.OperationCreateStream, &wire.CreateStream{Name: "through-" + itoa(uint32(i))})
		if reply.Err() != nil {
			t.Fatalf("create stream through node %d: %v", i, reply.Err())
		}
	}
	want := streamTopics(nodes[2].server.view.Load())
	if len(want) != 3 {
		t.Fatalf("node 2 shows %v", want)
	}
	for i, n := range nodes {
		waitView(t, n, "node "+itoa(uint32(i))+" shows the three streams", func(v *frontView) bool {
			return sameStrings(streamTopics(v), want)
		})
	}
}

// TestClusterMetadataConcurrentWrites: clients on the three nodes create
// streams at the same time, all also racing for one shared name: the
// group orders the writes, so exactly one creates the shared stream, the
// others get StreamNameAlreadyExists, and every node ends with the same
// streams under the same ids.
func TestClusterMetadataConcurrentWrites(t *testing.T) {
	_, nodes := startMetaNodes(t)
	const perNode = 10
	clients := make([]*metaClient, 3)
	for i, n := range nodes {
		clients[i] = dialMeta(t, n)
	}
	type outcome struct {
		node    int
		created int
		shared  error
	}
	outcomes := make(chan outcome, 3)
	for i, c := range clients {
		go func() {
			result := outcome{node: i}
			for k := range perNode {
				if k == perNode/2 {
					reply := c.write(wire.OperationCreateStream, &wire.CreateStream{Name: "shared"})
					result.shared = reply.Err()
				}
				name := "n" + itoa(uint32(i)) + "-" + itoa(uint32(k))
				if reply := c.write(wire.OperationCreateStream, &wire.CreateStream{Name: name}); reply.Err() == nil {
					result.created++
				}
			}
			outcomes <- result
		}()
	}
	winners := 0
	for range clients {
		result := <-outcomes
		if result.created != perNode {
			t.Fatalf("node %d created %d of its %d streams", result.node, result.created, perNode)
		}
		switch {
		case result.shared == nil:
			winners++
		case !errors.Is(result.shared, wire.StatusStreamNameAlreadyExists):
			t.Fatalf("node %d's shared create: %v", result.node, result.shared)
		}
	}
	if winners != 1 {
		t.Fatalf("%d nodes created the shared stream, want exactly 1", winners)
	}
	waitView(t, nodes[0], "node 0 holds every stream", func(v *frontView) bool {
		return len(streamTopics(v)) == 3*perNode+1
	})
	want := streamTopics(nodes[0].server.view.Load())
	for i, n := range nodes[1:] {
		waitView(t, n, "node "+itoa(uint32(i+1))+" holds the same streams", func(v *frontView) bool {
			return sameStrings(streamTopics(v), want)
		})
	}
}

// startMetaNodes starts three metadata nodes on one in-memory network;
// the nodes still in the slice (a test may stop one and set it nil, or
// replace it) stop when the test ends.
func startMetaNodes(t *testing.T) (*memoryNet, []*metaNode) {
	t.Helper()
	memory := newMemoryNet(3)
	nodes := make([]*metaNode, 3)
	for i := range nodes {
		nodes[i] = startMetaNode(t, memory, i, 3, t.TempDir())
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			if n != nil {
				n.stop(t)
			}
		}
	})
	return memory, nodes
}
