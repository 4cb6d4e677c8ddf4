package engine

import "github.com/whippetio/whippet/internal/invariant"

// indexWriter appends the active segment's new index entries to its
// .index with O_DIRECT, rewriting the partial last block each time. It runs
// beside the log writes: an entry is added only after its chunk's write
// (and fdatasync, when persisted) completed, so an entry on disk proves
// that its batch was durable (recovery's witness, doc.go invariant 4).
type indexWriter struct {
	p      *Partition
	op     Op
	buffer []byte
	busy   bool
	target *segment
	// written is the entry count the write in flight brings the file to.
	written int
}

func (w *indexWriter) init(p *Partition) {
	w.p = p
	w.op.Callback = w.done
}

// reset points the writer at a new active segment.
func (w *indexWriter) reset() {
	invariant.Assert(!w.busy, "index writer idle at reset")
	w.target = nil
}

// behind reports whether the active segment has entries not on file.
func (w *indexWriter) behind() bool {
	active := w.p.active()
	return active.indexWritten < len(active.index)
}

func (w *indexWriter) start() {
	if w.busy || !w.behind() {
		return
	}
	if w.buffer == nil { // a partition never written to holds no index buffer
		w.buffer = w.p.options.Allocate(indexBufferBytes)
		invariant.Assert(aligned(w.buffer) && len(w.buffer) >= indexBufferBytes, "allocated index buffer fits")
	}
	target := w.p.active()
	blockStart := alignDown(int64(target.indexWritten * indexEntryBytes))
	first := int(blockStart / indexEntryBytes)
	end := len(target.index)
	if limit := first + (indexBufferBytes-blockBytes)/indexEntryBytes; end > limit {
		end = limit
	}
	var entry [indexEntryBytes]byte
	for index := first; index < end; index++ {
		putIndexEntry(entry[:], target.index[index])
		at := int64(index*indexEntryBytes) - blockStart
		if at < 0 {
			copy(w.buffer, entry[-at:])
		} else {
			copy(w.buffer[at:], entry[:])
		}
	}
	used := int64(end*indexEntryBytes) - blockStart
	length := alignUp(used)
	clear(w.buffer[used:length])
	w.busy = true
	w.target = target
	w.written = end
	w.op.Code = OpWrite
	w.op.File = target.indexFile
	w.op.Buffer = w.buffer[:length]
	w.op.Position = blockStart
	w.p.storage.Submit(&w.op)
}

// done records the write. A failed index write is logged and skipped: the
// index is a hint that recovery rebuilds when short.
func (w *indexWriter) done(op *Op) {
	invariant.Assert(w.busy, "index completion while busy")
	w.busy = false
	if op.Err != nil {
		w.p.logger.Warn("index write failed; recovery rebuilds the index", "error", op.Err)
	}
	w.target.indexWritten = w.written
	if w.p.fatal != nil {
		return
	}
	if w.target == w.p.active() && w.behind() {
		w.start()
		return
	}
	w.p.roll.drained()
	w.p.resume()
}
