package shard

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/vsr"
)

// The replica transport's tests run real runtimes with real sockets on
// 127.0.0.1, on both backends: several ClusterNets in one process, each
// with its own runtime, talking through their replica ports. Messages are
// vsr Requests whose client names the sending node and shard and whose
// request number counts per sending shard, with bodies derived from both,
// so the receiver checks order and content of every message.

const testClusterID = 0x5eed_c1a5

var testSecret = []byte("0123456789abcdef0123456789abcdef-whippet")

// netNode is one node of a test cluster: its transport, its runtime, and
// what it received.
type netNode struct {
	net  *ClusterNet
	rt   *Runtime
	exec []chan func(sh *Shard) // per shard: closures to run on its thread

	mu   sync.Mutex
	got  map[uint64][]netReceived // by sender client id
	bad  []string
	logs *lockedLog
	// incarnation numbers the restarts of a node in a soak.
	incarnation int
}

// lockedLog collects a node's log lines.
type lockedLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, string(p))
	return len(p), nil
}

// count returns how many lines contain text.
func (l *lockedLog) count(text string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	count := 0
	for _, line := range l.lines {
		if strings.Contains(line, text) {
			count++
		}
	}
	return count
}

type netReceived struct {
	from    int
	request uint64
	size    int
	kept    []byte // every 16th message as delivered, not copied: it must stay intact
}

type netNodeConfig struct {
	backend   string
	addresses []string
	replica   int
	secret    []byte
	cluster   uint64
	listen    string
	deliver   func(sh *Shard, from int, msg []byte) // nil: record and check
}

func startNetNode(t testing.TB, config netNodeConfig) *netNode {
	t.Helper()
	node := &netNode{got: map[uint64][]netReceived{}, logs: &lockedLog{}}
	logger := slog.New(slog.NewTextHandler(node.logs, nil))
	cluster := config.cluster
	if cluster == 0 {
		cluster = testClusterID
	}
	secret := config.secret
	if secret == nil {
		secret = testSecret
	}
	deliver := config.deliver
	if deliver == nil {
		deliver = node.deliver
	}
	n, err := NewClusterNet(ClusterNetOptions{
		Cluster: cluster, Replica: config.replica, ReplicaAddresses: config.addresses,
		Secret: secret, Deliver: deliver, Logger: logger, Listen: config.listen,
	})
	if err != nil {
		t.Fatal(err)
	}
	node.net = n
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	cpus = cpus[:min(2, len(cpus))]
	node.exec = make([]chan func(*Shard), len(cpus))
	for i := range node.exec {
		node.exec[i] = make(chan func(*Shard), 64)
	}
	options := n.Install(Options{CPUs: cpus, Backend: config.backend, Unpinned: true,
		OnStart: node.onStart, Logger: logger})
	rt, err := Start(options)
	if err != nil {
		t.Fatal(err)
	}
	node.rt = rt
	t.Cleanup(func() { node.stop(t) })
	return node
}

