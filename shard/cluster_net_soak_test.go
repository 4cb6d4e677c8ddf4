package shard

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/whippetio/whippet/vsr"
)

// TestClusterNetSoak: three nodes exchange messages from every shard
// while one node at a time is stopped and started again. Every message
// that arrives is whole, arrives once, and arrives after every earlier
// message of its sender shard that arrived (order per link, gaps only
// where a link closed); once the churn stops, every link comes back and
// carries a last series completely.
func TestClusterNetSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: seconds of traffic and restarts")
	}
	forEachBackend(t, func(t *testing.T, backend string) {
		seed := uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
		random := rand.New(rand.NewPCG(seed, 2))
		soak := newNetSoak(t, backend, 3)
		for round := range 8 {
			until := time.Now().Add(300 * time.Millisecond)
			for time.Now().Before(until) {
				soak.sendRandom(random)
			}
			victim := random.IntN(len(soak.nodes))
			soak.nodes[victim].stop(t)
			soak.sendRandom(random)
			soak.start(victim, round+1)
		}
		waitLinked(t, soak.nodes)
		soak.finalSeries(t)
		soak.check(t)
	})
}

// netSoak is a cluster whose nodes restart; what each replica received
// outlives its node.
type netSoak struct {
	t         *testing.T
	backend   string
	addresses []string
	nodes     []*netNode
	next      map[uint64]uint64 // next request number per sender client

	mu   sync.Mutex
	last map[[2]uint64]uint64 // [receiver, client] → last request received
	bad  []string
}

func newNetSoak(t *testing.T, backend string, count int) *netSoak {
	soak := &netSoak{t: t, backend: backend, addresses: freeAddresses(t, count),
		nodes: make([]*netNode, count), next: map[uint64]uint64{}, last: map[[2]uint64]uint64{}}
	for replica := range soak.nodes {
		soak.start(replica, 0)
	}
	waitLinked(t, soak.nodes)
	return soak
}

func (soak *netSoak) start(replica, incarnation int) {
	deliver := func(sh *Shard, from int, msg []byte) { soak.deliver(replica, msg) }
	node := startNetNode(soak.t, netNodeConfig{backend: soak.backend, addresses: soak.addresses, replica: replica, deliver: deliver})
	node.incarnation = incarnation
	soak.nodes[replica] = node
}

func (soak *netSoak) deliver(receiver int, msg []byte) {
	var header vsr.Header
	err := vsr.DecodeMessage(msg, &header)
	soak.mu.Lock()
	defer soak.mu.Unlock()
	key := [2]uint64{uint64(receiver), header.Client}
	switch {
	case err != nil:
		soak.bad = append(soak.bad, err.Error())
	case !bodyMatches(msg[vsrHeaderBytes:], header.Client, header.Request):
		soak.bad = append(soak.bad, "body corrupted")
	case header.Request <= soak.last[key]:
		soak.bad = append(soak.bad, "a message out of order or twice")
	}
	soak.last[key] = header.Request
}

// soakClient names a sender shard of one incarnation of a node.
func soakClient(node *netNode, replica, shard int) uint64 {
	return testClient(replica, shard) | uint64(node.incarnation)<<32
}

// sendRandom sends a burst from a random shard of every running node to
// a random peer.
func (soak *netSoak) sendRandom(random *rand.Rand) {
	for from, node := range soak.nodes {
		select {
		case <-node.rt.Done():
			continue
		default:
		}
		shard := random.IntN(len(node.exec))
		to := (from + 1 + random.IntN(len(soak.nodes)-1)) % len(soak.nodes)
		size := vsrHeaderBytes + random.IntN(256<<10)
		soak.send(node, from, shard, to, 1+random.IntN(20), size)
	}
}

// send sends count messages and returns the request numbers accepted.
func (soak *netSoak) send(node *netNode, from, shard, to, count, size int) []uint64 {
	client := soakClient(node, from, shard)
	first := soak.next[client] + 1
	soak.next[client] += uint64(count)
	var accepted []uint64
	node.on(shard, func(sh *Shard) {
		for i := range count {
			request := first + uint64(i)
			message := testMessage(client, request, size)
			if node.net.Send(sh, to, message) {
				accepted = append(accepted, request)
			}
		}
	})
	return accepted
}

// finalSeries checks liveness: with every link up, a series from every
// shard to every peer arrives whole.
func (soak *netSoak) finalSeries(t *testing.T) {
	type series struct {
		receiver int
		client   uint64
		last     uint64
	}
	var all []series
	for from, node := range soak.nodes {
		for to := range soak.nodes {
			for shard := range node.exec {
				if to == from {
					continue
				}
				accepted := soak.send(node, from, shard, to, 20, 4096)
				if len(accepted) != 20 {
					t.Fatalf("%d of 20 final sends accepted", len(accepted))
				}
				all = append(all, series{to, soakClient(node, from, shard), accepted[19]})
			}
		}
	}
	waitUntil(t, 20*time.Second, "the final series", func() bool {
		soak.mu.Lock()
		defer soak.mu.Unlock()
		for _, s := range all {
			if soak.last[[2]uint64{uint64(s.receiver), s.client}] != s.last {
				return false
			}
		}
		return true
	})
}

func (soak *netSoak) check(t *testing.T) {
	soak.mu.Lock()
	defer soak.mu.Unlock()
	if len(soak.bad) > 0 {
		t.Fatalf("%d bad deliveries, first: %s", len(soak.bad), soak.bad[0])
	}
	if len(soak.last) == 0 {
		t.Fatal("nothing delivered")
	}
}
