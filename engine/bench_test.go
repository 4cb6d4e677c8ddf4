package engine_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// megabyteBatch is a 1 MiB batch record of 16 messages.
func megabyteBatch() []byte {
	messages := make([]enginetest.Message, 16)
	payload := (1<<20 - 256) / 16
	for index := range messages {
		messages[index] = enginetest.Message{IDLow: uint64(index + 1), Payload: make([]byte, payload-48)}
	}
	return enginetest.Batch(1, messages...)
}

// BenchmarkAppend1MiB appends 1 MiB batches through DirectStorage on real
// files, one at a time (group of 1) and four in flight (group of 4).
func BenchmarkAppend1MiB(b *testing.B) {
	record := megabyteBatch()
	for _, durability := range []engine.Durability{engine.DurabilityWritten, engine.DurabilityPersisted} {
		for _, group := range []int{1, 4} {
			b.Run(durability.String()+"/group="+string(rune('0'+group)), func(b *testing.B) {
				storage, p := steadyPartition(b, durability, nil)
				ops := make([]engine.AppendOp, group)
				for index := range ops {
					ops[index] = engine.AppendOp{Batch: record, Timestamp: 1, Done: func(*engine.AppendOp) {}}
				}
				b.SetBytes(int64(len(record) * group))
				b.ReportAllocs()
				for b.Loop() {
					for index := range ops {
						if err := p.Append(&ops[index]); err != nil {
							b.Fatal(err)
						}
					}
					storage.drain()
				}
			})
		}
	}
}

// BenchmarkAppend1MiBRing appends 1 MiB batches with writes and
// fdatasyncs on io_uring, buffers from a ring pool (zero copy to the
// kernel), one batch per group, without and with a shard cache (as the
// server runs): the cache case shows what keeping written batches for
// readers costs the append path.
func BenchmarkAppend1MiBRing(b *testing.B) {
	record := megabyteBatch()
	for _, durability := range []engine.Durability{engine.DurabilityWritten, engine.DurabilityPersisted} {
		for _, cached := range []bool{false, true} {
			for _, pieces := range []bool{false, true} {
				name := durability.String() + "/nocache"
				if cached {
					name = durability.String() + "/cache"
				}
				if pieces {
					name += "/pieces"
				}
				b.Run(name, func(b *testing.B) { benchmarkAppendRing(b, record, durability, cached, pieces) })
			}
		}
	}
}

func benchmarkAppendRing(b *testing.B, record []byte, durability engine.Durability, cached, pieces bool) {
	storage := newRingBackend(b)
	storage.noKick = !pieces
	options := engine.PartitionOptions{
		Directory: b.TempDir(), SegmentBytes: 1 << 30, Durability: durability, Logger: quiet,
		Allocate: storage.allocate, Release: storage.release,
	}
	if cached {
		// 64 MiB holds eight of the test pool's 8 MiB buffers.
		options.Cache = engine.NewCache(engine.NewCacheBudget(int64(64<<20)), 1)
	}
	p := mustOpen(b, storage, options)
	op := &engine.AppendOp{Batch: record, Timestamp: 1, Done: func(*engine.AppendOp) {}}
	b.SetBytes(int64(len(record)))
	b.ReportAllocs()
	cpuStart := processCPU(b)
	for b.Loop() {
		if err := p.Append(op); err != nil {
			b.Fatal(err)
		}
		storage.drain()
	}
	// Wall time is mostly the disk's; CPU time shows the copies.
	b.ReportMetric(float64((processCPU(b)-cpuStart).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.Logf("ring waits that timed out: %d", storage.timeouts)
}

// BenchmarkPoll reads 1 MiB (1000 messages of 1 KiB) per poll from the
// cache and from disk.
func BenchmarkPoll(b *testing.B) {
	for _, name := range []string{"cache", "disk"} {
		b.Run(name, func(b *testing.B) {
			var cache *engine.Cache
			if name == "cache" {
				cache = engine.NewCache(engine.NewCacheBudget(int64(256<<20)), 1)
			}
			storage, p := steadyPartition(b, engine.DurabilityWritten, cache)
			messages := make([]enginetest.Message, 100)
			for index := range messages {
				messages[index] = enginetest.Message{Payload: make([]byte, 1024-48)}
			}
			record := enginetest.Batch(1, messages...)
			for index := range 1000 {
				if _, err := appendBatch(b, storage, p, record, uint64(1+index)); err != nil {
					b.Fatal(err)
				}
			}
			op := &engine.PollOp{Strategy: engine.PollOffset, Count: 1000, Out: make([]byte, 0, 2<<20), Done: func(*engine.PollOp) {}}
			offset := uint64(0)
			b.SetBytes(1000 * 1024)
			b.ReportAllocs()
			for b.Loop() {
				op.Value = offset % 99000
				offset += 1000
				op.Out = op.Out[:0]
				if err := p.Poll(op); err != nil {
					b.Fatal(err)
				}
				storage.drain()
				if op.Err != nil || op.Messages != 1000 {
					b.Fatalf("poll: %d, %v", op.Messages, op.Err)
				}
			}
		})
	}
}

// processCPU returns the user plus system CPU time this process used.
func processCPU(b *testing.B) time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		b.Fatal(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}
