package engine_test

import (
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// TestAllocationCutWhileInFlight: a stream dropped after one of its
// pieces was written cuts the log back to its batches while the
// partition's allocation ahead may still be in flight. When that
// allocation takes effect before the cut, the cut drops the space it
// allocated, so the allocator must not count on it: the next large
// batch allocates again. Method: seeds whose storage completes the
// piece, then the allocation, then the cut; the next stream's
// allocations are counted.
func TestAllocationCutWhileInFlight(t *testing.T) {
	raced := 0
	for seed := uint64(1); seed <= 40; seed++ {
		mem, p, _, serial := piecedSetup(t, seed, engine.DurabilityPersisted)
		start := p.SizeBytes()
		record := enginetest.Batch(5, largeMessages(&serial, 64)...)
		completed := map[engine.OpCode]int{}
		mem.Inject = func(op *engine.Op) error {
			completed[op.Code]++
			return nil
		}
		id, err := p.StreamOpen(record[:300], len(record), 20)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.StreamFeed(id, record[:len(record)/2]); err != nil {
			t.Fatal(err)
		}
		for completed[engine.OpWrite] == 0 && completed[engine.OpAllocate] == 0 {
			mem.Run(1)
		}
		if completed[engine.OpAllocate] != 0 || mem.Pending() != 1 {
			continue // the allocation went first, or a second piece is in flight: not this case
		}
		p.StreamAbort(id) // the cut is queued beside the allocation
		mem.Run(1)
		if completed[engine.OpAllocate] == 0 {
			continue // the cut went first: the allocation's space stays
		}
		memBackend{mem}.drain()
		raced++
		if file, _ := mem.File(firstLog); int64(len(file)) != start {
			t.Fatalf("seed %d: the log holds %d bytes after the cut, its batches %d", seed, len(file), start)
		}
		clear(completed)
		f := openStream(t, mem, p, record, seed)
		done := 0
		if _, err := f.finish(&done); err != nil {
			t.Fatal(err)
		}
		memBackend{mem}.drain()
		if done != 1 || completed[engine.OpAllocate] == 0 {
			t.Fatalf("seed %d: the next stream: %d acknowledgements, %d allocations; want 1 and its space allocated again",
				seed, done, completed[engine.OpAllocate])
		}
	}
	if raced == 0 {
		t.Fatal("no seed completed the allocation between the dropped stream's cut and its effect")
	}
}
