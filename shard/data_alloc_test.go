package shard

import (
	"runtime"
	"testing"

	"github.com/whippetio/whippet/engine"
)

// drive runs ops on shard's thread: it keeps window ops in flight,
// starting another while more() is true, and returns once every op is
// done, with the first error any op met. Ops that complete inside their
// start call do not recurse: a trampoline starts the next one.
func (h *dataHarness) drive(shard, window int, more func() bool, fill func(ds *DataShard, op *DataOp), around func(before bool)) error {
	done := make(chan error, 1)
	h.inject[shard] <- func(ds *DataShard) {
		var first error
		inflight, wanted, starting, finished := 0, 0, false, false
		var onDone func(op *DataOp)
		startLoop := func() {
			if starting {
				return
			}
			starting = true
			for wanted > 0 {
				wanted--
				op := ds.Get()
				op.Done = onDone
				inflight++
				fill(ds, op)
			}
			starting = false
		}
		onDone = func(op *DataOp) {
			if op.Err != nil && first == nil {
				first = op.Err
			}
			ds.Put(op)
			inflight--
			if !finished {
				if more() {
					wanted++
					startLoop()
				} else {
					finished = true
				}
			}
			if finished && inflight == 0 && !starting {
				if around != nil {
					around(false)
				}
				done <- first
			}
		}
		if around != nil {
			around(true)
		}
		for range window {
			if !more() {
				finished = true
				break
			}
			wanted++
		}
		startLoop()
		if finished && inflight == 0 {
			if around != nil {
				around(false)
			}
			done <- first
		}
	}
	select {
	case err := <-done:
		return err
	case <-h.waitTimeout():
		h.t.Fatal("drive did not finish within 60 s")
	}
	return nil
}

// TestDataAllocs: on the steady path (pool warm, partition open, journal
// and cache grown) local and cross-shard appends (in memory, and
// persisted: written and fdatasynced through the backend) and polls
// served from the cache allocate nothing, counted on the shard's thread
// around many ops.
func TestDataAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	forEachBackend(t, func(t *testing.T, backend string) {
		h := startData(t, backend, DataOptions{Directory: t.TempDir()})
		shards := h.shardCount()
		local := keysOwnedBy(12, 0, 0, shards, 1)[0]
		remote := keysOwnedBy(12, 0, shards-1, shards, 1)[0]
		h.create(PartitionKey{Stream: 12}, int(max(local.Partition, remote.Partition))+1, PartitionConfig{Durability: engine.DurabilityMemory})
		persisted := keysOwnedBy(12, 1, shards-1, shards, 1)[0]
		h.create(persisted, 1, PartitionConfig{Durability: engine.DurabilityPersisted})
		batch := testBatch(0, 10, 100)
		out := make([]byte, 0, 1<<20)
		cases := []struct {
			name string
			fill func(ds *DataShard, op *DataOp)
		}{
			{"local append", func(ds *DataShard, op *DataOp) { op.Key, op.Batch = local, batch; ds.Append(op) }},
			{"local poll", func(ds *DataShard, op *DataOp) {
				op.Key, op.Strategy, op.Count, op.Out = local, engine.PollLast, 10, out[:0]
				ds.Poll(op)
			}},
			{"cross-shard append", func(ds *DataShard, op *DataOp) { op.Key, op.Batch = remote, batch; ds.Append(op) }},
			{"cross-shard persisted append", func(ds *DataShard, op *DataOp) { op.Key, op.Batch = persisted, batch; ds.Append(op) }},
			{"cross-shard poll", func(ds *DataShard, op *DataOp) {
				op.Key, op.Strategy, op.Count, op.Out = remote, engine.PollLast, 10, out[:0]
				ds.Poll(op)
			}},
		}
		for _, row := range cases {
			const ops = 2000
			counted := func(count int) func() bool {
				return func() bool { count--; return count >= 0 }
			}
			if err := h.drive(0, 1, counted(ops), row.fill, nil); err != nil { // warm up
				t.Fatalf("%s: %v", row.name, err)
			}
			var before, after runtime.MemStats
			err := h.drive(0, 1, counted(ops), row.fill, func(starting bool) {
				if starting {
					runtime.ReadMemStats(&before)
				} else {
					runtime.ReadMemStats(&after)
				}
			})
			if err != nil {
				t.Fatalf("%s: %v", row.name, err)
			}
			perOp := float64(after.Mallocs-before.Mallocs) / ops
			t.Logf("%s: %.3f allocations per op", row.name, perOp)
			// A few allocations of the Go runtime itself (timers, the
			// test's channels) may land in the window; per op they round
			// to zero.
			if perOp >= 0.05 {
				t.Errorf("%s: %.3f allocations per op, want 0", row.name, perOp)
			}
		}
	})
}
