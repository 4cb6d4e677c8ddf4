package shard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/whippetio/whippet/vsr"
)

// memoryNet joins the nodes of a test cluster in process: Send copies the
// message into the target node's queue, which the target's shard 0 drains
// from a fast timer into Cluster.Deliver (which routes it to its group's
// shard), as ClusterNet does. A stopped node's queue drops everything.
type memoryNet struct {
	mu     sync.Mutex
	queues [][]memoryPacket
	up     []bool
	// primaries: the node that last sent a Commit (only a primary does) of
	// each group, in the highest view seen.
	primaries map[uint64][2]uint32
}

type memoryPacket struct {
	from    int
	message []byte
}

// memoryLink is one node's end of a memoryNet.
type memoryLink struct {
	net     *memoryNet
	node    int
	cluster *Cluster
}

func newMemoryNet(nodes int) *memoryNet {
	return &memoryNet{queues: make([][]memoryPacket, nodes), up: make([]bool, nodes),
		primaries: make(map[uint64][2]uint32)}
}

func (l *memoryLink) Send(_ *Shard, to int, message []byte) bool {
	n := l.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.up[to] || !n.up[l.node] || len(n.queues[to]) >= 4096 {
		return false
	}
	n.queues[to] = append(n.queues[to], memoryPacket{from: l.node, message: slices.Clone(message)})
	var h vsr.Header
	if vsr.DecodeMessage(message, &h) == nil && h.Command == vsr.CommandCommit {
		if seen, ok := n.primaries[h.Group]; !ok || h.View >= seen[1] {
			n.primaries[h.Group] = [2]uint32{uint32(l.node), h.View}
		}
	}
	return true
}

// primary returns the node that heartbeats group in the highest view.
func (n *memoryNet) primary(group uint64) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return int(n.primaries[group][0])
}

func (l *memoryLink) Install(options Options) Options {
	onStart := options.OnStart
	options.OnStart = func(sh *Shard) {
		if onStart != nil {
			onStart(sh)
		}
		if sh.ID() != 0 {
			return
		}
		l.net.mu.Lock()
		l.net.up[l.node] = true
		l.net.mu.Unlock()
		_, err := sh.Every(200*time.Microsecond, func(time.Time) {
			l.net.mu.Lock()
			packets := l.net.queues[l.node]
			l.net.queues[l.node] = nil
			l.net.mu.Unlock()
			for _, packet := range packets {
				l.cluster.Deliver(sh, packet.from, packet.message)
			}
		})
		if err != nil {
			panic("test timer refused")
		}
	}
	return options
}

func (n *memoryNet) setUp(node int, up bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.up[node] = up
	n.queues[node] = nil
}

// testApplication appends each entry's body to a list and records the op
// it applied as its application record; it completes this node's requests
// by sending the op they committed at on the request's Context channel.
type testApplication struct {
	mu        sync.Mutex
	applied   uint64
	recovered uint64 // the op Recover found: entries starts after it
	entries   []string
}

func (a *testApplication) Recover(_ *ClusterGroup, record []byte) (uint64, error) {
	if len(record) == 8 {
		a.applied = binary.LittleEndian.Uint64(record)
		a.recovered = a.applied
	}
	return a.applied, nil
}

func (a *testApplication) Apply(g *ClusterGroup, entries []vsr.Entry, done func()) {
	a.mu.Lock()
	for i := range entries {
		entry := &entries[i]
		if entry.Op != a.applied+1 {
			panic(fmt.Sprintf("applied %d, then %d", a.applied, entry.Op))
		}
		a.applied = entry.Op
		a.entries = append(a.entries, string(entry.Body))
		if req := g.Claim(entry); req != nil {
			req.Context.(chan uint64) <- entry.Op
		}
	}
	applied := a.applied
	a.mu.Unlock()
	g.Record(binary.LittleEndian.AppendUint64(nil, applied))
	done()
}

func (a *testApplication) Snapshot(dst []byte) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	dst = binary.LittleEndian.AppendUint64(dst, a.applied)
	for _, entry := range a.entries {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(entry)))
		dst = append(dst, entry...)
	}
	return dst
}

func (a *testApplication) Restore(_ *ClusterGroup, snapshot []byte, op uint64, done func(error)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.applied = binary.LittleEndian.Uint64(snapshot)
	a.entries = a.entries[:0]
	for rest := snapshot[8:]; len(rest) > 0; {
		size := binary.LittleEndian.Uint32(rest)
		a.entries = append(a.entries, string(rest[4:4+size]))
		rest = rest[4+size:]
	}
	if a.applied != op {
		done(fmt.Errorf("snapshot of op %d named %d", a.applied, op))
		return
	}
	done(nil)
}

