package engine

import "github.com/whippetio/whippet/internal/invariant"

// Cache holds recently written batches of every partition of one shard,
// copied into its arena in write order and evicted oldest first: the
// memory an O_DIRECT log has in place of the page cache, so a consumer
// reading what was just written is served from memory, not the disk.
//
// The arena is used as a ring. Records go at head; one that does not fit
// before the arena's claimed capacity either grows the capacity (when the
// CacheBudget grants it) or wraps to the start, evicting the oldest
// records in its way. A record never straddles the end. Every record has
// a sequence number, and eviction is FIFO (shrinking included), so a
// sequence below sequenceTail is dead. One at or above it is alive unless
// its partition forgot it (closed, purged): a forgotten record keeps its
// room until the tail passes it, at once when nothing older is alive.
//
// The copy stays off the path from a write's completion to its
// acknowledgement when the shard drains: with a wake function set
// (SetWake), the cache holds a written journal whole, reserves arena
// room for its batches, serves them from the journal, and copies them
// when the shard calls Drain (a slice per loop turn), then frees the
// journal. Without one it copies at once.
//
// A record returned by get is valid until the next insert, hold, Drain
// or Trim. A pinned record (pin, for a poll reply sent from the arena in
// place) stays valid until it is unpinned: eviction, which is FIFO,
// stops at it, so while a record is pinned no record after it is evicted
// either; a record that needs the room then goes uncached, and Trim
// waits. It is not safe for concurrent use: one shard owns it; only the
// budget is shared.
type Cache struct {
	budget    *CacheBudget
	fairBytes int         // the share of the budget this cache may always claim
	arena     *cacheArena // nil until the first insert
	// capacityBytes is the claimed prefix of the arena; records lie in it.
	capacityBytes int
	head          int
	// wrapEnd is where records stopped before head wrapped to 0; it
	// bounds the older records while the cache is wrapped.
	wrapEnd int
	// entries is a ring indexed by sequence; live sequences are
	// [sequenceTail, sequenceHead).
	entries      []cacheEntry
	sequenceTail uint64
	sequenceHead uint64
	// liveBytes is the sum of the live records' lengths, kept as records
	// are made and die so that Stats need not walk them.
	liveBytes    int64
	evictedCount uint64
	// forgottenCount counts the dead records the tail passed
	// (passForgotten, or evict on its way); evictedCount the live ones.
	forgottenCount uint64
	pinnedCount    int // pins held on records (pin, Unpin)
	// pinBlocked counts the evictions a pinned record stopped (a refused
	// record, a Trim put off); the shard then has its sends in place copy
	// their records out.
	pinBlocked uint64
	// loanBlocked counts the evictions a lent region stopped; yields are
	// the lent regions' yield functions (cache_lend.go).
	loanBlocked  uint64
	loanBlocking uint64 // the region that stopped the last of them
	yields       map[uint64]func()
	failed       bool // mapping the arena failed: cache nothing
	ahead        bool // a populator goroutine faults the arena in (PopulateAhead)
	// held is a ring of journals whose batches wait for their copy, in
	// sequence order; wake tells the shard to start draining it.
	held     [cacheHeldMax]heldJournal
	heldTail int
	heldLen  int
	wake     func()
}

type cacheEntry struct {
	sequence uint64
	at       int // arena position (reserved; filled once copied)
	length   int
	// journal is the held slot serving the record until its copy, -1,
	// or lentRegion while the record is a journal's region (cache_lend.go).
	journal int32
	// pins counts the sends reading the record in place (pin), and is 1
	// while a region is lent: while it is not zero the record is neither
	// evicted nor unmapped.
	pins uint32
	from int // position in that journal
}

// heldJournal is a written journal whose batches have sequences
// [sequenceFirst, sequenceEnd), of which those below copied are copied.
type heldJournal struct {
	data          []byte
	release       func([]byte)
	sequenceFirst uint64
	sequenceEnd   uint64
	copied        uint64
}

