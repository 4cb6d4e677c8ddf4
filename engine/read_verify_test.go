package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// TestDiskReadChecksums flips one payload byte of a sealed segment while
// the partition is open: a poll reading it from disk fails with
// ErrCorrupt, unless the partition serves disk reads unverified
// (system.partition.validate_checksum = false), when it returns the
// flipped byte.
func TestDiskReadChecksums(t *testing.T) {
	for _, unverified := range []bool{false, true} {
		mem := enginetest.NewMemStorage(3)
		storage := memBackend{mem}
		options := testOptions()
		options.ReadChecksumsUnverified = unverified
		p, model := filled(t, storage, options, 120)
		if p.SegmentCount() < 2 {
			t.Fatalf("120 batches made %d segments", p.SegmentCount())
		}
		mem.Flip(firstLog, 70000) // inside a payload of the first segment

		op := &engine.PollOp{Strategy: engine.PollOffset, Value: 0, Count: 1 << 20, Out: make([]byte, 0, 64<<20)}
		op.Done = func(*engine.PollOp) {}
		if err := p.Poll(op); err != nil {
			t.Fatalf("poll: %v", err)
		}
		storage.drain()
		if !unverified {
			if !errors.Is(op.Err, engine.ErrCorrupt) {
				t.Fatalf("verified read of a flipped byte: error %v, want ErrCorrupt", op.Err)
			}
			continue
		}
		if op.Err != nil {
			t.Fatalf("unverified read: %v", op.Err)
		}
		// The bytes served are the flipped ones: the client's own check
		// (here the decoder's) is what catches them.
		if int(op.Messages) != len(model) {
			t.Fatalf("unverified read served %d messages, want %d", op.Messages, len(model))
		}
		if _, err := enginetest.Decode(op.Out); err == nil || !strings.Contains(err.Error(), "checksum") {
			t.Fatalf("unverified read decoded with %v, want a checksum mismatch", err)
		}
	}
}
