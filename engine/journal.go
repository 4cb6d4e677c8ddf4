package engine

import "github.com/whippetio/whippet/internal/invariant"

// journalBatch locates one stamped batch inside a write buffer.
type journalBatch struct {
	offsetFirst uint64
	count       uint32
	timestamp   uint64
	at          int // byte position in the buffer's data
	length      int
}

func (b *journalBatch) offsetEnd() uint64 { return b.offsetFirst + uint64(b.count) }

// writeBuffer is one of a partition's two aligned write buffers. data[0]
// sits at the block-aligned filePosition of segment's .log; its first
// prefixBytes are the file's partial tail block, rewritten by the next
// write because O_DIRECT writes whole blocks. Batches follow the prefix.
//
// A buffer holds memory only while it has batches: data is allocated by
// the first append after a reset and handed on (to the cache) or freed
// once its write completed, so an idle partition holds no journal
// memory. Meanwhile kept holds the prefix.
type writeBuffer struct {
	data        []byte // nil while the buffer is empty
	kept        []byte // the prefix while data is nil
	sizeBytes   int    // the least allocation (PartitionOptions.JournalBytes)
	used        int
	prefixBytes int
	// writeStart and writeEnd bound the write in flight (whole blocks
	// from data[0]): the buffer's whole length, or one piece of it.
	writeStart   int
	writeEnd     int
	filePosition int64
	segment      *segment
	batches      []journalBatch
	ops          []*AppendOp
	allocate     func(int) []byte
	release      func([]byte)
	// lender is the cache whose arena data is a region of (borrow), or
	// nil for the allocator's memory; region is the region's sequence.
	lender *Cache
	region uint64
}

func newWriteBuffer(size int, allocate func(int) []byte, release func([]byte)) writeBuffer {
	invariant.Assert(size >= blockBytes, "a write buffer holds at least a block")
	return writeBuffer{
		allocate:  allocate,
		release:   release,
		sizeBytes: size,
		batches:   make([]journalBatch, 0, 64),
		ops:       make([]*AppendOp, 0, 64),
	}
}

// prefix returns the partial tail block the buffer starts with.
func (b *writeBuffer) prefix() []byte {
	if b.data == nil {
		return b.kept[:b.prefixBytes]
	}
	return b.data[:b.prefixBytes]
}

// free gives the memory of an empty buffer back; the next append
// allocates again.
func (b *writeBuffer) free() {
	invariant.Assert(b.empty(), "only an empty write buffer is freed")
	if b.data == nil {
		return
	}
	b.kept = append(b.kept[:0], b.data[:b.prefixBytes]...)
	b.giveBack()
}

// giveBack returns data to its source, the allocator or the cache that
// lent it; no write of it is in flight.
func (b *writeBuffer) giveBack() {
	if b.lender != nil {
		b.lender.dropJournal(b.region)
		b.lender = nil
	} else {
		b.release(b.data)
	}
	b.data = nil
}

// borrow takes the memory for a lone batch of length bytes from cache's
// arena when it has the room; without, the buffer stays without memory.
// A batch written there is cached without a copy
// (partitionCache.addWritten). The buffer is empty and holds no memory;
// yield is as lendJournal's.
func (b *writeBuffer) borrow(cache *Cache, length int, yield func()) {
	invariant.Assert(b.data == nil && b.empty(), "only an empty buffer without memory borrows")
	data, region, ok := cache.lendJournal(int(alignUp(int64(b.prefixBytes+length+blockBytes))), yield)
	if !ok {
		return
	}
	b.data, b.lender, b.region = data, cache, region
	copy(b.data, b.kept[:b.prefixBytes])
}

func (b *writeBuffer) empty() bool { return len(b.batches) == 0 }

// reset starts the buffer at a segment's end: prefix holds the bytes of the
// file's partial last block (fewer than blockBytes).
func (b *writeBuffer) reset(target *segment, position int64, prefix []byte) {
	invariant.Assert(len(prefix) < blockBytes, "prefix is a partial block")
	invariant.Assert(position%blockBytes == 0, "buffer starts on a block")
	b.segment = target
	b.filePosition = position
	if b.data == nil || b.lender != nil {
		// A lent region serves one batch: a buffer reset for more gives
		// it back (prefix may lie in it, so it is kept first).
		b.kept = append(b.kept[:0], prefix...)
		b.prefixBytes = len(prefix)
		if b.data != nil {
			b.giveBack()
		}
	} else {
		b.prefixBytes = copy(b.data, prefix)
	}
	b.used = b.prefixBytes
	b.writeStart, b.writeEnd = 0, 0
	b.batches = b.batches[:0]
	clear(b.ops)
	b.ops = b.ops[:0]
}

// rebase moves the batches to a fresh segment (after a rollover): they are
// now written at position 0 with no prefix.
func (b *writeBuffer) rebase(target *segment) {
	shift := b.prefixBytes
	copy(b.data, b.data[shift:b.used])
	b.used -= shift
	for index := range b.batches {
		b.batches[index].at -= shift
	}
	b.prefixBytes = 0
	b.filePosition = 0
	b.segment = target
}

// grow makes room for extra more bytes, keeping the contents: the
// buffer's allocation when it has none, or a larger one for a batch
// larger than any before.
func (b *writeBuffer) grow(extra int) bool {
	need := b.used + extra + blockBytes
	if need <= len(b.data) {
		return true
	}
	if need > journalBytesMax {
		return false
	}
	if b.data == nil {
		b.data = b.allocate(max(need, b.sizeBytes))
		invariant.Assert(aligned(b.data) && len(b.data) >= need, "an allocated write buffer is aligned and large enough")
		copy(b.data, b.kept[:b.prefixBytes])
		return true
	}
	grown := b.allocate(max(need, 2*len(b.data)))
	copy(grown, b.data[:b.used])
	b.giveBack()
	b.data = grown
	return true
}

// writeLength pads the buffer to whole blocks with zeros and returns the
// byte count to write.
func (b *writeBuffer) writeLength() int {
	length := int(alignUp(int64(b.used)))
	clear(b.data[b.used:length])
	return length
}

// tail returns the partial last block of the buffer's contents and its
// aligned file position: the next buffer's prefix.
func (b *writeBuffer) tail() (int64, []byte) {
	blockStart := int(alignDown(int64(b.used)))
	return b.filePosition + int64(blockStart), b.data[blockStart:b.used]
}

// find returns the index of the batch holding offset, or -1.
func (b *writeBuffer) find(offset uint64) int {
	if len(b.batches) == 0 || offset < b.batches[0].offsetFirst {
		return -1
	}
	low, high := 0, len(b.batches)
	for low < high {
		middle := (low + high) / 2
		if b.batches[middle].offsetEnd() <= offset {
			low = middle + 1
		} else {
			high = middle
		}
	}
	if low == len(b.batches) {
		return -1
	}
	return low
}

func (b *writeBuffer) record(index int) []byte {
	batch := &b.batches[index]
	return b.data[batch.at : batch.at+batch.length]
}
