package replicalog

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
)

// opener loads a log: superblock copies, then the journal scan, then the
// choice of the newest copy the journal supports; see doc.go.
type opener struct {
	l      *Log
	done   func(*Log, Loaded, error)
	c      chain
	loaded Loaded

	copies  [2]superCopy
	valid   [2]bool
	empty   [2]bool
	reasons [2]string

	header    fileHeader
	fileBytes int64
	scan      scanner
	// validEnd is the end of the journal's valid prefix; badReason why the
	// record there (if any) was refused.
	validEnd  int64
	badReason string
	// rewrite asks to overwrite the newest copy with the chosen one.
	rewrite bool
}

func (o *opener) start() {
	o.c.storage = o.l.storage
	o.c.op.Callback = o.c.callback
	o.loaded.Slots = make([][]byte, o.l.slotCount)
	o.c.op.Code, o.c.op.Path = engine.OpMkdir, o.l.directory
	o.c.run(o.then(o.openDirectory))
}

// then wraps a step so an op error ends the open.
func (o *opener) then(next func(*engine.Op)) func(*engine.Op) {
	return func(op *engine.Op) {
		if op.Err != nil {
			o.finish(fmt.Errorf("replicalog: open %s: %w", o.l.directory, op.Err))
			return
		}
		next(op)
	}
}

func (o *opener) set(code engine.OpCode, file engine.File, path string, flags engine.OpenFlags) {
	o.c.op.Code, o.c.op.File, o.c.op.Path, o.c.op.Flags = code, file, path, flags
	o.c.op.Buffer, o.c.op.Position = nil, 0
}

func (o *opener) openDirectory(*engine.Op) {
	o.set(engine.OpOpen, 0, o.l.directory, engine.OpenDirectory)
	o.c.run(o.then(func(op *engine.Op) {
		o.l.directoryFile = engine.File(op.Result)
		// A compaction that did not reach its rename left this behind.
		o.set(engine.OpRemove, 0, o.l.path(compactName), 0)
		o.c.run(o.then(func(*engine.Op) {
			o.set(engine.OpOpen, 0, o.l.path(journalName), 0)
			o.c.run(o.journalOpened)
		}))
	}))
}

func (o *opener) journalOpened(op *engine.Op) {
	if errors.Is(op.Err, syscall.ENOENT) {
		o.set(engine.OpOpen, 0, o.l.path(journalName), engine.OpenCreate)
		o.c.run(o.then(func(op *engine.Op) {
			o.l.journalFile = engine.File(op.Result)
			o.createJournal()
		}))
		return
	}
	if op.Err != nil {
		o.finish(fmt.Errorf("replicalog: open %s: %w", o.l.path(journalName), op.Err))
		return
	}
	o.l.journalFile = engine.File(op.Result)
	o.set(engine.OpSize, o.l.journalFile, "", 0)
	o.c.run(o.then(o.readHead))
}

// createJournal writes a fresh journal's header (generation 1) and sizes
// it to recordsAt; open syncs it and the directory before returning.
func (o *opener) createJournal() {
	o.header = fileHeader{slotCount: uint32(o.l.slotCount), generation: 1, baseBytes: recordsAt}
	o.empty = [2]bool{true, true}
	o.valid = [2]bool{}
	buffer := make([]byte, fileHeaderBytes)
	o.header.encode(buffer)
	o.set(engine.OpTruncate, o.l.journalFile, "", 0)
	o.c.run(o.then(func(*engine.Op) {
		o.set(engine.OpWrite, o.l.journalFile, "", 0)
		o.c.op.Buffer = buffer
		o.c.run(o.then(func(*engine.Op) {
			o.fileBytes, o.validEnd = recordsAt, recordsAt
			o.decide()
		}))
	}))
}

// readHead reads the header and both superblock copies, then scans the
// records.
func (o *opener) readHead(op *engine.Op) {
	o.fileBytes = op.Result
	if o.fileBytes > journalBytesMax {
		o.finish(&engine.CorruptError{Path: o.l.path(journalName), Reason: "journal larger than journalBytesMax"})
		return
	}
	head := make([]byte, min(o.fileBytes, recordsAt))
	o.set(engine.OpRead, o.l.journalFile, "", 0)
	o.c.op.Buffer = head
	o.c.run(o.then(func(op *engine.Op) {
		head = head[:op.Result]
		for i := range o.copies {
			region := head[min(int64(len(head)), copyAt(i)):min(int64(len(head)), copyAt(i)+copyBytes)]
			o.copies[i], o.empty[i], o.reasons[i] = decodeSuperCopy(region)
			o.valid[i] = !o.empty[i] && o.reasons[i] == ""
		}
		header, reason := decodeFileHeader(head)
		if reason != "" {
			if o.fresh() {
				o.l.logger.Warn("recreating a journal whose creation was torn", "reason", reason)
				o.createJournal()
				return
			}
			o.finish(&engine.CorruptError{Path: o.l.path(journalName), Reason: reason})
			return
		}
		if int(header.slotCount) != o.l.slotCount {
			o.finish(fmt.Errorf("replicalog: %s holds %d slots, opened with %d",
				o.l.path(journalName), header.slotCount, o.l.slotCount))
			return
		}
		o.header = header
		if o.fileBytes <= recordsAt {
			o.fileBytes = recordsAt // the copy regions are sparse until written
			o.scanned(recordsAt, "")
			return
		}
		o.scan.init(o, recordsAt)
		o.scan.next()
	}))
}

// fresh reports a superblock that was never written.
func (o *opener) fresh() bool { return o.empty[0] && o.empty[1] }

// record applies one valid journal record found at position.
func (o *opener) record(record parsedRecord, position int64) {
	o.l.setSlot(record.slot, slotRecord{
		position: position, bytes: record.bytes, op: record.op, erased: len(record.message) == 0,
	})
	o.loaded.Slots[record.slot] = append(o.loaded.Slots[record.slot][:0], record.message...)
}

// scanned ends the scan: validEnd is where the valid records end.
func (o *opener) scanned(validEnd int64, reason string) {
	o.validEnd, o.badReason = validEnd, reason
	o.scan.buffer = nil
	o.decide()
}

func (o *opener) finish(err error) {
	done := o.done
	o.done = nil
	invariant.Assert(done != nil, "replicalog: open finishes once")
	if err != nil {
		o.l.logger.Error("replication log refused", "error", err)
		done(nil, Loaded{}, err)
		return
	}
	for i, message := range o.loaded.Slots {
		if len(message) == 0 {
			o.loaded.Slots[i] = nil
		}
	}
	done(o.l, o.loaded, nil)
}
