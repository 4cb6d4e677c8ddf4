package engine

import (
	"fmt"

	"github.com/whippetio/whippet/internal/invariant"
)

// roller seals the active segment and opens the next one. The same stages
// (from rollOpenLog on) create a partition's first segment.
type roller struct {
	p     *Partition
	op    Op
	stage rollStage
	next  *segment
	// done runs after the new segment is in place; nil means resume flushing.
	done func(error)
	// waiting is set while the index writer drains the old segment's
	// entries, or an allocation for it completes.
	waiting bool
}

type rollStage uint8

const (
	// rollTruncateLog cuts space allocated ahead off the sealed file.
	rollTruncateLog rollStage = iota + 1
	rollSyncLog
	rollSyncIndex
	rollOpenLog
	rollOpenIndex
	rollSyncDirectory
)

func (r *roller) init(p *Partition) {
	r.p = p
	r.op.Callback = r.stepDone
}

// start seals the full active segment once its index entries are written
// and no allocation for it is in flight.
func (r *roller) start() {
	p := r.p
	invariant.Assert(p.flushPhase == flushIdle, "roll starts from idle")
	p.flushPhase = flushRolling
	r.done = nil
	r.waiting = true
	p.index.start()
	r.drained()
}

// drained continues a roll that waited for the index writer or an
// allocation.
func (r *roller) drained() {
	p := r.p
	if !r.waiting || p.index.busy || p.index.behind() || p.space.busy() {
		return
	}
	r.waiting = false
	r.stage = rollSyncLog
	if p.active().spaceAhead {
		r.stage = rollTruncateLog
	}
	r.step()
}

// create opens a fresh segment at offsetStart as the active one (first
// segment, or after a purge) and calls done.
func (r *roller) create(offsetStart uint64, done func(error)) {
	r.done = done
	r.next = &segment{offsetStart: offsetStart, offsetEnd: offsetStart}
	r.stage = rollOpenLog
	r.step()
}

func (r *roller) step() {
	p := r.p
	r.op.Flags, r.op.Buffer, r.op.Path = 0, nil, ""
	switch r.stage {
	case rollTruncateLog:
		active := p.active()
		r.op.Code, r.op.File, r.op.Position = OpTruncate, active.logFile, active.sizeBytes
	case rollSyncLog:
		r.op.Code, r.op.File = OpSync, p.active().logFile
	case rollSyncIndex:
		r.op.Code, r.op.File = OpSync, p.active().indexFile
	case rollOpenLog:
		if r.next == nil {
			r.next = &segment{offsetStart: p.active().offsetEnd, offsetEnd: p.active().offsetEnd}
		}
		r.op.Code, r.op.Flags = OpOpen, OpenCreate|OpenDirect
		r.op.Path = r.next.logPath(p.options.Directory)
	case rollOpenIndex:
		r.op.Code, r.op.Flags = OpOpen, OpenCreate|OpenDirect
		r.op.Path = r.next.indexPath(p.options.Directory)
	case rollSyncDirectory:
		r.op.Code, r.op.File, r.op.Flags = OpSync, p.directory, OpenDirectory
	}
	p.storage.Submit(&r.op)
}

func (r *roller) stepDone(op *Op) {
	if r.stage == rollTruncateLog {
		r.p.cutDone(op, "roll") // a failed cut does not stop the roll
		r.stage++
		r.step()
		return
	}
	if op.Err != nil {
		r.failed(op)
		return
	}
	switch r.stage {
	case rollOpenLog:
		r.next.logFile = File(op.Result)
	case rollOpenIndex:
		r.next.indexFile = File(op.Result)
		r.next.filesOpen = true
	case rollSyncDirectory:
		r.finish()
		return
	}
	r.stage++
	invariant.Assert(r.stage <= rollSyncDirectory, "roll stages end with the directory sync")
	r.step()
}

func (r *roller) finish() {
	p := r.p
	next := r.next
	r.next = nil
	if len(p.segments) > 0 {
		p.active().sealed = true
	}
	p.segments = append(p.segments, next)
	p.index.reset()
	if r.done != nil {
		done := r.done
		r.done = nil
		done(nil)
		return
	}
	p.flushPhase = flushIdle
	p.startFlush()
	p.resume()
}

// failed handles a roll op error: a failed sync is fatal; a failed open
// (ENOSPC, EMFILE) fails the waiting appends like a failed write.
func (r *roller) failed(op *Op) {
	p := r.p
	if op.Code == OpSync {
		p.fail(&FatalError{Op: "fdatasync", Path: p.active().logPath(p.options.Directory), Err: op.Err})
		return
	}
	if r.next != nil && r.next.filesOpen {
		invariant.Assert(false, "open failures happen before both files are open")
	}
	err := fmt.Errorf("engine: open %s: %w", op.Path, op.Err)
	if r.next != nil && r.stage == rollOpenIndex {
		p.storage.Submit(&Op{Code: OpClose, File: r.next.logFile, Callback: func(*Op) {}})
	}
	r.next = nil
	if r.done != nil {
		done := r.done
		r.done = nil
		done(err)
		return
	}
	p.logger.Warn("segment rollover failed", "error", err)
	if p.options.Durability == DurabilityMemory {
		p.flushPhase = flushStalled
		return
	}
	p.flushPhase = flushIdle
	p.offsetNext = p.offsetVisible
	p.dedup.reset()
	buffer := p.pending
	p.acks = append(p.acks[:0], buffer.ops...)
	position, prefix := buffer.filePosition, buffer.prefix()
	buffer.reset(buffer.segment, position, prefix)
	for _, ackOp := range p.acks {
		ackOp.Err = err
		ackOp.Done(ackOp)
	}
	clear(p.acks)
	p.resume()
}
