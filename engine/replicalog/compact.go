package replicalog

import (
	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
)

// shouldCompact reports whether the journal holds compactRatio times
// more bytes than it needs.
func (l *Log) shouldCompact() bool {
	return l.journalBytes > compactRatio*l.liveBytes && l.journalBytes > compactBytesMin
}

// compactor rewrites the journal's live records into a new file of the
// next generation: write, fdatasync, rename over the journal, fsync the
// directory. A crash before the rename leaves the old journal whole (the
// orphan is removed at open); after it, the new one, already durable.
type compactor struct {
	l        *Log
	c        chain
	file     engine.File
	header   fileHeader
	order    []int // the live slots, in slot order
	next     int
	buffer   []byte
	filled   int
	position int64 // new-file position of buffer[0]
	moved    []int64
}

func (l *Log) compact() {
	invariant.Assert(l.persist.current == nil, "replicalog: compaction runs between Persists")
	k := &compactor{l: l, position: recordsAt, moved: make([]int64, l.slotCount)}
	k.c.storage = l.storage
	k.c.op.Callback = k.c.callback
	for slot, record := range l.slots {
		if record.bytes > 0 && !record.erased {
			k.order = append(k.order, slot)
		}
	}
	k.header = fileHeader{slotCount: uint32(l.slotCount), generation: l.generation + 1, baseBytes: uint64(l.liveBytes)}
	l.logger.Info("compacting journal", "journal_bytes", l.journalBytes, "live_bytes", l.liveBytes)
	k.set(engine.OpOpen, 0, l.path(compactName), engine.OpenCreate)
	k.c.run(k.then(func(op *engine.Op) {
		k.file = engine.File(op.Result)
		k.set(engine.OpTruncate, k.file, "", 0)
		k.c.run(k.then(k.writeHeader))
	}))
}

func (k *compactor) set(code engine.OpCode, file engine.File, path string, flags engine.OpenFlags) {
	k.c.op.Code, k.c.op.File, k.c.op.Path, k.c.op.Flags = code, file, path, flags
	k.c.op.Buffer, k.c.op.Position, k.c.op.Target = nil, 0, ""
}

// then wraps a step so an op error stops the log: the old journal stays
// valid on disk, but its in-memory state is no longer certain.
func (k *compactor) then(next func(*engine.Op)) func(*engine.Op) {
	return func(op *engine.Op) {
		if op.Err != nil {
			k.l.fail(op, "journal compaction", k.l.path(compactName))
			k.l.persist.compacted()
			return
		}
		next(op)
	}
}

// writeHeader writes the new file's header and the current superblock
// copy (same sequence and region, the new generation), so the new file
// alone holds the whole state.
func (k *compactor) writeHeader(*engine.Op) {
	l := k.l
	buffer := make([]byte, fileHeaderBytes)
	k.header.encode(buffer)
	k.set(engine.OpWrite, k.file, "", 0)
	k.c.op.Buffer = buffer
	if l.sequence == 0 {
		k.c.run(k.then(k.copyNext))
		return
	}
	k.c.run(k.then(func(*engine.Op) {
		c := l.superCopy(k.header.generation, l.liveBytes, l.liveBytes)
		k.set(engine.OpWrite, k.file, "", 0)
		k.c.op.Buffer = c.encode(make([]byte, copyHeaderBytes+len(c.hardState)+len(c.app)))
		k.c.op.Position = copyAt(regionOf(l.sequence))
		k.c.run(k.then(k.copyNext))
	}))
}

// copyNext reads the next live record into the gather buffer, or writes
// the buffer out when it is full or every record is in.
func (k *compactor) copyNext(*engine.Op) {
	l := k.l
	if k.next == len(k.order) {
		k.flush(k.sync)
		return
	}
	record := l.slots[k.order[k.next]]
	if k.filled > 0 && k.filled+int(record.bytes) > max(len(k.buffer), readChunkBytes) {
		k.flush(k.copyNext)
		return
	}
	if need := k.filled + int(record.bytes); need > len(k.buffer) {
		grown := make([]byte, max(need, readChunkBytes))
		copy(grown, k.buffer[:k.filled])
		k.buffer = grown
	}
	target := k.buffer[k.filled : k.filled+int(record.bytes)]
	k.set(engine.OpRead, l.journalFile, "", 0)
	k.c.op.Buffer, k.c.op.Position = target, record.position
	k.c.run(k.then(func(op *engine.Op) {
		parsed, _, reason := parseRecord(target[:op.Result], l.slotCount)
		if reason == "" && (op.Result != record.bytes || parsed.slot != k.order[k.next]) {
			reason = "record does not match the journal index"
		}
		if reason != "" {
			l.fatal = &engine.CorruptError{Path: l.path(journalName), Position: record.position, Reason: reason}
			l.logger.Error("replication log stopped", "error", l.fatal)
			l.persist.compacted()
			return
		}
		k.moved[k.order[k.next]] = k.position + int64(k.filled)
		k.filled += int(record.bytes)
		k.next++
		k.copyNext(nil)
	}))
}

func (k *compactor) flush(then func(*engine.Op)) {
	if k.filled == 0 {
		then(nil)
		return
	}
	k.set(engine.OpWrite, k.file, "", 0)
	k.c.op.Buffer, k.c.op.Position = k.buffer[:k.filled], k.position
	k.c.run(k.then(func(op *engine.Op) {
		k.position += int64(k.filled)
		k.filled = 0
		then(op)
	}))
}

// sync makes the new file durable, then swaps it in by rename.
func (k *compactor) sync(*engine.Op) {
	l := k.l
	invariant.Assert(k.position == l.liveBytes, "replicalog: compaction wrote exactly the live bytes")
	k.set(engine.OpSync, k.file, "", 0)
	k.c.run(k.then(func(*engine.Op) {
		k.set(engine.OpClose, l.journalFile, "", 0)
		k.c.run(k.then(func(*engine.Op) {
			k.set(engine.OpRename, 0, l.path(compactName), 0)
			k.c.op.Target = l.path(journalName)
			k.c.run(k.then(func(*engine.Op) {
				k.set(engine.OpSync, l.directoryFile, "", engine.OpenDirectory)
				k.c.run(k.then(k.done))
			}))
		}))
	}))
}

func (k *compactor) done(*engine.Op) {
	l := k.l
	l.journalFile = k.file
	l.generation = k.header.generation
	l.journalBytes, l.syncedBytes = k.position, k.position
	l.persist.dirty = false
	for _, slot := range k.order {
		l.slots[slot].position = k.moved[slot]
	}
	for slot := range l.slots {
		if l.slots[slot].erased {
			l.slots[slot] = slotRecord{}
		}
	}
	l.logger.Info("journal compacted", "journal_bytes", l.journalBytes, "generation", l.generation)
	l.persist.compacted()
}
