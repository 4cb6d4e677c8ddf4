package engine_test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
	"github.com/whippetio/whippet/internal/invariant"
)

// steadyPartition opens a partition on real files with a large segment so
// no rollover happens during a measurement.
func steadyPartition(t testing.TB, durability engine.Durability, cache *engine.Cache) (directBackend, *engine.Partition) {
	storage := directBackend{engine.NewDirectStorage()}
	options := engine.PartitionOptions{
		Directory: t.TempDir(), SegmentBytes: 1 << 30, Durability: durability, Cache: cache, Logger: quiet,
	}
	return storage, mustOpen(t, storage, options)
}

// TestAppendAllocs: the append path (copy, stamp, group write, sync,
// acknowledgement) allocates nothing once warm.
func TestAppendAllocs(t *testing.T) {
	for _, durability := range []engine.Durability{engine.DurabilityPersisted, engine.DurabilityMemory} {
		storage, p := steadyPartition(t, durability, engine.NewCache(engine.NewCacheBudget(int64(8<<20)), 1))
		record := enginetest.Batch(1, enginetest.Message{Payload: make([]byte, 1000)}, enginetest.Message{Payload: make([]byte, 3000)})
		op := &engine.AppendOp{Batch: record, Timestamp: 1, Done: func(*engine.AppendOp) {}}
		step := func() {
			if err := p.Append(op); err != nil {
				t.Fatal(err)
			}
			storage.drain()
			if op.Err != nil {
				t.Fatal(op.Err)
			}
		}
		for range 200 {
			step()
		}
		if allocs := testing.AllocsPerRun(200, step); allocs != 0 {
			t.Fatalf("%s append allocates %.1f times per op", durability, allocs)
		}
	}
}

// TestPollAllocs: polls served from the cache and from disk allocate
// nothing once warm.
func TestPollAllocs(t *testing.T) {
	if invariant.Enabled {
		t.Skip("invariant builds re-verify sliced records, which allocates")
	}
	for _, name := range []string{"cache", "disk"} {
		var cache *engine.Cache
		if name == "cache" {
			cache = engine.NewCache(engine.NewCacheBudget(int64(64<<20)), 1)
		}
		storage, p := steadyPartition(t, engine.DurabilityWritten, cache)
		record := enginetest.Batch(1, enginetest.Message{Payload: make([]byte, 2000)}, enginetest.Message{Payload: make([]byte, 500)})
		for index := range 500 {
			if _, err := appendBatch(t, storage, p, record, uint64(1+index)); err != nil {
				t.Fatal(err)
			}
		}
		op := &engine.PollOp{Strategy: engine.PollOffset, Count: 50, Out: make([]byte, 0, 1<<20), Done: func(*engine.PollOp) {}}
		offset := uint64(0)
		step := func() {
			op.Value = offset % 900
			op.Out = op.Out[:0]
			offset += 37
			if err := p.Poll(op); err != nil {
				t.Fatal(err)
			}
			storage.drain()
			if op.Err != nil || op.Messages != 50 {
				t.Fatalf("poll: %d messages, %v", op.Messages, op.Err)
			}
		}
		for range 50 {
			step()
		}
		if allocs := testing.AllocsPerRun(200, step); allocs != 0 {
			t.Fatalf("poll from %s allocates %.1f times per op", name, allocs)
		}
	}
}

// TestIsFatalAllocs: IsFatal runs on every data-plane completion, so it
// must not allocate for any error (it once did through errors.As), and it
// must still find a FatalError under plain and joined wrapping.
func TestIsFatalAllocs(t *testing.T) {
	fatal := &engine.FatalError{Err: syscall.EIO}
	cases := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{engine.ErrBusy, false},
		{fmt.Errorf("append: %w", engine.ErrJournalFull), false},
		{fatal, true},
		{fmt.Errorf("sync: %w", fatal), true},
		{errors.Join(engine.ErrBusy, fmt.Errorf("sync: %w", fatal)), true},
	}
	for _, c := range cases {
		if got := engine.IsFatal(c.err); got != c.want {
			t.Fatalf("IsFatal(%v) = %v, want %v", c.err, got, c.want)
		}
		if allocs := testing.AllocsPerRun(100, func() { engine.IsFatal(c.err) }); allocs != 0 {
			t.Fatalf("IsFatal(%v): %.1f allocations, want 0", c.err, allocs)
		}
	}
}
