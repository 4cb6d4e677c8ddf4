package engine

import "github.com/whippetio/whippet/internal/invariant"

// Lending the arena as a journal. A large batch (streamed or written in
// pieces) is alone in its journal, so the journal may be a region of the
// arena itself: the batch is received into it, written from it, and
// once written it becomes the batch's record in place, without the copy
// a held journal waits for (Drain). Regions come from the ring like
// records and in the same order, so eviction stays FIFO; while lent, a
// region is pinned (the kernel reads it until the write completes), so
// nothing evicts, overwrites or unmaps it. A region whose batch is not
// cached (a dropped stream, a failed write) dies empty and its room
// comes back when the tail reaches it (passForgotten, or eviction).

// lentRegion marks the entry of a lent region (cacheEntry.journal).
const lentRegion int32 = -2

// lendJournal returns length bytes of arena on a block boundary and the
// region's sequence, or false when the cache cannot lend them (too large
// a share, no room, no memory). yield, when not nil, ends the loan early
// (soon, not necessarily at once) should the region stop the ring's
// eviction: a stream's client may take its time, and while its region
// is the oldest, the shard's other partitions go uncached
// (YieldBlockingLoan).
func (c *Cache) lendJournal(length int, yield func()) ([]byte, uint64, bool) {
	invariant.Assert(length > 0 && length%blockBytes == 0, "a lent region is whole blocks")
	if !c.takes(length + blockBytes - 1) { // what reserve takes, alignment included
		return nil, 0, false
	}
	c.Trim()
	at, ok := c.reserve(length + blockBytes - 1)
	if !ok {
		return nil, 0, false
	}
	start := int(alignUp(int64(at)))
	region := c.record(start, length, lentRegion, 0)
	c.entries[region%uint64(len(c.entries))].pins = 1
	c.pinnedCount++
	if yield != nil {
		if c.yields == nil {
			c.yields = make(map[uint64]func(), cacheYieldsHint)
		}
		c.yields[region] = yield
	}
	return c.arena.data[start : start+length : start+length], region, true
}

// LoanBlocked counts the evictions a lent region stopped since the start;
// when it grows, the shard calls YieldBlockingLoan.
func (c *Cache) LoanBlocked() uint64 { return c.loanBlocked }

// YieldBlockingLoan asks the borrower of the region that last stopped an
// eviction, when it was lent with a yield function and is lent still,
// to end its loan. The shard calls it from its tick, outside any other
// cache call, because yielding drops a stream, which gives its region
// back. A region is in yields only while lent (endLoan deletes it).
func (c *Cache) YieldBlockingLoan() {
	region := c.loanBlocking
	yield, ok := c.yields[region]
	if !ok {
		return // its loan ended meanwhile, or it has no yield
	}
	invariant.Assert(c.entries[region%uint64(len(c.entries))].journal == lentRegion, "a yield names a lent region")
	delete(c.yields, region) // once: a stream with pieces in flight ends when they complete
	yield()
}

// adoptJournal makes the batch written in a lent region, length bytes
// at from, its record: the record's sequence is the region's. A region
// that is still the newest gives back what the batch left unused.
func (c *Cache) adoptJournal(region uint64, from, length int) {
	invariant.Assert(length > 0, "an adopted batch has bytes")
	entry := c.endLoan(region)
	if entry == nil {
		return // released meanwhile: the sequence is dead
	}
	invariant.Assert(from+length <= entry.length, "the adopted batch lies in its region")
	newest := c.newest(region, entry)
	c.liveBytes += int64(length - entry.length)
	entry.at += from
	entry.length = length
	if newest {
		c.head = entry.at + length
	}
}

// dropJournal ends a loan whose batch is not cached: the region dies
// empty, and its room comes back at once when it is the newest record
// (a stream dropped while others wait behind it leaves a gap until the
// tail reaches it).
func (c *Cache) dropJournal(region uint64) {
	entry := c.endLoan(region)
	if entry == nil {
		return
	}
	c.liveBytes -= int64(entry.length)
	newest := c.newest(region, entry)
	entry.length = 0
	switch {
	case newest && region == c.sequenceTail: // the only record: the cache is empty again
		c.sequenceTail++
		c.head, c.wrapEnd = 0, 0
	case newest:
		// The record goes as unhold's do: left empty at head, it would
		// look wrapped (its position at head) once eviction reached it.
		// Older records lie below it, or above head when wrapped. Its
		// sequence is not the one YieldBlockingLoan names: that was
		// the oldest record when it blocked.
		c.sequenceHead = region
		c.head = entry.at
	}
}

// newest reports whether region, of entry, is the newest record and
// ends at head (a failed hold after it moves no head back: unhold).
func (c *Cache) newest(region uint64, entry *cacheEntry) bool {
	return region+1 == c.sequenceHead && c.head == entry.at+entry.length
}

// endLoan unpins a lent region and returns its entry, or nil when the
// cache was released while it was lent (Release keeps the arena mapped
// for it).
func (c *Cache) endLoan(region uint64) *cacheEntry {
	delete(c.yields, region)
	c.unpin(region)
	if c.entries == nil {
		return nil
	}
	entry := &c.entries[region%uint64(len(c.entries))]
	invariant.Assert(entry.pins == 0 && entry.journal == lentRegion, "a lent region is pinned once")
	entry.journal = -1
	return entry
}
