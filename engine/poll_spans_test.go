package engine_test

import (
	"bytes"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// joinSpans rebuilds the reply a poll with spans stands for: Out with
// each span's bytes inserted at its position.
func joinSpans(out []byte, spans []engine.PollSpan) []byte {
	var joined []byte
	at := 0
	for _, span := range spans {
		joined = append(joined, out[at:span.At]...)
		joined = append(joined, span.Data...)
		at = span.At
	}
	return append(joined, out[at:]...)
}

// pollSpans runs a poll that may leave records in place and checks the
// joined reply decodes to the messages it reports.
func pollSpans(t *testing.T, storage backend, p *engine.Partition, op *engine.PollOp) []byte {
	t.Helper()
	called := 0
	op.Done = func(*engine.PollOp) { called++ }
	if err := p.Poll(op); err != nil {
		t.Fatalf("poll: %v", err)
	}
	storage.drain()
	if called != 1 || op.Err != nil {
		t.Fatalf("poll: callback ran %d times, error %v", called, op.Err)
	}
	joined := joinSpans(op.Out, op.Spans)
	if messages, err := enginetest.Decode(joined); err != nil || len(messages) != int(op.Messages) {
		t.Fatalf("poll with spans: %d messages reported, decoded %d (%v)", op.Messages, len(messages), err)
	}
	return joined
}

// TestPollSpansMatchCopies: a poll allowed to leave cached records in
// place returns, Out and spans joined, the very bytes of a poll that
// copies everything, with the same size limit; records still in the
// write buffers or beyond the span capacity are copied; the cache counts
// one pin per span until each is released, and a cache whose records are
// pinned refuses new ones rather than overwrite them. Method: a 1 MiB
// cache, one partition, batches of random sizes, polls from every
// offset with room for a few batches.
func TestPollSpansMatchCopies(t *testing.T) {
	storage, cache, p := openCachedPartition(t, 21, "/s/p")
	random := newRandom(22)
	serial := uint64(0)
	var model []enginetest.Message
	for range 12 {
		messages := randomMessages(random, &serial, 1+random.IntN(20), 2000)
		if _, err := appendBatch(t, storage, p, enginetest.Batch(1, messages...), uint64(1+len(model))); err != nil {
			t.Fatal(err)
		}
		model = append(model, messages...)
	}
	for offset := 0; offset < len(model); offset += 1 + random.IntN(5) {
		room := 20000 + random.IntN(60000)
		copied := &engine.PollOp{Strategy: engine.PollOffset, Value: uint64(offset), Count: 100, Out: make([]byte, 0, room)}
		poll(t, storage, p, copied)
		spanned := &engine.PollOp{Strategy: engine.PollOffset, Value: uint64(offset), Count: 100, Out: make([]byte, 0, room),
			Spans: make([]engine.PollSpan, 0, 2)}
		if !bytes.Equal(pollSpans(t, storage, p, spanned), copied.Out) || spanned.Messages != copied.Messages {
			t.Fatalf("offset %d: a poll with spans returned other bytes than one with copies", offset)
		}
		if cache.Stats().PinnedCount != len(spanned.Spans) {
			t.Fatalf("offset %d: %d pins for %d spans", offset, cache.Stats().PinnedCount, len(spanned.Spans))
		}
		for index := range spanned.Spans {
			spanned.Spans[index].Release()
		}
	}
	pinning := &engine.PollOp{Strategy: engine.PollFirst, Count: 100, Out: make([]byte, 0, 1<<20),
		Spans: make([]engine.PollSpan, 0, 64)}
	pinnedBytes := bytes.Clone(pollSpans(t, storage, p, pinning))
	if len(pinning.Spans) == 0 {
		t.Fatal("no record was left in place")
	}
	for range 40 { // far more than the cache holds: it must not overwrite the pinned records
		messages := randomMessages(random, &serial, 20, 2000)
		if _, err := appendBatch(t, storage, p, enginetest.Batch(1, messages...), uint64(1+len(model))); err != nil {
			t.Fatal(err)
		}
		model = append(model, messages...)
	}
	if !bytes.Equal(joinSpans(pinning.Out, pinning.Spans), pinnedBytes) {
		t.Fatal("records pinned for a send changed under later appends")
	}
	for index := range pinning.Spans {
		pinning.Spans[index].Release()
	}
	if stats := cache.Stats(); stats.PinnedCount != 0 {
		t.Fatalf("%d pins left after every release", stats.PinnedCount)
	}
	for offset := 0; offset < len(model); offset += 1 + random.IntN(40) {
		count := min(1+random.IntN(300), len(model)-offset)
		compareMessages(t, poll(t, storage, p, &engine.PollOp{Strategy: engine.PollOffset, Value: uint64(offset),
			Count: uint32(count)}), model[offset:offset+count], uint64(offset))
	}
}