func (node *netNode) stop(t testing.TB) {
	select {
	case <-node.rt.Done():
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := node.rt.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// onStart lets the test run closures on each shard's thread.
func (node *netNode) onStart(sh *Shard) {
	exec := node.exec[sh.ID()]
	_, err := sh.Every(time.Millisecond, func(time.Time) {
		for range 8 {
			select {
			case fn := <-exec:
				fn(sh)
			default:
				return
			}
		}
	})
	if err != nil {
		panic(err)
	}
}

// on runs fn on shard id's thread and waits for it.
func (node *netNode) on(shard int, fn func(sh *Shard)) {
	done := make(chan struct{})
	node.exec[shard] <- func(sh *Shard) {
		fn(sh)
		close(done)
	}
	<-done
}

func (node *netNode) deliver(sh *Shard, from int, msg []byte) {
	var header vsr.Header
	err := vsr.DecodeMessage(msg, &header)
	node.mu.Lock()
	defer node.mu.Unlock()
	switch {
	case err != nil:
		node.bad = append(node.bad, "undecodable: "+err.Error())
	case !bodyMatches(msg[vsrHeaderBytes:], header.Client, header.Request):
		node.bad = append(node.bad, "body corrupted")
	case int(header.Client>>8)-1 != from:
		node.bad = append(node.bad, "message from the wrong link")
	}
	received := netReceived{from: from, request: header.Request, size: len(msg)}
	if header.Request%16 == 0 {
		received.kept = msg
	}
	node.got[header.Client] = append(node.got[header.Client], received)
}

// received returns a copy of what client (a sending node and shard) got
// through to node.
func (node *netNode) received(client uint64) []netReceived {
	node.mu.Lock()
	defer node.mu.Unlock()
	if len(node.bad) > 0 {
		panic("cluster net test: " + node.bad[0])
	}
	return append([]netReceived(nil), node.got[client]...)
}

// testClient names the sending node and shard in a message's client id.
func testClient(node, shard int) uint64 { return uint64(node+1)<<8 | uint64(shard) }

// testMessage builds a valid vsr message of size bytes from client, with
// a body derived from client and request.
func testMessage(client, request uint64, size int) []byte {
	body := make([]byte, size-vsrHeaderBytes)
	fillBody(body, client, request)
	return vsr.EncodeRequest(nil, testClusterID, 7, client, request, 1, body)
}

func fillBody(body []byte, client, request uint64) {
	seed := client*0x9e3779b97f4a7c15 ^ request
	for i := 0; i+8 <= len(body); i += 8 {
		binary.LittleEndian.PutUint64(body[i:], seed+uint64(i))
	}
	for i := len(body) &^ 7; i < len(body); i++ {
		body[i] = byte(seed)
	}
}

func bodyMatches(body []byte, client, request uint64) bool {
	seed := client*0x9e3779b97f4a7c15 ^ request
	for i := 0; i+8 <= len(body); i += 8 {
		if binary.LittleEndian.Uint64(body[i:]) != seed+uint64(i) {
			return false
		}
	}
	for i := len(body) &^ 7; i < len(body); i++ {
		if body[i] != byte(seed) {
			return false
		}
	}
	return true
}

// freeAddresses reserves count loopback ports and releases them for the
// nodes to listen on.
func freeAddresses(t testing.TB, count int) []string {
	t.Helper()
	addresses := make([]string, count)
	for i := range addresses {
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addresses[i] = listener.Addr().String()
		defer listener.Close()
	}
	return addresses
}

// freePortTriesMax bounds how often startOnFreeAddresses starts again
// because a picked port was taken before it was bound.
const freePortTriesMax = 5

// startOnFreeAddresses runs start on count loopback addresses from
// freeAddresses. Their ports are free when picked but bound only when
// start runs, so another process (a test run sharing the machine) may
// take one in between: a start failing with EADDRINUSE runs again on new
// addresses. start undoes what it started before it returns an error.
func startOnFreeAddresses(t testing.TB, count int, start func(addresses []string) error) {
	t.Helper()
	for try := 1; ; try++ {
		err := start(freeAddresses(t, count))
		if err == nil {
			return
		}
		if try >= freePortTriesMax || !errors.Is(err, unix.EADDRINUSE) {
			t.Fatalf("start on free loopback addresses (try %d): %v", try, err)
		}
		t.Logf("a picked port was taken before it was bound; starting again: %v", err)
	}
}

// waitUntil polls cond until it holds or timeout passes.
func waitUntil(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func waitLinked(t testing.TB, nodes []*netNode) {
	t.Helper()
	waitUntil(t, 10*time.Second, "every link up", func() bool {
		for i, node := range nodes {
			for j := range nodes {
				if i != j && !node.net.Connected(j) {
					return false
				}
			}
		}
		return true
	})
}

// sendSeries sends count messages of sizes drawn from sizes, numbered
// from first, from node's shard to replica to; it returns the request
// numbers Send accepted.
func sendSeries(node *netNode, replica, shard, to int, first uint64, count int, size func(i int) int) []uint64 {
	client := testClient(replica, shard)
	var accepted []uint64
	node.on(shard, func(sh *Shard) {
		for i := range count {
			request := first + uint64(i)
			if node.net.Send(sh, to, testMessage(client, request, size(i))) {
				accepted = append(accepted, request)
			}
		}
	})
	return accepted
}

// expectReceived waits until to got want from client, in order, whole.
func expectReceived(t *testing.T, node *netNode, client uint64, want []uint64) {
	t.Helper()
	waitUntil(t, 20*time.Second, "messages delivered", func() bool {
		return len(node.received(client)) >= len(want)
	})
	got := node.received(client)
	if len(got) != len(want) {
		t.Fatalf("client %#x: %d messages delivered, want %d", client, len(got), len(want))
	}
	for i, message := range got {
		if message.request != want[i] {
			t.Fatalf("client %#x: message %d is request %d, want %d", client, i, message.request, want[i])
		}
	}
}

func startNetCluster(t *testing.T, backend string, count int) ([]*netNode, []string) {
	addresses := freeAddresses(t, count)
	nodes := make([]*netNode, count)
	for i := range nodes {
		nodes[i] = startNetNode(t, netNodeConfig{backend: backend, addresses: addresses, replica: i})
	}
	waitLinked(t, nodes)
	return nodes, addresses
}

// TestClusterNetDelivers: three nodes link to each other; messages of
// seeded random sizes from two shards of each node reach every peer whole
// and in per-shard order; the counters agree.
func TestClusterNetDelivers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		seed := uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
		random := rand.New(rand.NewPCG(seed, 1))
		nodes, _ := startNetCluster(t, backend, 3)
		const count = 300
		sizes := make([]int, count)
		for i := range sizes {
			sizes[i] = vsrHeaderBytes + random.IntN(64<<10)
		}
		type series struct {
			to     int
			client uint64
			want   []uint64
		}
		// Every shard of every node sends to every peer at once, so shards
		// share the links' queues.
		results := make(chan series, 16)
		var senders sync.WaitGroup
		for from, node := range nodes {
			for shard := range node.exec {
				senders.Add(1)
				go func() {
					defer senders.Done()
					for to := range nodes {
						if to != from {
							want := sendSeries(node, from, shard, to, 1, count, func(i int) int { return sizes[i] })
							results <- series{to: to, client: testClient(from, shard), want: want}
						}
					}
				}()
			}
		}
		go func() { senders.Wait(); close(results) }()
		var all []series
		for s := range results {
			if len(s.want) != count {
				t.Fatalf("client %#x → %d: %d of %d sends accepted", s.client, s.to, len(s.want), count)
			}
			all = append(all, s)
		}
		for _, s := range all {
			expectReceived(t, nodes[s.to], s.client, s.want)
		}
		// What Deliver got stays the receiver's: later traffic never
		// overwrites it.
		for _, s := range all {
			for _, message := range nodes[s.to].received(s.client) {
				if message.kept != nil && !bodyMatches(message.kept[vsrHeaderBytes:], s.client, message.request) {
					t.Fatalf("client %#x request %d: a delivered message changed after Deliver returned", s.client, message.request)
				}
			}
		}
		for i, node := range nodes {
			stats := node.net.Stats()
			if stats.MessagesSent != uint64(2*count*len(node.exec)) || stats.MessagesReceived != stats.MessagesSent {
				t.Fatalf("node %d: stats %+v", i, stats)
			}
			if stats.HandshakeRefused != 0 || stats.FramesRejected != 0 || stats.DroppedFull != 0 {
				t.Fatalf("node %d: unexpected failures %+v", i, stats)
			}
		}
	})
}

