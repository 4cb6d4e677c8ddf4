package shard

import (
	"strconv"
	"testing"
	"time"

	"github.com/whippetio/whippet/engine"
)

// BenchmarkDataAppend measures appends of 1000-message batches of
// 1000-byte payloads (about 1 MB each) through a real runtime, started on
// shard 0 for a partition it owns (local) or one shard 1 owns
// (cross-shard: request and acknowledgement each cross an SPSC queue),
// under each durability, one batch in flight (the acknowledged round trip)
// and eight (pipelined, where group commit joins writes). MB/s counts
// batch bytes acknowledged.
func BenchmarkDataAppend(b *testing.B) {
	batch := testBatch(0, 1000, 1000)
	for _, backend := range backends {
		for _, placement := range []string{"local", "cross"} {
			for _, durability := range []engine.Durability{engine.DurabilityMemory, engine.DurabilityWritten, engine.DurabilityPersisted} {
				for _, window := range []int{1, 8} {
					name := backend + "/" + placement + "/" + durability.String() + "/window=" + strconv.Itoa(window)
					b.Run(name, func(b *testing.B) {
						benchAppend(b, backend, placement == "cross", durability, window, batch, 0)
					})
				}
			}
		}
	}
}

func benchAppend(b *testing.B, backend string, cross bool, durability engine.Durability, window int, batch []byte, spin time.Duration) {
	if backend == BackendIOURing {
		if err := uringAvailable(); err != nil {
			b.Skipf("io_uring unavailable: %v", err)
		}
	}
	h := startData(b, backend, DataOptions{Directory: b.TempDir()}, func(options *Options) { options.Spin = spin })
	owner := 0
	if cross {
		if h.shardCount() < 2 {
			b.Skip("one CPU allowed: no peer shard")
		}
		owner = 1
	}
	key := keysOwnedBy(1, 0, owner, h.shardCount(), 1)[0]
	h.create(key, 1, PartitionConfig{Durability: durability})
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	err := h.drive(0, window, b.Loop, func(ds *DataShard, op *DataOp) {
		op.Key, op.Batch = key, batch
		ds.Append(op)
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkDataRoundTrip measures the data plane's own cost per op: one
// 100-byte message appended to an in-memory-durability partition, one op
// in flight, local or across the SPSC queues and back, with shards that
// block when idle (a hop pays two wake-ups) and shards that spin 50 µs.
func BenchmarkDataRoundTrip(b *testing.B) {
	batch := testBatch(0, 1, 100)
	for _, backend := range backends {
		for _, placement := range []string{"local", "cross"} {
			for _, spin := range []time.Duration{0, 50 * time.Microsecond} {
				b.Run(backend+"/"+placement+"/spin="+spin.String(), func(b *testing.B) {
					benchAppend(b, backend, placement == "cross", engine.DurabilityMemory, 1, batch, spin)
				})
			}
		}
	}
}

// BenchmarkDataPoll measures polls of one 1000-message batch of
// 1000-byte payloads (about 1 MB) served from the shard's cache into the
// origin's reply buffer, local or across the SPSC queues, one in flight.
// MB/s counts the records appended to the reply.
func BenchmarkDataPoll(b *testing.B) {
	batch := testBatch(0, 1000, 1000)
	for _, backend := range backends {
		for _, placement := range []string{"local", "cross"} {
			b.Run(backend+"/"+placement, func(b *testing.B) {
				if backend == BackendIOURing {
					if err := uringAvailable(); err != nil {
						b.Skipf("io_uring unavailable: %v", err)
					}
				}
				h := startData(b, backend, DataOptions{Directory: b.TempDir(), CacheBytes: 64 << 20})
				owner := 0
				if placement == "cross" {
					if h.shardCount() < 2 {
						b.Skip("one CPU allowed: no peer shard")
					}
					owner = 1
				}
				key := keysOwnedBy(1, 0, owner, h.shardCount(), 1)[0]
				h.create(key, 1, PartitionConfig{Durability: engine.DurabilityWritten})
				for range 8 {
					if result := h.append(0, key, batch); result.Err != nil {
						b.Fatal(result.Err)
					}
				}
				out := make([]byte, 0, 2*len(batch))
				b.SetBytes(int64(len(batch)))
				b.ReportAllocs()
				err := h.drive(0, 1, b.Loop, func(ds *DataShard, op *DataOp) {
					op.Key, op.Strategy, op.Value, op.Count, op.Out = key, engine.PollOffset, 7000, 1000, out[:0]
					ds.Poll(op)
				}, nil)
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
