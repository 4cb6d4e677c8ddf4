package engine

import "github.com/whippetio/whippet/internal/invariant"

// Cache holds copies of recently written batches of every partition of one
// shard within one byte budget, evicting oldest first (a circular log).
// It is not safe for concurrent use: one shard owns it.
type Cache struct {
	arena   []byte
	head    int // where the next batch is copied
	entries []cacheEntry
	// sequenceTail is the oldest live entry; sequenceHead the next one.
	sequenceTail uint64
	sequenceHead uint64
}

type cacheEntry struct {
	sequence uint64
	at       int
	length   int
}

// NewCache returns a cache of budgetBytes (0 disables caching).
func NewCache(budgetBytes int) *Cache {
	invariant.Assert(budgetBytes >= 0, "cache budget is not negative")
	return &Cache{arena: make([]byte, budgetBytes), entries: make([]cacheEntry, cacheEntriesMax)}
}

// insert copies record and returns its sequence, or false when the record
// is larger than a quarter of the budget (it would evict too much).
func (c *Cache) insert(record []byte) (uint64, bool) {
	length := len(record)
	if length == 0 || length > len(c.arena)/4 {
		return 0, false
	}
	if c.sequenceHead-c.sequenceTail == uint64(len(c.entries)) {
		c.sequenceTail++
	}
	if c.head+length > len(c.arena) {
		for c.live() && c.oldest().at >= c.head {
			c.sequenceTail++
		}
		c.head = 0
	}
	for c.live() && c.oldest().at >= c.head && c.oldest().at < c.head+length {
		c.sequenceTail++
	}
	sequence := c.sequenceHead
	c.entries[sequence%uint64(len(c.entries))] = cacheEntry{sequence: sequence, at: c.head, length: length}
	copy(c.arena[c.head:], record)
	c.head += length
	c.sequenceHead++
	invariant.Assert(c.sequenceHead-c.sequenceTail <= uint64(len(c.entries)), "cache entries bounded")
	return sequence, true
}

func (c *Cache) live() bool { return c.sequenceTail < c.sequenceHead }

func (c *Cache) oldest() *cacheEntry {
	return &c.entries[c.sequenceTail%uint64(len(c.entries))]
}

// get returns the record of sequence, or nil when it was evicted. The slice
// is valid until the next insert.
func (c *Cache) get(sequence uint64) []byte {
	if sequence < c.sequenceTail || sequence >= c.sequenceHead {
		return nil
	}
	entry := &c.entries[sequence%uint64(len(c.entries))]
	invariant.Assert(entry.sequence == sequence, "cache slot holds its sequence")
	return c.arena[entry.at : entry.at+entry.length]
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

// add caches record, the stored bytes of the journal batch batch.
func (p *partitionCache) add(record []byte, batch *journalBatch) {
	if p.cache == nil {
		return
	}
	sequence, ok := p.cache.insert(record)
	if !ok {
		p.clear()
		return
	}
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
// offsets, so a batch the cache refused breaks it.
func (p *partitionCache) clear() {
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

// find returns the record holding offset, or nil.
func (p *partitionCache) find(offset uint64) []byte {
	oldest := p.oldest()
	if oldest == nil || offset < oldest.offsetFirst {
		return nil
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
		return nil
	}
	return p.cache.get(p.batches[low].sequence)
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
