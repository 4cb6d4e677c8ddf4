package engine

import (
	"errors"
	"sync/atomic"
	"syscall"

	"github.com/whippetio/whippet/internal/invariant"
)

// Allocating the active segment's space ahead of large appends. A direct
// write past a file's size changes the size: the file system takes the
// file's lock alone and (ext4) hands the write to its I/O worker, so a
// stream's pieces in flight queue behind each other. Into space already
// allocated within the size, they run at once on the device.
//
// Only lone large batches (streamed or pieced) allocate: the first
// allocation of a partition reaches allocateAheadBatchesMin of its batch
// past the write, each later one twice as far, up to
// allocateAheadBatchesMax batches and allocateAheadBytesMax bytes, and
// never past the segment's limit; the next is issued once the write
// comes within half of that of the allocated end. Writes never wait for
// an allocation: one that outruns it extends the file as before.
//
// The file is then longer than its batches, and its allocated blocks
// read as zeros. A roll and a Close cut the file back to its batches (a
// sealed segment is immutable and exact); a crash leaves the zeros,
// which recovery takes for a clean end (recover_scan.go). A truncation
// after a failed write or a dropped stream drops them as well, and so
// does the maintenance pass's TrimSpace once the partition went idle.

// allocator issues a partition's allocations, one at a time. It is made
// by the first large batch: partitions that never see one carry only
// the pointer.
type allocator struct {
	p  *Partition
	op Op
	// segment is the one the allocation in flight is for; nil when idle.
	// cut is set when its file is cut back meanwhile: the allocation may
	// take effect before the cut, which then drops its space.
	segment *segment
	cut     bool
	// batches is how many of the current batch the next allocation
	// reaches past it.
	batches int64
	// off is set once the storage cannot allocate (EOPNOTSUPP): the
	// partition writes as it would without allocating. failed is the
	// segment whose allocation failed otherwise (ENOSPC): not retried on it.
	off    bool
	failed *segment
	// recent is set by each large batch and cleared by TrimSpace: a
	// partition that saw none between two calls went idle.
	recent bool
}

// busy reports an allocation in flight: its segment's file must stay
// open, and a roll waits to cut the file back after it.
func (a *allocator) busy() bool { return a != nil && a.segment != nil }

// allocateAhead allocates the active segment's space ahead of a lone
// large batch of length bytes about to be written at its end.
func (p *Partition) allocateAhead(length int) {
	if p.options.AllocateAheadOff {
		return
	}
	a := p.space
	if a == nil {
		a = &allocator{p: p, batches: allocateAheadBatchesMin}
		a.op.Callback = a.allocated
		p.space = a
	}
	a.recent = true
	active := p.active()
	if a.off || a.busy() || a.failed == active {
		return
	}
	end := alignUp(active.sizeBytes + int64(length))
	ahead := min(a.batches*int64(length), allocateAheadBytesMax)
	if end+ahead/2 <= active.allocated {
		return
	}
	target := min(alignUp(end+ahead), alignUp(p.options.SegmentBytes))
	if target <= max(end, active.allocated) {
		return
	}
	a.batches = min(2*a.batches, allocateAheadBatchesMax)
	a.segment = active
	active.spaceAhead = true
	a.op.Code, a.op.File, a.op.Position, a.op.Buffer = OpAllocate, active.logFile, target, nil
	p.storage.Submit(&a.op)
}

// TrimSpace gives back the space allocated ahead of an idle partition:
// when no large batch came since its last call (the shard's maintenance
// pass) and nothing is written, streamed, rolled, allocated or purged,
// the active log is cut back to its batches, and the next large batch
// allocates from 8 batches ahead again. Appends meanwhile wait for the
// cut, as after a failed write.
func (p *Partition) TrimSpace() {
	a := p.space
	// A purge removes the file anyway; once started, there is no active
	// segment until its fresh one is open.
	if a == nil || p.state != stateOpen || p.fatal != nil || p.maintenance.blocksAppends() {
		return
	}
	if a.recent {
		a.recent = false
		return
	}
	// allocated, not spaceAhead: a cut sets it back to the batches even
	// when it fails, so a failed one is not retried every pass, while
	// spaceAhead stays set for the roll or Close to cut again.
	active := p.active()
	if active.allocated <= active.sizeBytes || !p.Settled() || a.busy() { // Settled: no write, stream or roll
		return
	}
	a.batches = allocateAheadBatchesMin
	p.trimmed++
	p.truncateTail(active)
}

// SpaceTrims counts the cuts TrimSpace issued since the partition opened
// (a failed one included).
func (p *Partition) SpaceTrims() uint64 { return p.trimmed }

// allocated completes an allocation; a roll or Close that waited for it
// goes on.
func (a *allocator) allocated(op *Op) {
	p, target, cut := a.p, a.segment, a.cut
	invariant.Assert(target != nil, "an allocation completes while in flight")
	a.segment, a.cut = nil, false
	switch {
	case op.Err == nil:
		if !cut {
			target.allocated = max(target.allocated, op.Position)
		}
	case errors.Is(op.Err, syscall.EINTR): // the next large batch asks again
	case errors.Is(op.Err, syscall.EOPNOTSUPP) || errors.Is(op.Err, syscall.ENOSYS):
		a.off = true
		if !allocateRefusedLogged.Swap(true) { // once per process, not per partition
			p.logger.Info("the file system cannot allocate space ahead; large appends extend the log as they go",
				"error", op.Err)
		}
	default:
		a.failed = target
		p.logger.Warn("allocating log space ahead failed; the segment's writes extend it as they go",
			"file", target.logPath(p.options.Directory), "error", op.Err)
	}
	p.roll.drained()
	p.resume()
}

// allocateRefusedLogged is set once a partition logged that its file
// system cannot allocate: the others refused alike say nothing.
var allocateRefusedLogged atomic.Bool

// cutDone ends the cut of the active log back to its batches at a roll
// or Close (at). A failed cut leaves zeros past them, which recovery
// takes for the clean end.
func (p *Partition) cutDone(op *Op, at string) {
	active := p.active()
	if op.Err != nil {
		p.logger.Warn("cutting allocated space off the log failed", "at", at,
			"file", active.logPath(p.options.Directory), "error", op.Err)
		return
	}
	active.spaceAhead = false
	p.spaceCut(active)
}

// spaceCut records that target's file was cut back to its batches (or
// is being): later allocations start from there again, and one in
// flight for it counts for nothing.
func (p *Partition) spaceCut(target *segment) {
	target.allocated = target.sizeBytes
	if p.space.busy() && p.space.segment == target {
		p.space.cut = true
	}
}
