package engine

import "github.com/whippetio/whippet/internal/invariant"

// readAhead reads the next stretch of a segment while a sequential
// consumer handles what its last poll returned, so that its next poll
// finds the bytes in memory (or already on their way) instead of
// starting a disk read then: the disk works while the reply travels.
// It holds a second read buffer, allocated on first use, which swaps
// with the reader's buffer when a poll takes it.
type readAhead struct {
	buffer   []byte
	op       Op
	busy     bool // a read is in flight
	ready    bool // a completed read waits in buffer
	segment  *segment
	position int64 // file position of buffer[0]
	limit    int64 // the segment's written size when the read was issued
	// waiting is set when a poll came for the read while it was in flight.
	waiting bool
}

func (r *reader) initAhead() {
	r.ahead.op.Callback = r.aheadDone
}

// startAhead reads on from where the walk stopped when the bytes there
// are on disk only; the reader is idle.
func (r *reader) startAhead() {
	p := r.p
	ahead := &r.ahead
	invariant.Assert(r.current == nil, "read-ahead starts with no read in flight")
	if ahead.busy || r.segment == nil || r.walkPosition >= r.segment.sizeBytes || r.memoryRecord(r.walkOffset) != nil ||
		p.maintenance.busy() || p.state != stateOpen {
		return
	}
	if len(ahead.buffer) != len(r.buffer) {
		if ahead.buffer != nil {
			p.options.Release(ahead.buffer)
		}
		ahead.buffer = p.options.Allocate(len(r.buffer))
		invariant.Assert(aligned(ahead.buffer), "the read-ahead buffer is aligned")
	}
	ahead.segment = r.segment
	ahead.position = alignDown(r.walkPosition)
	ahead.limit = r.segment.sizeBytes
	length := min(int64(len(ahead.buffer)), alignUp(ahead.limit)-ahead.position)
	invariant.Assert(length > 0, "a read-ahead covers written bytes")
	ahead.busy, ahead.ready, ahead.waiting = true, false, false
	ahead.op.Code = OpRead
	ahead.op.File = r.segment.logFile
	ahead.op.Buffer = ahead.buffer[:length]
	ahead.op.Position = ahead.position
	p.storage.Submit(&ahead.op)
}

// takeAhead serves op, which needs the disk at target, from the
// read-ahead when it holds (or is reading) where op's walk continues. It
// reports whether it took op: then op completes through readDone's path.
func (r *reader) takeAhead(op *PollOp, target *segment) bool {
	ahead := &r.ahead
	if !ahead.busy && !ahead.ready || ahead.segment != target || r.segment != target ||
		r.walkOffset != op.offset || ahead.position != alignDown(r.walkPosition) {
		return false
	}
	r.current = op
	if ahead.busy {
		ahead.waiting = true
		return true
	}
	r.swapAhead()
	r.readDone(&ahead.op)
	return true
}

// swapAhead makes the read-ahead's bytes the reader's.
func (r *reader) swapAhead() {
	ahead := &r.ahead
	invariant.Assert(ahead.ready, "a swapped read-ahead completed")
	r.buffer, ahead.buffer = ahead.buffer, r.buffer
	r.readPosition, r.readLimit = ahead.position, ahead.limit
	ahead.ready = false
}

func (r *reader) aheadDone(op *Op) {
	ahead := &r.ahead
	invariant.Assert(ahead.busy, "a read-ahead completion has a read in flight")
	ahead.busy, ahead.ready = false, true
	if ahead.waiting {
		ahead.waiting = false
		r.swapAhead()
		r.readDone(op)
		return
	}
	if op.Err != nil {
		ahead.ready = false // the poll that wants these bytes reads them itself
	}
	r.p.resume()
}