// CacheStats is a cache's state for metrics and tests.
type CacheStats struct {
	// Records counts the records in the ring: the live ones and the dead
	// ones (forgotten, or regions that died empty) the tail has not
	// passed yet.
	Records       uint64
	Bytes         int64  // the live records' bytes
	CapacityBytes int64  // arena memory claimed from the budget
	EvictedCount  uint64 // live records evicted since the start
	// ForgottenCount counts dead records (their partition closed, was
	// purged or dropped them) the tail passed since the start, an
	// eviction's included.
	ForgottenCount uint64
	HeldCount      int    // written journals waiting for their copy
	PinnedCount    int    // pins held by sends reading records in place, and lent regions
	PinBlocked     uint64 // evictions a pinned record stopped since the start
	ReadyBytes     int64  // of CapacityBytes, what is faulted in ahead of the copies
}

// NewCache returns the cache of one of shardCount shards drawing on
// budget. It maps nothing until the first insert.
func NewCache(budget *CacheBudget, shardCount int) *Cache {
	invariant.Assert(budget != nil, "a cache has a budget")
	invariant.Assert(shardCount > 0, "a cache belongs to one of some shards")
	fair := budget.limitBytes / int64(shardCount) / budget.chunkBytes * budget.chunkBytes
	if fair == 0 && budget.limitBytes >= budget.chunkBytes {
		// An even split under one chunk: a share of zero would let the
		// first shard to claim keep the whole budget (no claim past the
		// limit, so no pressure, so no Trim).
		fair = budget.chunkBytes
	}
	entries, err := mapEntries(cacheEntriesMax)
	return &Cache{
		budget:    budget,
		fairBytes: int(fair),
		entries:   entries,
		failed:    err != nil, // no room for its entries: a cache that caches nothing
	}
}

// recordBytesMax is the largest record the cache takes: more would evict
// too much of what the shard's other partitions wrote.
func (c *Cache) recordBytesMax() int { return max(c.fairBytes/4, int(c.budget.chunkBytes)) }

// takes reports whether the cache takes a record of length bytes: one
// that is not empty, leaves room for the shard's other partitions
// (recordBytesMax), and fits the budget at all.
func (c *Cache) takes(length int) bool {
	return !c.failed && length > 0 && length <= c.recordBytesMax() && int64(length) <= c.budget.limitBytes
}

// insert copies record into the arena and returns its sequence, or false
// when the cache cannot hold it (too large, no memory).
func (c *Cache) insert(record []byte) (uint64, bool) {
	length := len(record)
	if !c.takes(length) {
		return 0, false
	}
	c.Trim()
	at, ok := c.reserve(length)
	if !ok {
		return 0, false
	}
	copy(c.arena.data[at:at+length], record)
	return c.record(at, length, -1, 0), true
}

func (c *Cache) record(at int, length int, journal int32, from int) uint64 {
	c.head = at + length
	sequence := c.sequenceHead
	c.entries[sequence%uint64(len(c.entries))] = cacheEntry{sequence: sequence, at: at, length: length,
		journal: journal, from: from}
	c.sequenceHead++
	c.liveBytes += int64(length)
	invariant.Assert(c.head <= c.capacityBytes, "records lie within the claimed arena")
	return sequence
}

// reserve makes room for length bytes and returns where they go.
func (c *Cache) reserve(length int) (int, bool) {
	c.passForgotten()
	if c.sequenceHead-c.sequenceTail == uint64(len(c.entries)) {
		if !c.evict() {
			return 0, false
		}
	}
	for range 3 { // unwrapped → wrapped → unwrapped at most
		c.restartIfEmpty()
		if !c.wrapped() {
			if c.head+length > c.capacityBytes {
				c.grow(c.head + length)
			}
			if c.head+length <= c.capacityBytes {
				return c.head, true
			}
			if c.empty() {
				return 0, false // the arena cannot hold it yet, or ever
			}
			c.wrapEnd, c.head = c.head, 0
		}
		for c.wrapped() && c.head+length > c.entries[c.sequenceTail%uint64(len(c.entries))].at {
			if !c.evict() {
				return 0, false
			}
		}
		if c.wrapped() || c.head+length <= c.capacityBytes {
			return c.head, true
		}
	}
	invariant.Assert(false, "a reserve settles within three passes")
	return 0, false
}

func (c *Cache) readyBytes() int {
	if c.arena == nil {
		return 0
	}
	return min(c.capacityBytes, c.arena.readyBytes())
}

func (c *Cache) empty() bool { return c.sequenceTail == c.sequenceHead }