// vsrAccepts reports whether vsr.DecodeMessage takes a message of size
// bytes (vsr's messageBytesMax is raised for cluster batches).
func vsrAccepts(size int) bool {
	var header vsr.Header
	return !errors.Is(vsr.DecodeMessage(testMessage(1, 1, size), &header), vsr.ErrTooLarge)
}

// TestClusterNetLargeMessages: messages of 8 MiB and of the transport's
// largest size travel whole between two nodes, among small ones, in order.
func TestClusterNetLargeMessages(t *testing.T) {
	const large = 8 << 20
	if !vsrAccepts(large) {
		t.Skip("vsr messageBytesMax is below 8 MiB: vsr refuses the messages this test sends")
	}
	forEachBackend(t, func(t *testing.T, backend string) {
		nodes, _ := startNetCluster(t, backend, 2)
		// The largest Prepare: a largest client frame's batch under vsr's
		// header and any headroom vsr allows.
		largest := large
		for _, size := range []int{clusterMessageBytesMax, frameBytesMax + 64<<10, frameBytesMax} {
			if vsrAccepts(size) {
				largest = size
				break
			}
		}
		sizes := []int{large, 300, largest, vsrHeaderBytes, large + 1, 4096}
		want := sendSeries(nodes[0], 0, 1, 1, 1, len(sizes), func(i int) int { return sizes[i] })
		if len(want) != len(sizes) {
			t.Fatalf("%d of %d large sends accepted", len(want), len(sizes))
		}
		expectReceived(t, nodes[1], testClient(0, 1), want)
		for i, message := range nodes[1].received(testClient(0, 1)) {
			if message.size != sizes[i] {
				t.Fatalf("message %d: %d bytes, want %d", i, message.size, sizes[i])
			}
		}
	})
}

