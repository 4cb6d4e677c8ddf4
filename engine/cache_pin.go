package engine

import "github.com/whippetio/whippet/internal/invariant"

// PollSpan is a whole batch record that a poll left in the cache's arena
// instead of copying it into Out (PollOp.Spans): in the reply it goes at
// position At of Out, after the bytes copied before it and before those
// copied after it. Data is memory outside the Go heap that neither moves
// nor changes while the span is held: the cache pins the record, so it is
// not evicted, overwritten or given back to the kernel. The holder calls
// Release exactly once, on the shard's thread, when nothing reads Data
// any more (a send of it completed or failed).
type PollSpan struct {
	At       int
	Data     []byte
	cache    *Cache
	sequence uint64
}

// Release unpins the span's record.
func (s *PollSpan) Release() {
	invariant.Assert(s.cache != nil, "a released span was pinned")
	s.cache.unpin(s.sequence)
	*s = PollSpan{}
}

// PinBlocked counts the evictions a pinned record stopped since the
// start; when it grows, the holders of spans should copy their records
// out and release them (the cache cannot take new records meanwhile).
func (c *Cache) PinBlocked() uint64 { return c.pinBlocked }

// pin holds the record of sequence in place and returns its bytes, or nil
// when it cannot be sent in place: it died, or it still lies in a held
// journal, which Drain frees after copying it.
func (c *Cache) pin(sequence uint64) []byte {
	entry := c.live(sequence)
	if entry == nil || entry.journal != -1 || c.roomBefore(entry.at) < c.capacityBytes/cachePinMarginDivisor {
		return nil
	}
	entry.pins++
	c.pinnedCount++
	return c.arena.data[entry.at : entry.at+entry.length : entry.at+entry.length]
}

// roomBefore is how many bytes of inserts the arena takes before one
// overwrites the record at position: the older region of a wrapped arena
// lies after head; everything else comes after head reaches the arena's
// end and wraps to the start. By then the arena is unwrapped, and it
// grows before head wraps up to its share (fairBytes) when the budget
// grants that: a cache that reused its start (passForgotten) has records
// close to its claimed end that are far from being overwritten. The
// budget's answer is the one it would give now; should it refuse later
// (three shards or more, one holding over its share until it trims),
// head wraps sooner and a record pinned on this count may stop an
// eviction (pinBlocked), which the shard answers by copying its sends
// out.
func (c *Cache) roomBefore(position int) int {
	if position >= c.head {
		return position - c.head
	}
	reach := c.capacityBytes
	if grow := int64(c.fairBytes - c.capacityBytes); grow > 0 &&
		c.budget.grants(c.budget.usedBytes.Load(), grow, int64(c.capacityBytes), int64(c.fairBytes)) {
		reach = c.fairBytes
	}
	return reach - c.head + position
}

func (c *Cache) unpin(sequence uint64) {
	invariant.Assert(c.pinnedCount > 0, "an unpin has a pin")
	c.pinnedCount--
	if c.entries == nil {
		return // released while the send was in flight (Release)
	}
	invariant.Assert(sequence >= c.sequenceTail && sequence < c.sequenceHead, "a pinned record is alive")
	entry := &c.entries[sequence%uint64(len(c.entries))]
	invariant.Assert(entry.sequence == sequence, "cache slot holds its sequence")
	invariant.Assert(entry.pins > 0, "an unpinned record was pinned")
	entry.pins--
}