// restartIfEmpty puts head back at the arena's start once no record is
// left, so the next records go into memory already faulted in.
func (c *Cache) restartIfEmpty() {
	if c.empty() {
		c.head, c.wrapEnd = 0, 0
	}
}

// wrapped reports whether head restarted below the oldest record: the
// oldest records lie in [tail, wrapEnd), the newest in [0, head).
func (c *Cache) wrapped() bool {
	return !c.empty() && c.entries[c.sequenceTail%uint64(len(c.entries))].at >= c.head
}

// grow claims arena up to at least needBytes when the budget grants it
// (the caller checks the capacity); unwrapped only.
func (c *Cache) grow(needBytes int) {
	invariant.Assert(!c.wrapped(), "only an unwrapped arena grows")
	chunk := int(c.budget.chunkBytes)
	capacity := (needBytes + chunk - 1) / chunk * chunk
	if int64(capacity) > c.budget.limitBytes {
		return
	}
	if c.arena == nil {
		arena, err := mapArena(int(c.budget.limitBytes), c.ahead)
		if err != nil {
			c.failed = true
			return
		}
		c.arena = arena
	}
	// Claim a lead beyond the need when the budget has it, so the
	// populator works ahead of the copies.
	ahead := min(capacity+cachePopulateLeadBytes, int(c.budget.limitBytes))
	if !c.claim(ahead) {
		c.claim(capacity)
	}
}

// claim grows the capacity to capacityBytes if the budget grants it.
func (c *Cache) claim(capacityBytes int) bool {
	if capacityBytes <= c.capacityBytes {
		return capacityBytes == c.capacityBytes
	}
	if !c.budget.claim(int64(capacityBytes-c.capacityBytes), int64(c.capacityBytes), int64(c.fairBytes)) {
		return false
	}
	if c.ahead {
		c.arena.populate(c.capacityBytes, capacityBytes)
	} else {
		c.arena.populateNow(c.capacityBytes, capacityBytes)
	}
	c.capacityBytes = capacityBytes
	return true
}

// evict drops the oldest record, unless it is pinned: then it counts the
// stopped eviction (loanBlocked for a lent region, else pinBlocked: a
// send reads it in place) and returns false.
func (c *Cache) evict() bool {
	invariant.Assert(!c.empty(), "eviction has a record to drop")
	oldest := &c.entries[c.sequenceTail%uint64(len(c.entries))]
	if oldest.pins > 0 {
		if oldest.journal == lentRegion {
			c.loanBlocked++
			c.loanBlocking = oldest.sequence // copying sends out would not free it: its borrower yields it
		} else {
			c.pinBlocked++
		}
		return false
	}
	c.liveBytes -= int64(oldest.length)
	invariant.Assert(c.liveBytes >= 0, "live bytes count only live records")
	c.sequenceTail++
	if oldest.length == 0 {
		c.forgottenCount++ // dead already (forgotten, or a region that died empty)
	} else {
		c.evictedCount++
	}
	c.restartIfEmpty()
	return true
}

// forget kills the record of sequence, which its partition no longer
// lists (the partition closed or was purged, or a refused batch broke its
// list): it counts as live no more, and a held copy of it copies
// nothing. Its room comes back when the tail passes it (passForgotten).
func (c *Cache) forget(sequence uint64) {
	entry := c.live(sequence)
	if entry == nil {
		return // evicted, or dead already
	}
	invariant.Assert(entry.journal != lentRegion, "a lent region is not listed until its loan ends")
	c.liveBytes -= int64(entry.length)
	invariant.Assert(c.liveBytes >= 0, "live bytes count only live records")
	entry.length = 0
}

// passForgotten moves the tail past the oldest records while they are
// dead (forgotten, or regions that died empty) and unpinned. A cache
// whose records all died starts again at the arena's start, in memory
// already faulted in: a deleted topic's room is reused before the arena
// grows into fresh memory, whose first touch costs more than the copy
// into it (cacheArena). Dead records behind a live one wait for
// eviction, which is FIFO.
func (c *Cache) passForgotten() {
	for !c.empty() {
		oldest := &c.entries[c.sequenceTail%uint64(len(c.entries))]
		if oldest.length > 0 || oldest.pins > 0 {
			return
		}
		c.evict() // unpinned: it goes, counted as forgotten
	}
}