func (a *testApplication) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.entries)
}

// hostNode is one node of a host test: a runtime with a data plane (whose
// storage the journals use) and a group host on the memory net.
type hostNode struct {
	h       *dataHarness
	cluster *Cluster
	app     *testApplication
	dir     string
}

func startHostNode(t *testing.T, net *memoryNet, node, nodes int, dir string, group uint64) *hostNode {
	cluster, err := NewCluster(ClusterOptions{Cluster: 77, Replica: node, ReplicaCount: nodes,
		Tick: 2 * time.Millisecond, HeartbeatTimeout: 100 * time.Millisecond, Directory: dir + "/cluster",
		Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	cluster.SetTransport(&memoryLink{net: net, node: node, cluster: cluster})
	n := &hostNode{cluster: cluster, app: &testApplication{}, dir: dir}
	n.h = startClusterData(t, cluster, DataOptions{Directory: dir + "/data"}, func(ds *DataShard) {
		if ds.Shard().ID() != groupShard(group, len(ds.Shard().runtime.shards)) {
			return
		}
		cluster.Local(ds.Shard()).Open(GroupConfig{Group: group, Application: n.app, Sync: true},
			func(_ *ClusterGroup, err error) {
				if err != nil {
					panic(err.Error())
				}
			})
	})
	return n
}

// startClusterData is startDataWith with the group host installed around
// the data plane.
func startClusterData(t testing.TB, cluster *Cluster, options DataOptions, onStart func(ds *DataShard)) *dataHarness {
	t.Helper()
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	cpus = cpus[:min(len(cpus), 2)]
	options.Logger = testLogger()
	options.CacheBytes = dataTestCacheBytes
	data, err := NewData(options)
	if err != nil {
		t.Fatal(err)
	}
	h := &dataHarness{t: t, data: data, inject: make([]chan func(*DataShard), len(cpus))}
	for index := range h.inject {
		h.inject[index] = make(chan func(*DataShard), 1024)
	}
	runtimeOptions := data.Install(Options{CPUs: cpus, Unpinned: true, Logger: options.Logger, OnStart: func(sh *Shard) {
		ds, queue := data.Local(sh), h.inject[sh.ID()]
		if onStart != nil {
			onStart(ds)
		}
		_, err := sh.Every(dataInjectPeriod, func(time.Time) {
			for range len(queue) {
				(<-queue)(ds)
			}
		})
		if err != nil {
			panic("test timer refused")
		}
	}})
	h.rt, err = Start(cluster.Install(runtimeOptions, data))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.stop)
	return h
}

// waitOpen waits until the node's group is open (recovered).
func (n *hostNode) waitOpen(t *testing.T, group uint64) {
	shard := groupShard(group, n.h.shardCount())
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		open := false
		n.h.on(shard, func(ds *DataShard) { open = n.cluster.Local(ds.Shard()).Group(group) != nil })
		if open {
			return
		}
	}
	t.Fatal("the group did not open")
}

// submit proposes body from node through the group and waits for it to
// apply there; it retries while the group does not accept it.
func (n *hostNode) submit(t *testing.T, group uint64, body string) uint64 {
	shard := groupShard(group, n.h.shardCount())
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		applied := make(chan uint64, 1)
		var submitErr error
		n.h.on(shard, func(ds *DataShard) {
			g := n.cluster.Local(ds.Shard()).Group(group)
			if g == nil {
				submitErr = ErrClusterNotAccepted
				return
			}
			message := make([]byte, vsr.HeaderBytes+len(body))
			copy(message[vsr.HeaderBytes:], body)
			submitErr = g.Submit(&ClusterRequest{Operation: 1, Message: message, Context: applied})
		})
		if submitErr != nil {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		select {
		case op := <-applied:
			return op
		case <-time.After(20 * time.Second):
			t.Fatalf("request %q never applied", body)
		}
	}
	t.Fatalf("request %q never accepted", body)
	return 0
}

// hostGroup is a partition group whose owner is shard 1 of two, so that
// messages arriving on shard 0 cross to it.
func hostGroup(t *testing.T) uint64 {
	for partition := uint32(0); partition < 100; partition++ {
		key := PartitionKey{Stream: 1, Topic: 1, Partition: partition}
		if OwnerOf(key, 2) == 1 {
			return clusterPartitionGroupBit | key.Namespace()
		}
	}
	t.Fatal("no partition owned by shard 1")
	return 0
}

