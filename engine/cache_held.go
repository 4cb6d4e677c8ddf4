package engine

import "github.com/whippetio/whippet/internal/invariant"

// SetWake makes the cache hold written journals and copy them later:
// wake runs (on the shard's thread) when a journal starts waiting, and
// the shard then calls Drain at its next loop turns until it reports
// nothing left.
func (c *Cache) SetWake(wake func()) { c.wake = wake }

// PopulateAhead makes a goroutine fault in the arena's memory ahead of
// the copies; call it before the first insert. Without it the copies
// fault the memory in as the cache grows. See cacheArena.
func (c *Cache) PopulateAhead() {
	invariant.Assert(c.arena == nil, "populating ahead is chosen before the arena is mapped")
	c.ahead = true
}

// holds reports whether addWritten should hand over the journal whole.
func (c *Cache) holds() bool { return c.wake != nil && !c.failed }

// hold takes a written journal and returns the sequence of its first
// batch, or false when the cache cannot reserve room for all of them
// (the journal stays the caller's). batches are its batches in order; on
// success the cache frees data through release once copied.
func (c *Cache) hold(data []byte, release func([]byte), batches []journalBatch) (uint64, bool) {
	invariant.Assert(c.holds(), "a cache holds journals only with a wake function")
	invariant.Assert(len(batches) > 0, "a held journal has batches")
	if c.heldLen == cacheHeldMax {
		c.Drain(1 << 62) // the shard fell behind: copy the oldest now
	}
	c.Trim()
	slot := int32((c.heldTail + c.heldLen) % cacheHeldMax)
	first := c.sequenceHead
	for index := range batches {
		batch := &batches[index]
		if !c.takes(batch.length) {
			return c.unhold(first)
		}
		at, ok := c.reserve(batch.length)
		if !ok {
			return c.unhold(first)
		}
		c.record(at, batch.length, slot, batch.at)
	}
	c.held[slot] = heldJournal{data: data, release: release, sequenceFirst: first, sequenceEnd: c.sequenceHead,
		copied: first}
	c.heldLen++
	if c.heldLen == 1 {
		c.wake()
	}
	return first, true
}

// unhold drops the records a failed hold made (the newest ones): their
// journal stays its partition's. It does not move head back, so the
// room they reserved is lost until the arena wraps.
func (c *Cache) unhold(first uint64) (uint64, bool) {
	for sequence := max(c.sequenceTail, first); sequence < c.sequenceHead; sequence++ {
		c.liveBytes -= int64(c.entries[sequence%uint64(len(c.entries))].length)
	}
	invariant.Assert(c.liveBytes >= 0, "live bytes count only live records")
	c.sequenceHead = first
	c.sequenceTail = min(c.sequenceTail, first)
	c.restartIfEmpty()
	return 0, false
}

// Drain copies up to bytesMax of held batches into the arena, oldest
// first, frees each journal once its live batches are copied, and
// reports whether held batches remain. Batches evicted meanwhile are
// skipped.
func (c *Cache) Drain(bytesMax int) bool {
	copied := 0
	for c.heldLen > 0 {
		journal := &c.held[c.heldTail]
		journal.copied = max(journal.copied, c.sequenceTail)
		for journal.copied < journal.sequenceEnd {
			entry := &c.entries[journal.copied%uint64(len(c.entries))]
			invariant.Assert(entry.sequence == journal.copied && entry.journal == int32(c.heldTail),
				"a held sequence names its journal")
			if copied+entry.length > bytesMax && copied > 0 {
				return true
			}
			copy(c.arena.data[entry.at:entry.at+entry.length], journal.data[entry.from:entry.from+entry.length])
			entry.journal = -1
			copied += entry.length
			journal.copied++
		}
		journal.release(journal.data)
		*journal = heldJournal{}
		c.heldTail = (c.heldTail + 1) % cacheHeldMax
		c.heldLen--
	}
	return false
}