// Trim gives memory back when the budget is under pressure and this
// cache holds more than its share: it evicts the oldest records until
// the rest lie within the share and unmaps the pages above it. The shard
// calls it from its tick as well, so an idle shard gives back too.
func (c *Cache) Trim() {
	// The budget is under pressure while the claimed total is past the
	// limit.
	if c.capacityBytes <= c.fairBytes || c.budget.usedBytes.Load() <= c.budget.limitBytes {
		return
	}
	c.shrink(c.fairBytes)
}

// shrink evicts the records above capacityBytes and gives that memory
// back; a pinned record in the way leaves the capacity as it is (the
// next Trim tries again).
func (c *Cache) shrink(capacityBytes int) {
	invariant.Assert(capacityBytes%int(c.budget.chunkBytes) == 0, "a cache shrinks to whole chunks")
	for c.wrapped() && c.wrapEnd > capacityBytes {
		if !c.evict() {
			return
		}
	}
	for !c.empty() && !c.wrapped() && c.head > capacityBytes {
		if !c.evict() {
			return
		}
	}
	invariant.Assert(c.head <= capacityBytes, "records left lie within the shrunk arena")
	if c.arena != nil {
		c.arena.trim(capacityBytes, c.capacityBytes)
	}
	c.budget.release(int64(c.capacityBytes - capacityBytes))
	c.capacityBytes = capacityBytes
}

// get returns the record of sequence, or nil when it died. The slice is
// valid until the next insert or Trim.
func (c *Cache) get(sequence uint64) []byte {
	entry := c.live(sequence)
	if entry == nil {
		return nil
	}
	if entry.journal >= 0 {
		return c.held[entry.journal].data[entry.from : entry.from+entry.length]
	}
	return c.arena.data[entry.at : entry.at+entry.length]
}

// live returns the entry of sequence while its record is alive: the tail
// has not passed it, and it has bytes (not forgotten, not a region that
// died empty); else nil.
func (c *Cache) live(sequence uint64) *cacheEntry {
	if sequence < c.sequenceTail || sequence >= c.sequenceHead {
		return nil
	}
	entry := &c.entries[sequence%uint64(len(c.entries))]
	invariant.Assert(entry.sequence == sequence, "cache slot holds its sequence")
	if entry.length == 0 {
		return nil
	}
	return entry
}

// Stats returns the cache's state; the shard's thread only.
func (c *Cache) Stats() CacheStats {
	stats := CacheStats{
		Records:        c.sequenceHead - c.sequenceTail,
		CapacityBytes:  int64(c.capacityBytes),
		EvictedCount:   c.evictedCount,
		ForgottenCount: c.forgottenCount,
		HeldCount:      c.heldLen,
		PinnedCount:    c.pinnedCount,
		PinBlocked:     c.pinBlocked,
		ReadyBytes:     int64(c.readyBytes()),
		Bytes:          c.liveBytes,
	}
	if invariant.Enabled {
		walked := int64(0)
		for sequence := c.sequenceTail; sequence < c.sequenceHead; sequence++ {
			walked += int64(c.entries[sequence%uint64(len(c.entries))].length)
		}
		invariant.Assert(walked == c.liveBytes, "the live byte count sums the live records")
	}
	return stats
}

// Release drops every record, frees the held journals and unmaps the
// arena, giving its memory back to the budget. The shard calls it when
// it stops.
func (c *Cache) Release() {
	if c.pinnedCount > 0 {
		// A send still reads records in place (a stop that did not wait
		// for its connections): the arena stays mapped, as memory the
		// kernel may still read must. Its populator stops all the same.
		c.arena.stopPopulator()
		c.arena = nil
	}
	c.sequenceTail = c.sequenceHead
	c.liveBytes = 0
	c.Drain(0) // every record died: this frees the journals
	c.head, c.wrapEnd = 0, 0
	c.budget.release(int64(c.capacityBytes))
	c.capacityBytes = 0
	if c.arena != nil {
		c.arena.unmap()
		c.arena = nil
	}
	unmapEntries(c.entries)
	c.entries, c.failed = nil, true
	c.yields = nil // a loan that never ends (its partition stopped) keeps no closure alive
}

