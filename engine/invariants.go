package engine

import "github.com/whippetio/whippet/internal/invariant"

// checkInvariants walks the partition's state and asserts the numbered
// invariants of doc.go that can be checked in memory. It is expensive, so
// it runs only in invariant builds, deferred at the end of Append, Tick
// and each flush completion.
func (p *Partition) checkInvariants() {
	if !invariant.Enabled || p.state != stateOpen || len(p.segments) == 0 {
		return
	}
	invariant.Assert(p.offsetVisible <= p.offsetNext, "visible offsets are assigned offsets")
	for index, s := range p.segments {
		last := index == len(p.segments)-1
		invariant.Assert(s.sealed != last, "only the last segment is active")
		invariant.Assert(s.offsetEnd >= s.offsetStart, "a segment's end is not before its start")
		if index > 0 {
			invariant.Assert(s.offsetStart == p.segments[index-1].offsetEnd, "segments are contiguous")
		}
		for entry := 1; entry < len(s.index); entry++ {
			invariant.Assert(s.index[entry].offset > s.index[entry-1].offset, "index offsets increase")
			invariant.Assert(s.index[entry].position > s.index[entry-1].position, "index positions increase")
		}
	}
	next := p.active().offsetEnd
	for _, buffer := range [2]*writeBuffer{p.inflight, p.pending} {
		if buffer == nil {
			continue
		}
		for index := range buffer.batches {
			batch := &buffer.batches[index]
			invariant.Assert(batch.offsetFirst == next, "journal batches continue the log")
			invariant.Assert(batchBaseOffset(buffer.record(index)) == batch.offsetFirst, "journal batch is stamped")
			next = batch.offsetEnd()
		}
	}
	invariant.Assert(next == p.offsetNext, "the journal ends at the next offset")
	if p.options.Durability != DurabilityMemory {
		invariant.Assert(p.offsetVisible == p.active().offsetEnd, "only written batches are visible")
	}
}
