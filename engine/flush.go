package engine

import (
	"fmt"

	"github.com/whippetio/whippet/internal/invariant"
)

// startFlush issues the next group write: everything appended since the
// last write was issued goes out in one write of the pending buffer,
// which swaps with the in-flight one (group commit).
func (p *Partition) startFlush() {
	if p.flushPhase != flushIdle || p.pending.empty() || p.state != stateOpen {
		return
	}
	invariant.Assert(p.inflight == nil, "no write in flight when idle")
	active := p.active()
	if active.sizeBytes >= p.options.SegmentBytes {
		p.roll.start()
		return
	}
	if p.pending.segment != active {
		p.pending.rebase(active)
	}
	invariant.Assert(p.pending.filePosition+int64(p.pending.prefixBytes) == active.sizeBytes,
		"pending buffer continues the active segment")
	p.swapBuffers()
	position, prefix := p.inflight.tail()
	p.pending.reset(active, position, prefix)
	p.inflight.writeStart, p.inflight.writeEnd = 0, p.inflight.writeLength()
	p.submitWrite()
}

// swapBuffers makes the pending buffer the in-flight one; the caller
// resets the other as the new pending buffer.
func (p *Partition) swapBuffers() {
	invariant.Assert(p.inflight == nil, "one buffer in flight")
	p.inflight = p.pending
	if p.pending == &p.buffers[0] {
		p.pending = &p.buffers[1]
	} else {
		p.pending = &p.buffers[0]
	}
}

// submitWrite writes the in-flight buffer's range [writeStart, writeEnd):
// the whole buffer, or one piece of it (pieces.go).
func (p *Partition) submitWrite() {
	buffer := p.inflight
	invariant.Assert(aligned(buffer.data), "write buffer is aligned")
	p.flushPhase = flushWriting
	p.writeInflight(buffer.writeStart, buffer.writeEnd)
}

// writeInflight writes the in-flight buffer's [start, end), whole blocks,
// with flushOp: a group write or its piece, or a stream's.
func (p *Partition) writeInflight(start, end int) {
	buffer := p.inflight
	invariant.Assert(start%blockBytes == 0 && end%blockBytes == 0, "a write covers whole blocks")
	invariant.Assert(start < end, "a write is not empty")
	p.flushOp.Code = OpWrite
	p.flushOp.File = buffer.segment.logFile
	p.flushOp.Buffer = buffer.data[start:end]
	p.flushOp.Position = buffer.filePosition + int64(start)
	p.flushOp.InPlace = buffer.lender != nil // a lent region stays mapped until the write ends
	p.storage.Submit(&p.flushOp)
}

func (p *Partition) flushCallback(op *Op) {
	switch p.flushPhase {
	case flushWriting:
		p.writeDone(op)
	case flushSyncing:
		p.syncDone(op)
	case flushStreaming:
		p.streamWriteDone(op)
	case flushTruncating:
		if op.Err != nil {
			p.logger.Warn("cutting the log back to its batches failed; the next write overwrites what lies past them, a roll or Close cuts it",
				"error", op.Err)
		}
		p.flushPhase = flushIdle
		p.startFlush()
		p.resume()
	default:
		invariant.Assert(false, "flush completion in a flush phase")
	}
}

func (p *Partition) writeDone(op *Op) {
	buffer := p.inflight
	if op.Err != nil {
		p.writeFailed(op.Err)
		return
	}
	invariant.Assert(op.Result == int64(len(op.Buffer)), "whole write completed")
	if length := buffer.writeLength(); buffer.writeEnd < length {
		// A piece: the rest of the buffer follows it.
		buffer.writeStart, buffer.writeEnd = buffer.writeEnd, length
		p.submitWrite()
		return
	}
	p.writeCompleted()
}

// writeCompleted takes the in-flight buffer's completed write into its segment,
// then fdatasyncs it (DurabilityPersisted) or makes it visible at once.
func (p *Partition) writeCompleted() {
	buffer := p.inflight
	buffer.segment.sizeBytes = buffer.filePosition + int64(buffer.used)
	if p.options.Durability == DurabilityPersisted {
		p.flushPhase = flushSyncing
		p.flushOp.Code = OpSync
		p.flushOp.File = buffer.segment.logFile
		p.flushOp.Buffer = nil
		p.storage.Submit(&p.flushOp)
		return
	}
	p.flushDone()
}

func (p *Partition) syncDone(op *Op) {
	if op.Err != nil {
		p.fail(&FatalError{Op: "fdatasync", Path: p.inflight.segment.logPath(p.options.Directory), Err: op.Err})
		if p.inflight.lender != nil {
			// Written, and never cached: the loan ends here, as a
			// stopped partition is never closed.
			p.inflight.giveBack()
		}
		return
	}
	p.flushDone()
}