// cachedBatch is a partition's view of one of its batches in the cache.
type cachedBatch struct {
	offsetFirst uint64
	count       uint32
	timestamp   uint64
	sequence    uint64
}

// partitionCache lists one partition's cached batches in offset order.
type partitionCache struct {
	cache   *Cache
	batches []cachedBatch
	first   int // batches[:first] are dropped
}

// addWritten copies the batches of buffer, whose write completed, into
// the cache. The journal keeps its memory: the cache's arena is sized by
// the budget, not by how full the partition's journals were.
func (p *partitionCache) addWritten(buffer *writeBuffer) {
	if buffer.lender != nil {
		invariant.Assert(buffer.lender == p.cache && len(buffer.batches) == 1, "a lent journal holds one batch")
		batch := &buffer.batches[0]
		p.cache.adoptJournal(buffer.region, batch.at, batch.length)
		p.append(batch, buffer.region)
		buffer.data, buffer.lender = nil, nil // the record now
		return
	}
	if p.cache == nil {
		return
	}
	if p.cache.holds() {
		first, ok := p.cache.hold(buffer.data, buffer.release, buffer.batches)
		if !ok {
			p.clear()
			return
		}
		for index := range buffer.batches {
			p.append(&buffer.batches[index], first+uint64(index))
		}
		buffer.data = nil // the cache frees it; the next append allocates a fresh one
		return
	}
	for index := range buffer.batches {
		batch := &buffer.batches[index]
		sequence, ok := p.cache.insert(buffer.record(index))
		if !ok {
			p.clear() // the list must stay contiguous in offsets
			return
		}
		p.append(batch, sequence)
	}
}

func (p *partitionCache) append(batch *journalBatch, sequence uint64) {
	if p.first > 0 && p.first >= len(p.batches)/2 {
		kept := copy(p.batches, p.batches[p.first:])
		p.batches = p.batches[:kept]
		p.first = 0
	}
	p.batches = append(p.batches, cachedBatch{
		offsetFirst: batch.offsetFirst,
		count:       batch.count,
		timestamp:   batch.timestamp,
		sequence:    sequence,
	})
}

// clear forgets every cached batch: the list must stay contiguous in
// offsets, so a batch the cache refused breaks it; a purge and a close
// clear it too. Records nobody lists any more are dead, so the cache
// reuses their room first (Cache.passForgotten).
func (p *partitionCache) clear() {
	if p.first < len(p.batches) { // listed only with a cache (addWritten)
		for index := p.first; index < len(p.batches); index++ {
			p.cache.forget(p.batches[index].sequence)
		}
		p.cache.passForgotten()
	}
	p.batches = p.batches[:0]
	p.first = 0
}

// dropEvicted forgets batches the shared cache evicted.
func (p *partitionCache) dropEvicted() {
	for p.first < len(p.batches) && p.cache.get(p.batches[p.first].sequence) == nil {
		p.first++
	}
}

// oldest returns the first cached batch, or nil when empty.
func (p *partitionCache) oldest() *cachedBatch {
	if p.cache == nil {
		return nil
	}
	p.dropEvicted()
	if p.first == len(p.batches) {
		return nil
	}
	return &p.batches[p.first]
}

// findSequence returns the record holding offset and its sequence in the
// cache, or nil.
func (p *partitionCache) findSequence(offset uint64) ([]byte, uint64) {
	oldest := p.oldest()
	if oldest == nil || offset < oldest.offsetFirst {
		return nil, 0
	}
	low, high := p.first, len(p.batches)
	for low < high {
		middle := (low + high) / 2
		batch := &p.batches[middle]
		if batch.offsetFirst+uint64(batch.count) <= offset {
			low = middle + 1
		} else {
			high = middle
		}
	}
	if low == len(p.batches) {
		return nil, 0
	}
	sequence := p.batches[low].sequence
	return p.cache.get(sequence), sequence
}

// findTimestamp returns the first cached record with base_timestamp >=
// timestamp, or nil.
func (p *partitionCache) findTimestamp(timestamp uint64) []byte {
	if p.oldest() == nil {
		return nil
	}
	for index := p.first; index < len(p.batches); index++ {
		if p.batches[index].timestamp >= timestamp {
			return p.cache.get(p.batches[index].sequence)
		}
	}
	return nil
}
