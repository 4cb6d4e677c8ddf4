package engine

import "github.com/whippetio/whippet/internal/invariant"

// Cache holds recently written batches of every partition of one shard
// within one byte budget, evicting the oldest buffer first. It holds whole
// buffers rather than copies: a partition hands over a flushed journal
// buffer (hold) and takes a fresh one, so a large flush is never copied
// again; a small flush is copied into the cache's open buffer (insert),
// where it does not pin a journal-sized buffer for a few bytes. An evicted
// buffer goes back through the release function it came with, so buffers
// stay in the memory their allocator gave (ring memory in a shard).
//
// A batch dies with its buffer, or when the entry ring wraps over it. The
// open buffer takes copies until it is full even after newer journals were
// held, so a partition's cached batches may die out of order: a reader
// finding a dead batch reads it from disk. It is not safe for concurrent
// use: one shard owns it.
type Cache struct {
	budgetBytes int
	heldBytes   int
	// buffers is a ring indexed by buffer number; bufferTail is the oldest
	// held, bufferHead the next number.
	buffers    []cacheBuffer
	bufferTail uint64
	bufferHead uint64
	// open is the number of the buffer insert copies into and openUsed
	// its filled bytes, when opened and open >= bufferTail (not evicted).
	open     uint64
	openUsed int
	opened   bool
	// entries is a ring indexed by sequence; sequenceHead is the next one.
	entries      []cacheEntry
	sequenceHead uint64
}

type cacheBuffer struct {
	data    []byte
	release func([]byte)
}

type cacheEntry struct {
	sequence uint64
	buffer   uint64
	at       int
	length   int
}

// NewCache returns a cache of budgetBytes (0 disables caching).
func NewCache(budgetBytes int) *Cache {
	invariant.Assert(budgetBytes >= 0, "cache budget is not negative")
	return &Cache{
		budgetBytes: budgetBytes,
		buffers:     make([]cacheBuffer, cacheBuffersMax),
		entries:     make([]cacheEntry, cacheEntriesMax),
	}
}

// holds reports whether a flushed journal of capacity bytes holding used
// bytes of batches is worth holding whole rather than copying from.
func (c *Cache) holds(used int, capacity int) bool {
	return used*cacheHoldFillDivisor >= capacity && capacity <= c.budgetBytes/2
}

// hold takes data, a written journal buffer, with the function that frees
// it; the caller then records its batches with entry.
func (c *Cache) hold(data []byte, release func([]byte)) {
	invariant.Assert(cap(data) <= c.budgetBytes/2, "a held buffer fits the budget")
	c.push(data[:cap(data)], release)
}

// entry records bytes [at, at+length) of the newest held buffer and
// returns their sequence.
func (c *Cache) entry(at int, length int) uint64 {
	invariant.Assert(c.bufferHead > c.bufferTail, "an entry has a buffer")
	newest := &c.buffers[(c.bufferHead-1)%uint64(len(c.buffers))]
	invariant.Assert(at >= 0 && at+length <= len(newest.data), "an entry lies within its buffer")
	return c.record(c.bufferHead-1, at, length)
}

// insert copies record into the open buffer (allocating one when there is
// none or it is full) and returns its sequence, or false when the record
// is larger than a quarter of the budget (it would evict too much).
func (c *Cache) insert(record []byte, allocate func(int) []byte, release func([]byte)) (uint64, bool) {
	length := len(record)
	if length == 0 || length > c.budgetBytes/4 {
		return 0, false
	}
	if !c.opened || c.open < c.bufferTail || c.openUsed+length > len(c.buffers[c.open%uint64(len(c.buffers))].data) {
		data := allocate(max(length, min(cacheOpenBytes, c.budgetBytes/4)))
		if cap(data) > c.budgetBytes/2 {
			release(data)
			return 0, false
		}
		c.push(data[:cap(data)], release)
		c.open, c.openUsed, c.opened = c.bufferHead-1, 0, true
	}
	at := c.openUsed
	copy(c.buffers[c.open%uint64(len(c.buffers))].data[at:], record)
	c.openUsed += length
	return c.record(c.open, at, length), true
}

// push holds data as the newest buffer, evicting the oldest ones until
// the budget and the buffer ring have room.
func (c *Cache) push(data []byte, release func([]byte)) {
	for c.bufferHead > c.bufferTail &&
		(c.heldBytes+len(data) > c.budgetBytes || c.bufferHead-c.bufferTail == uint64(len(c.buffers))) {
		c.evict()
	}
	c.buffers[c.bufferHead%uint64(len(c.buffers))] = cacheBuffer{data: data, release: release}
	c.bufferHead++
	c.heldBytes += len(data)
	invariant.Assert(c.heldBytes <= c.budgetBytes, "held buffers fit the budget")
}

// evict frees the oldest buffer, and with it every batch it holds.
func (c *Cache) evict() {
	oldest := &c.buffers[c.bufferTail%uint64(len(c.buffers))]
	c.heldBytes -= len(oldest.data)
	oldest.release(oldest.data)
	*oldest = cacheBuffer{}
	c.bufferTail++
	invariant.Assert(c.heldBytes >= 0, "held bytes are not negative")
}

func (c *Cache) record(buffer uint64, at int, length int) uint64 {
	sequence := c.sequenceHead
	c.entries[sequence%uint64(len(c.entries))] = cacheEntry{sequence: sequence, buffer: buffer, at: at, length: length}
	c.sequenceHead++
	return sequence
}

// get returns the record of sequence, or nil when it died. The slice is
// valid until the next hold or insert.
func (c *Cache) get(sequence uint64) []byte {
	if sequence >= c.sequenceHead || c.sequenceHead-sequence > uint64(len(c.entries)) {
		return nil
	}
	entry := &c.entries[sequence%uint64(len(c.entries))]
	invariant.Assert(entry.sequence == sequence, "cache slot holds its sequence")
	if entry.buffer < c.bufferTail {
		return nil
	}
	data := c.buffers[entry.buffer%uint64(len(c.buffers))].data
	return data[entry.at : entry.at+entry.length]
}

// Release frees every held buffer; the cache is empty afterwards. The
// shard calls it when it stops.
func (c *Cache) Release() {
	for c.bufferTail < c.bufferHead {
		c.evict()
	}
	invariant.Assert(c.heldBytes == 0, "an empty cache holds no bytes")
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
	cache    *Cache
	allocate func(int) []byte
	release  func([]byte)
	batches  []cachedBatch
	first    int // batches[:first] are dropped
}

// addWritten caches the batches of buffer, whose write completed. A
// well-filled buffer is handed to the cache whole (buffer keeps no
// memory); the batches of a sparse one are copied.
func (p *partitionCache) addWritten(buffer *writeBuffer) {
	if p.cache == nil {
		return
	}
	if !p.cache.holds(buffer.used-buffer.prefixBytes, cap(buffer.data)) {
		for index := range buffer.batches {
			p.insert(buffer.record(index), &buffer.batches[index])
		}
		return
	}
	p.cache.hold(buffer.data, buffer.release)
	for index := range buffer.batches {
		batch := &buffer.batches[index]
		p.append(batch, p.cache.entry(batch.at, batch.length))
	}
	buffer.data = nil // the next append allocates a fresh one
}

// insert copies record, the stored bytes of the journal batch batch.
func (p *partitionCache) insert(record []byte, batch *journalBatch) {
	sequence, ok := p.cache.insert(record, p.allocate, p.release)
	if !ok {
		p.clear()
		return
	}
	p.append(batch, sequence)
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