// flushDone makes a completed group visible: index entry, cache, offsets,
// then acknowledgements (after the state is consistent, because a Done
// callback may append again).
func (p *Partition) flushDone() {
	defer p.checkInvariants()
	buffer := p.inflight
	target := buffer.segment
	first := &buffer.batches[0]
	target.addIndexEntry(indexEntry{
		offset:    first.offsetFirst,
		timestamp: first.timestamp,
		position:  uint64(buffer.filePosition) + uint64(first.at),
	})
	for index := range buffer.batches {
		batch := &buffer.batches[index]
		invariant.Assert(batch.offsetFirst == target.offsetEnd, "written batches are contiguous")
		target.offsetEnd = batch.offsetEnd()
		target.timestampMax = batch.timestamp
	}
	p.cache.addWritten(buffer)
	if p.options.Durability != DurabilityMemory {
		p.offsetVisible = target.offsetEnd
	}
	p.acks = append(p.acks[:0], buffer.ops...)
	clear(buffer.ops)
	buffer.ops = buffer.ops[:0]
	buffer.batches = buffer.batches[:0]
	buffer.free() // an idle partition holds no journal memory
	p.inflight = nil
	p.flushPhase = flushIdle
	if p.writeStalled {
		p.writeStalled = false
		p.logger.Info("log write succeeded after failures", "write_failures", p.writeFailures)
	}
	p.index.start()
	p.startFlush()
	for _, op := range p.acks {
		op.Done(op)
	}
	clear(p.acks)
	p.resume()
}

// writeFailed handles a failed log write (ENOSPC, EIO). Unacknowledged
// appends fail and their offsets are handed out again; the bytes past the
// segment's end on file are overwritten by the next write. Under
// DurabilityMemory the batches were acknowledged already, so the write is
// kept and retried by Tick.
func (p *Partition) writeFailed(err error) {
	buffer := p.inflight
	wrapped := fmt.Errorf("engine: write %s: %w", buffer.segment.logPath(p.options.Directory), err)
	p.writeFailures++
	if p.options.Durability == DurabilityMemory || p.options.RetryWrites {
		if !p.writeStalled {
			// Once per stall: Tick retries it every period.
			p.logger.Warn("log write failed; retrying until it succeeds", "error", wrapped,
				"durability", p.options.Durability.String())
		}
		p.writeStalled = true
		p.flushPhase = flushStalled
		return
	}
	p.logger.Warn("log write failed", "error", wrapped, "durability", p.options.Durability.String())
	p.inflight = nil
	p.offsetNext = p.offsetVisible
	p.dedup.reset()
	other := p.pending
	p.acks = append(p.acks[:0], buffer.ops...)
	p.acks = append(p.acks, other.ops...)
	other.reset(buffer.segment, buffer.filePosition, buffer.prefix())
	buffer.reset(buffer.segment, buffer.filePosition, nil)
	p.truncateTail(buffer.segment)
	for _, op := range p.acks {
		op.Err = wrapped
		op.Done(op)
	}
	clear(p.acks)
}

// truncateTail cuts segment's log back to its size, dropping what a
// failed write or a dropped stream may have left past it.
func (p *Partition) truncateTail(segment *segment) {
	p.flushPhase = flushTruncating
	p.flushOp.Code = OpTruncate
	p.flushOp.File = segment.logFile
	p.flushOp.Buffer = nil
	p.flushOp.Position = segment.sizeBytes
	p.spaceCut(segment)
	p.storage.Submit(&p.flushOp)
}

// Settled reports whether no write, sync or roll runs, waits or stalled
// and nothing waits to be written: then Tick has nothing to do, now or
// later, until the next Append. A shard with thousands of partitions
// ticks only those that appended since they last settled.
func (p *Partition) Settled() bool {
	return p.flushPhase == flushIdle && p.pending.empty() && !p.writeStalled
}

// WriteFailures counts failed log writes since the partition opened.
func (p *Partition) WriteFailures() uint64 { return p.writeFailures }

// Tick retries a stalled write; the shard calls it periodically.
func (p *Partition) Tick() {
	defer p.checkInvariants()
	if p.flushPhase == flushStalled && p.fatal == nil {
		if p.inflight != nil {
			p.submitWrite()
			return
		}
		p.flushPhase = flushIdle
	}
	p.startFlush()
}

// idle reports whether no write, roll or index write is in flight and
// nothing waits to be written.
func (p *Partition) idle() bool {
	return p.flushPhase == flushIdle && p.pending.empty() && !p.index.busy && p.stream.state == streamIdle
}

// resume restarts work that waited for the flush pipeline to drain.
func (p *Partition) resume() {
	p.syncer.resume()
	p.maintenance.resume()
	p.read.resume()
	if p.state == stateClosing && p.idle() && !p.read.busy() && !p.maintenance.busy() && !p.offsets.busy() &&
		p.syncer.done == nil && !p.space.busy() {
		p.finishClose()
	}
}