// TestClusterNetRestart: a peer that stops is seen down (Send drops at
// once), and once it runs again on the same address the link comes back
// by itself and traffic resumes, in order, both ways.
func TestClusterNetRestart(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		nodes, addresses := startNetCluster(t, backend, 2)
		first := sendSeries(nodes[0], 0, 0, 1, 1, 50, func(int) int { return 2000 })
		expectReceived(t, nodes[1], testClient(0, 0), first)
		nodes[1].stop(t)
		dialersEnded := make(chan struct{})
		go func() { nodes[1].net.dialers.Wait(); close(dialersEnded) }()
		select {
		case <-dialersEnded:
		case <-time.After(5 * time.Second):
			t.Fatal("the stopped node's dialers still run")
		}
		waitUntil(t, 10*time.Second, "the link to the stopped peer down", func() bool { return !nodes[0].net.Connected(1) })
		if accepted := sendSeries(nodes[0], 0, 0, 1, 51, 10, func(int) int { return 2000 }); len(accepted) != 0 {
			t.Fatalf("%d sends to a stopped peer accepted", len(accepted))
		}
		// The restarted node binds every interface (Listen), its peers
		// still dial its replica address.
		_, port, _ := net.SplitHostPort(addresses[1])
		restarted := startNetNode(t, netNodeConfig{backend: backend, addresses: addresses, replica: 1, listen: ":" + port})
		if got := restarted.rt.PeerAddr().String(); !strings.HasSuffix(got, ":"+port) || strings.HasPrefix(got, "127.") {
			t.Fatalf("replica listener on %s, want every interface's port %s", got, port)
		}
		waitLinked(t, []*netNode{nodes[0], restarted})
		again := sendSeries(nodes[0], 0, 0, 1, 61, 50, func(int) int { return 3000 })
		back := sendSeries(restarted, 1, 1, 0, 1, 50, func(int) int { return 500 })
		expectReceived(t, restarted, testClient(0, 0), again)
		expectReceived(t, nodes[0], testClient(1, 1), back)
		if stats := nodes[0].net.Stats(); stats.LinksUp != 2 || stats.DroppedDown != 10 {
			t.Fatalf("stats %+v", stats)
		}
	})
}

// TestClusterNetDownPeer: Send to a peer that never came up returns false
// at once, every time, while the dialer keeps trying in the background.
func TestClusterNetDownPeer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		addresses := freeAddresses(t, 3)
		node := startNetNode(t, netNodeConfig{backend: backend, addresses: addresses, replica: 0})
		message := testMessage(testClient(0, 0), 1, 64<<10)
		const sends = 10000
		var took time.Duration
		node.on(1, func(sh *Shard) {
			began := time.Now()
			for i := range sends {
				if node.net.Send(sh, 1+i%2, message) {
					t.Errorf("send %d to a down peer accepted", i)
					return
				}
			}
			took = time.Since(began)
			if node.net.Send(sh, 1, make([]byte, clusterMessageBytesMax+1)) {
				t.Error("a message larger than a link carries was accepted")
			}
		})
		if took > time.Second {
			t.Fatalf("%d refused sends took %v", sends, took)
		}
		waitUntil(t, 10*time.Second, "redials", func() bool { return node.net.Stats().DialFailures >= 6 })
		if stats := node.net.Stats(); stats.DroppedDown != sends || stats.DroppedLarge != 1 || stats.MessagesSent != 0 {
			t.Fatalf("stats %+v", stats)
		}
	})
}

