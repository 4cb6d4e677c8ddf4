package engine_test

import (
	"syscall"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// TestStreamAbortTruncateFails: a stream dropped after some of its data
// pieces were written whose truncation then fails leaves those pieces
// past the log's end. The partition goes on appending (a small batch,
// or none), and a crash once the header of the next streamed batch was
// written, before its sync (the crash may keep the header and lose its
// final piece, the old pieces lying where it should be), recovers
// exactly the acknowledged batches: the stale pieces never complete a
// batch.
func TestStreamAbortTruncateFails(t *testing.T) {
	headerOnly := 0
	for seed := uint64(1); seed <= 16; seed++ {
		// Persisted: the acknowledged batches are synced, so every crash keeps them.
		mem, p, options, serial := piecedSetup(t, seed, engine.DurabilityPersisted)
		other := uint64(5000)
		dropped := enginetest.Batch(5, largeMessages(&other, 64)...)
		f := openStream(t, mem, p, dropped, seed)
		if err := f.feed(len(dropped) * 3 / 4); err != nil {
			t.Fatal(err)
		}
		memBackend{mem}.drain()
		truncates := 0
		mem.Inject = func(op *engine.Op) error {
			if op.Code == engine.OpTruncate {
				truncates++
				return syscall.EIO
			}
			return nil
		}
		p.StreamAbort(f.id)
		memBackend{mem}.drain()
		mem.Inject = nil
		if truncates == 0 {
			t.Fatalf("seed %d: the dropped stream was never truncated", seed)
		}
		next := uint64(3)
		if seed%2 == 0 {
			small := enginetest.Batch(6, randomMessages(newRandom(seed), &serial, 2, 500)...)
			if op, err := appendBatch(t, memBackend{mem}, p, small, 30); err != nil || op.BaseOffset != 3 {
				t.Fatalf("seed %d: append after the failed truncation: %v", seed, err)
			}
			next = 5
		}
		g := openStream(t, mem, p, enginetest.Batch(7, largeMessages(&serial, 64)...), seed+100)
		if err := g.feed(len(g.record) / 2); err != nil {
			t.Fatal(err)
		}
		memBackend{mem}.drain()
		start := p.SizeBytes()
		// headerRan: the op just completed wrote at or before the batch's
		// start (read at completion: the op is reused by its callback).
		headerRan := false
		mem.Inject = func(op *engine.Op) error {
			headerRan = op.Code == engine.OpWrite && op.Position <= start
			return nil
		}
		if _, err := g.finish(new(int)); err != nil {
			t.Fatal(err)
		}
		for mem.Pending() > 0 && !headerRan {
			mem.Run(1)
		}
		mem.Inject = nil
		if mem.Pending() == 0 {
			continue // everything completed: not this case
		}
		headerOnly++
		clone := memBackend{mem.Crash(seed * 13)}
		reopened := mustOpen(t, clone, options)
		if reopened.OffsetNext() != next {
			t.Fatalf("seed %d: recovered up to %d, want the %d acknowledged offsets", seed, reopened.OffsetNext(), next)
		}
		checkMessages(t, clone, reopened, 0, next)
		memBackend{mem}.drain()
		checkMessages(t, memBackend{mem}, p, 0, next+64)
	}
	if headerOnly == 0 {
		t.Fatal("no seed crashed with the header written and its sync not")
	}
}

// TestStreamAcrossSegmentRoll: streamed batches that cross SegmentBytes
// (the segment rolls after them), with dropped ones between them whose
// pieces are cut back, in the old segment and in the new ones; a crash
// with one more stream's pieces written recovers every acknowledged
// batch in order over the segments.
func TestStreamAcrossSegmentRoll(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		mem, p, options, serial := piecedSetup(t, seed, engine.DurabilityPersisted)
		other := uint64(9000)
		for round := range 7 {
			if round%2 == 1 {
				dropped := enginetest.Batch(5, largeMessages(&other, 64)...)
				f := openStream(t, mem, p, dropped, seed*10+uint64(round))
				if err := f.feed(len(dropped) * 3 / 4); err != nil {
					t.Fatal(err)
				}
				memBackend{mem}.drain()
				p.StreamAbort(f.id)
				memBackend{mem}.drain()
				continue
			}
			base := p.OffsetNext()
			op, err := openStream(t, mem, p, enginetest.Batch(7, largeMessages(&serial, 64)...), seed*10+uint64(round)).finish(new(int))
			memBackend{mem}.drain()
			if err != nil || op.Err != nil || op.BaseOffset != base {
				t.Fatalf("seed %d round %d: stream at %d: %v %v", seed, round, op.BaseOffset, err, op.Err)
			}
			if p.SizeBytes() >= options.SegmentBytes {
				// The roll waits for the next append; a stream is refused until then.
				small := enginetest.Batch(6, randomMessages(newRandom(seed), &serial, 2, 500)...)
				if _, err := appendBatch(t, memBackend{mem}, p, small, 30); err != nil {
					t.Fatal(err)
				}
			}
		}
		if p.SegmentCount() < 3 || p.StreamedBatches() != 4 {
			t.Fatalf("seed %d: %d segments, %d streamed", seed, p.SegmentCount(), p.StreamedBatches())
		}
		acknowledged := p.OffsetNext()
		last := enginetest.Batch(5, largeMessages(&other, 64)...)
		f := openStream(t, mem, p, last, seed)
		if err := f.feed(len(last) * 3 / 4); err != nil {
			t.Fatal(err)
		}
		mem.Run(1 + int(seed%2))
		clone := memBackend{mem.Crash(seed)}
		reopened := mustOpen(t, clone, options)
		checkMessages(t, clone, reopened, 0, acknowledged)
		closePartition(t, memBackend{mem}, p)
		checkMessages(t, memBackend{mem}, mustOpen(t, memBackend{mem}, options), 0, acknowledged)
	}
}