func waitEntries(t *testing.T, nodes []*hostNode, want int) [][]string {
	deadline := time.Now().Add(20 * time.Second)
	for {
		lists := make([][]string, len(nodes))
		done := true
		for i, n := range nodes {
			if n == nil {
				continue
			}
			lists[i] = n.app.list()
			done = done && len(lists[i]) >= want
		}
		if done {
			return lists
		}
		if time.Now().After(deadline) {
			for i, list := range lists {
				t.Logf("node %d applied %d", i, len(list))
			}
			t.Fatalf("entries did not reach %d on every node", want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestClusterHostReplicates checks the group host end to end on three
// runtimes joined by an in-memory transport: requests proposed on the
// primary and forwarded from backups apply on every node in one order, each
// completing once on the node that made it; the primary's runtime stops, the
// others elect a new primary and go on; the stopped node restarts from its
// journal and catches up.
func TestClusterHostReplicates(t *testing.T) {
	group := hostGroup(t)
	net, nodes := startHostNodes(t, group)
	for round := range 5 {
		for i, n := range nodes {
			n.submit(t, group, fmt.Sprintf("r%d-n%d", round, i))
		}
	}
	lists := waitEntries(t, nodes, 15)
	for i := range lists {
		if !slices.Equal(lists[i], lists[0]) {
			t.Fatalf("node %d applied %v, node 0 %v", i, lists[i], lists[0])
		}
	}
	primary := int(group % 3) // view 0
	net.setUp(primary, false)
	nodes[primary].h.stop()
	stopped := nodes[primary]
	nodes[primary] = nil
	for round := range 3 {
		for i, n := range nodes {
			if n != nil {
				n.submit(t, group, fmt.Sprintf("after-r%d-n%d", round, i))
			}
		}
	}
	restarted := startHostNode(t, net, primary, 3, stopped.dir, group)
	nodes[primary] = restarted
	restarted.waitOpen(t, group)
	want := waitEntries(t, []*hostNode{nodes[(primary+1)%3]}, 21)[0][:21]
	from := int(restarted.app.recovered)
	if from < 15 {
		t.Fatalf("the restarted node recovered at op %d, it had applied 15", from)
	}
	got := waitEntries(t, []*hostNode{restarted}, 21-from)[0]
	if !slices.Equal(got[:21-from], want[from:]) {
		t.Fatalf("the restarted node applied %v after op %d, want %v", got, from, want[from:])
	}

}

// TestClusterHostRefusesAfterStall: a node whose shard did not run for
// longer than a request's lifetime (a SIGSTOPped process; here its thread
// is held) refuses the requests it reads right after: their clients sent
// them during the stall and gave up, so proposing them now would land them
// long after, out of order with what those clients sent since. The refusal
// lasts a lifetime after a tick noticed the stall; then requests go through.
func TestClusterHostRefusesAfterStall(t *testing.T) {
	group := hostGroup(t)
	_, nodes := startHostNodes(t, group)
	for i, n := range nodes {
		n.submit(t, group, fmt.Sprintf("before-n%d", i))
	}
	for i, n := range nodes {
		shard := groupShard(group, n.h.shardCount())
		lifetime := n.cluster.requestLifetime
		submit := func(ds *DataShard) error {
			message := make([]byte, vsr.HeaderBytes+len("stale"))
			copy(message[vsr.HeaderBytes:], "stale")
			return n.cluster.Local(ds.Shard()).Group(group).Submit(&ClusterRequest{Operation: 1, Message: message,
				Context: make(chan uint64, 1)})
		}
		var stalled, thawing error
		n.h.on(shard, func(ds *DataShard) {
			time.Sleep(lifetime + 50*time.Millisecond) // no tick runs meanwhile
			stalled = submit(ds)
		})
		time.Sleep(20 * time.Millisecond) // ticks run and notice the stall
		n.h.on(shard, func(ds *DataShard) { thawing = submit(ds) })
		if !errors.Is(stalled, ErrClusterNotAccepted) || !errors.Is(thawing, ErrClusterNotAccepted) {
			t.Fatalf("node %d accepted requests right after a stall: %v, then %v", i, stalled, thawing)
		}
		n.submit(t, group, fmt.Sprintf("after-n%d", i))
	}
	lists := waitEntries(t, nodes, 6)
	for i := range lists {
		if !slices.Equal(lists[i], lists[0]) || slices.Contains(lists[i], "stale") {
			t.Fatalf("node %d applied %v, node 0 %v", i, lists[i], lists[0])
		}
	}
}

// startHostNodes starts three host nodes of group on one in-memory
// network, each under its own temporary directory.
func startHostNodes(t *testing.T, group uint64) (*memoryNet, []*hostNode) {
	t.Helper()
	net := newMemoryNet(3)
	base := t.TempDir()
	nodes := make([]*hostNode, 3)
	for i := range nodes {
		nodes[i] = startHostNode(t, net, i, 3, fmt.Sprintf("%s/n%d", base, i), group)
	}
	return net, nodes
}
