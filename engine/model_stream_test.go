package engine_test

import (
	"errors"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// streamOne appends one large batch while it arrives (stream.go): fed in
// random chunks, with storage completions in between on the in-memory
// storage, and now and then dropped or corrupted halfway, when nothing of
// it may be stored. A partition that cannot stream now (not idle, memory
// durability, a dedup window, a storage that does not kick) refuses it
// and nothing is appended.
func (d *differential) streamOne() {
	messages := randomMessages(d.random, &d.serial, 100+d.random.IntN(40), 12000+d.random.IntN(6000))
	record := enginetest.Batch(1, messages...)
	d.clock += uint64(d.random.IntN(3))
	fate := d.random.IntN(8) // 0: dropped halfway, 1: a corrupt frame, else stored
	if fate == 1 {
		corruptFrame(record, 256+d.random.IntN(len(record)-20000))
	}
	fed := 2048
	id, err := d.p.StreamOpen(record[:fed], len(record), d.clock+1)
	if err != nil {
		if !errors.Is(err, engine.ErrBusy) {
			d.t.Fatalf("stream open: %v", err)
		}
		return
	}
	for {
		fed = min(len(record)-1, fed+1+d.random.IntN(200<<10))
		if err := d.p.StreamFeed(id, record[:fed]); err != nil {
			if fate != 1 || !errors.Is(err, engine.ErrInvalidBatch) {
				d.t.Fatalf("stream feed: %v", err)
			}
			d.storage.drain()
			return
		}
		if mem, ok := d.storage.(memBackend); ok && d.random.IntN(2) == 0 {
			mem.Run(1)
		}
		if fate == 0 && fed > len(record)/2 {
			d.p.StreamAbort(id)
			d.storage.drain()
			return
		}
		if fed == len(record)-1 {
			break
		}
	}
	op := &engine.AppendOp{Batch: record, Timestamp: d.clock + 1, Done: func(*engine.AppendOp) {}}
	err = d.p.StreamFinish(id, op)
	if fate == 1 {
		if !errors.Is(err, engine.ErrInvalidBatch) {
			d.t.Fatalf("stream of a corrupt batch finished with %v", err)
		}
		d.storage.drain()
		return
	}
	if err != nil || op.BaseOffset != d.model.next() || op.Count != uint32(len(messages)) {
		d.t.Fatalf("stream stored %d at %d, model next %d: %v", op.Count, op.BaseOffset, d.model.next(), err)
	}
	d.storage.drain()
	if op.Err != nil {
		d.t.Fatalf("streamed append: %v", op.Err)
	}
	d.model.messages = append(d.model.messages, messages...)
	for range messages {
		d.model.timestamps = append(d.model.timestamps, d.clock+1)
	}
	d.streamed++
}
