package shard

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkClusterNetLink measures one link's throughput between two
// nodes in this process: a shard of node 0 (the link's owner, or another
// shard: "cross") sends vsr messages of each size to node 1, keeping at
// most clusterQueueBytesMax/2 in flight; a message counts once node 1
// verified and delivered it. Both nodes share the machine's CPUs with the
// benchmark itself.
func BenchmarkClusterNetLink(b *testing.B) {
	for _, backend := range backends {
		if backend == BackendIOURing && uringAvailable() != nil {
			continue
		}
		for _, cross := range []bool{false, true} {
			for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
				name := fmt.Sprintf("%s/owner/%dKiB", backend, size>>10)
				if cross {
					name = fmt.Sprintf("%s/cross/%dKiB", backend, size>>10)
				}
				b.Run(name, func(b *testing.B) { benchmarkLink(b, backend, size, cross) })
			}
		}
	}
}

func benchmarkLink(b *testing.B, backend string, size int, cross bool) {
	var received atomic.Int64
	addresses := freeAddresses(b, 2)
	count := func(*Shard, int, []byte) { received.Add(1) }
	nodes := []*netNode{
		startNetNode(b, netNodeConfig{backend: backend, addresses: addresses, replica: 0, deliver: count}),
		startNetNode(b, netNodeConfig{backend: backend, addresses: addresses, replica: 1, deliver: count}),
	}
	waitLinked(b, nodes)
	shard := nodes[0].net.links[1].owner
	if cross {
		if len(nodes[0].exec) < 2 {
			b.Skip("needs two shards")
		}
		shard = 1 - shard
	}
	message := testMessage(testClient(0, 0), 1, size)
	window := int64(max(clusterQueueBytesMax/2/size, 1))
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	sent := int64(0)
	for sent < int64(b.N) {
		burst := min(int64(b.N)-sent, window-(sent-received.Load()))
		if burst <= 0 {
			time.Sleep(50 * time.Microsecond)
			continue
		}
		nodes[0].on(shard, func(sh *Shard) {
			for range burst {
				if !nodes[0].net.Send(sh, 1, message) {
					return
				}
				sent++
			}
		})
	}
	for received.Load() < int64(b.N) {
		time.Sleep(50 * time.Microsecond)
	}
	b.StopTimer()
	if stats := nodes[0].net.Stats(); stats.MessagesSent != uint64(b.N) {
		b.Fatalf("stats %+v", stats)
	}
}

// BenchmarkClusterNetRoundTrip measures a small message's round trip:
// node 1 answers each message it receives at once, from the shard that
// received it, and node 0 sends the next one when the answer arrives.
func BenchmarkClusterNetRoundTrip(b *testing.B) {
	for _, backend := range backends {
		if backend == BackendIOURing && uringAvailable() != nil {
			continue
		}
		b.Run(backend, func(b *testing.B) { benchmarkRoundTrip(b, backend) })
	}
}

func benchmarkRoundTrip(b *testing.B, backend string) {
	addresses := freeAddresses(b, 2)
	message := testMessage(testClient(0, 0), 1, 256)
	var nodes [2]*netNode
	left := int64(0)
	done := make(chan struct{})
	echo := func(sh *Shard, from int, msg []byte) {
		if !nodes[1].net.Send(sh, 0, msg) {
			b.Error("the echo was dropped")
		}
	}
	next := func(sh *Shard, from int, msg []byte) {
		if left--; left <= 0 {
			close(done)
			return
		}
		if !nodes[0].net.Send(sh, 1, message) {
			b.Error("a ping was dropped")
		}
	}
	nodes[0] = startNetNode(b, netNodeConfig{backend: backend, addresses: addresses, replica: 0, deliver: next})
	nodes[1] = startNetNode(b, netNodeConfig{backend: backend, addresses: addresses, replica: 1, deliver: echo})
	waitLinked(b, nodes[:])
	left = int64(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	nodes[0].on(0, func(sh *Shard) { nodes[0].net.Send(sh, 1, message) })
	<-done
}