// TestClusterNetQueueLimit: toward a peer that authenticated but does not
// read, Send accepts until the peer's queue reaches its limit and then
// drops without blocking; the queue never exceeds its limits, and once
// the peer reads, every accepted message arrives whole and in order.
func TestClusterNetQueueLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer listener.Close()
		addresses := freeAddresses(t, 1)
		addresses = append(addresses, listener.Addr().String())
		node := startNetNode(t, netNodeConfig{backend: backend, addresses: addresses, replica: 0})
		peer := fakeAcceptor(t, listener, 1)
		waitUntil(t, 10*time.Second, "the link up", func() bool { return node.net.Connected(1) })
		const size = 1 << 20
		client := testClient(0, 0)
		var accepted []uint64
		for request := uint64(1); len(accepted) == int(request-1); request++ {
			accepted = append(accepted, sendSeries(node, 0, 0, 1, request, 1, func(int) int { return size })...)
			messages, bytes := node.net.Queued(1)
			if messages > clusterQueueMessagesMax || bytes > clusterQueueBytesMax {
				t.Fatalf("queue holds %d messages, %d bytes", messages, bytes)
			}
		}
		// Accepted: the queue's bytes, what the connection holds, and what
		// the kernel's socket buffers took (generous: 32 MiB).
		if limit := clusterQueueBytesMax + clusterConnBytesMax + 32<<20; len(accepted)*size > limit {
			t.Fatalf("%d MiB accepted toward a stalled peer, limit %d MiB", len(accepted), limit>>20)
		}
		// A drop needs a full queue, which only accepted messages fill.
		if len(accepted)*size <= clusterQueueBytesMax-size {
			t.Fatalf("Send dropped after %d MiB accepted, below the queue's limit", len(accepted))
		}
		if stats := node.net.Stats(); stats.DroppedFull != 1 {
			t.Fatalf("stats %+v", stats)
		}
		readMessages(t, peer, client, accepted, size)
	})
}

// readMessages reads want's messages from conn and checks each.
func readMessages(t *testing.T, conn net.Conn, client uint64, want []uint64, size int) {
	t.Helper()
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, size)
	for _, request := range want {
		if _, err := io.ReadFull(conn, buf); err != nil {
			t.Fatalf("reading request %d: %v", request, err)
		}
		var header vsr.Header
		if err := vsr.DecodeMessage(buf, &header); err != nil {
			t.Fatalf("request %d: %v", request, err)
		}
		if header.Client != client || header.Request != request || !bodyMatches(buf[vsrHeaderBytes:], client, request) {
			t.Fatalf("got client %#x request %d, want %#x %d", header.Client, header.Request, client, request)
		}
	}
}

// TestClusterNetWakeRetry: a Send from a shard whose cross-shard queue to
// the link's owner is full still gets its message out: the wake-up is
// retried on a timer until the owner takes it.
func TestClusterNetWakeRetry(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		nodes, _ := startNetCluster(t, backend, 2)
		node := nodes[0]
		if len(node.exec) < 2 {
			t.Skip("needs two shards")
		}
		owner := node.net.links[1].owner
		sender := 1 - owner
		client := testClient(0, sender)
		// The owner is held in a callback meanwhile, so it cannot make
		// room in the queue before the Sends run.
		held, release := make(chan struct{}), make(chan struct{})
		go node.on(owner, func(*Shard) {
			close(held)
			<-release
		})
		<-held
		node.on(sender, func(sh *Shard) {
			filler := 0
			for sh.Send(owner, Message{Kind: 1}) == nil {
				filler++
			}
			if filler == 0 {
				t.Error("the cross-shard queue took nothing")
			}
			timers := len(sh.timers.heap)
			for request := uint64(1); request <= 100; request++ {
				if !node.net.Send(sh, 1, testMessage(client, request, 700)) {
					t.Error("Send refused a message the queue had room for")
				}
			}
			if armed := len(sh.timers.heap) - timers; armed != 1 {
				t.Errorf("%d wake-up retries armed, want 1", armed)
			}
		})
		close(release)
		want := make([]uint64, 100)
		for i := range want {
			want[i] = uint64(i + 1)
		}
		expectReceived(t, nodes[1], client, want)
	})
}
