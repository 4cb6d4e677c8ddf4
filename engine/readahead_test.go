package engine_test

import (
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// countingBackend counts the reads and fdatasyncs a partition submits.
type countingBackend struct {
	memBackend
	reads int
	syncs int
}

func (b *countingBackend) Submit(op *engine.Op) {
	switch op.Code {
	case engine.OpRead:
		b.reads++
	case engine.OpSync:
		b.syncs++
	}
	b.memBackend.Submit(op)
}

// TestSequentialPollReads: a consumer polling batch after batch of
// ~1 MB records, none cached, costs at most one disk read per batch once
// the read buffer has grown to hold one, and after the first poll each
// finds its batch read ahead while the previous reply was handled: it
// completes inside Poll, with no read of its own to wait for.
func TestSequentialPollReads(t *testing.T) {
	storage := &countingBackend{memBackend: memBackend{enginetest.NewMemStorage(9)}}
	options := engine.PartitionOptions{Directory: "/r/p", SegmentBytes: 1 << 30, Logger: quiet}
	p := mustOpen(t, storage, options)
	messages := make([]enginetest.Message, 1000)
	for index := range messages {
		messages[index] = enginetest.Message{Payload: make([]byte, 1000)}
	}
	record := enginetest.Batch(1, messages...)
	const batches = 24
	for index := range batches {
		if _, err := appendBatch(t, storage, p, record, uint64(1+index)); err != nil {
			t.Fatal(err)
		}
	}
	done := 0
	op := &engine.PollOp{Strategy: engine.PollOffset, Count: 1000, Out: make([]byte, 0, 2<<20), Done: func(*engine.PollOp) { done++ }}
	storage.reads = 0
	inside := 0
	for index := range batches {
		op.Value, op.Out = uint64(index*1000), op.Out[:0]
		if err := p.Poll(op); err != nil {
			t.Fatal(err)
		}
		inside += done
		storage.drain()
		done = 0
		if op.Err != nil || op.Messages != 1000 || op.OffsetFirst != uint64(index*1000) {
			t.Fatalf("poll %d: %d messages from %d, %v", index, op.Messages, op.OffsetFirst, op.Err)
		}
	}
	t.Logf("%d reads for %d polls of one batch each, %d served by a read-ahead", storage.reads, batches, inside)
	if storage.reads > batches+2 {
		t.Fatalf("%d disk reads for %d sequential polls of one batch each", storage.reads, batches)
	}
	if inside < batches-2 {
		t.Fatalf("%d of %d sequential polls found their batch read ahead", inside, batches)
	}
}
