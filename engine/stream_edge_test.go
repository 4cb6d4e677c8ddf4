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
// or none), and a crash with only the header of the next streamed batch
// written (the old pieces lying where its final piece should be)
// recovers exactly the acknowledged batches: the stale pieces never
// complete a batch.
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
		var ran *engine.Op
		mem.Inject = func(op *engine.Op) error { ran = op; return nil }
		if _, err := g.finish(new(int)); err != nil {
			t.Fatal(err)
		}
		for mem.Pending() > 0 && !(ran != nil && ran.Code == engine.OpWrite && ran.Position <= start) {
			mem.Run(1)
		}
		mem.Inject = nil
		if mem.Pending() == 0 {
			continue // the final piece went first: not this case
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
		t.Fatal("no seed crashed with the header written and the final piece not")
	}
}
