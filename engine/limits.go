package engine

import "github.com/whippetio/whippet/wire"

// Named limits. TestLimits asserts the relationships between them and says
// why each holds. Memory is sized from these at partition open.
const (
	// blockBytes is the O_DIRECT alignment for buffers, positions and
	// lengths: the logical block size of NVMe devices and of the page cache.
	blockBytes = 4096

	// batchHeaderBytes is the stored batch header (wire layout, PROTOCOL.md §8.2).
	batchHeaderBytes = wire.BatchHeaderBytes
	// frameHeaderBytes is the per-message frame header (PROTOCOL.md §8.3).
	frameHeaderBytes = wire.MessageHeaderBytes
	// indexEntryBytes is one sparse .index entry: offset, timestamp, position.
	indexEntryBytes = 24
	// offsetSlotBytes is one consumer-offset slot in the offsets file.
	offsetSlotBytes = 32

	// batchBytesMax bounds one stored batch record: the 64 MiB bus frame.
	batchBytesMax = wire.FrameBytesMax
	// payloadBytesMax and userHeadersBytesMax mirror the Iggy limits.
	payloadBytesMax     = wire.PayloadBytesMax
	userHeadersBytesMax = wire.UserHeadersBytesMax
	// batchMessagesMax bounds message_count: every frame needs at least
	// its header plus one payload byte.
	batchMessagesMax = (batchBytesMax - batchHeaderBytes) / (frameHeaderBytes + 1)

	// segmentBytesMin, segmentBytesMax and segmentBytesDefault bound the
	// per-topic soft segment size (a 512-byte multiple, as in Iggy).
	segmentBytesMin     = 1 << 20
	segmentBytesMax     = 1 << 30
	segmentBytesDefault = 1 << 30

	// journalBytesDefault is the initial size of each of a partition's two
	// write buffers; a buffer grows once to fit a larger batch, up to
	// journalBytesMax.
	journalBytesDefault = 4 << 20
	journalBytesMax     = batchBytesMax + 2*blockBytes
	// journalBatchesMax bounds the batches one write buffer groups.
	journalBatchesMax = 1 << 16

	// readBytesDefault is the size of one O_DIRECT read of a poll from disk.
	readBytesDefault = 1 << 20
	// recoverReadBytes is the size of one read of the recovery scan.
	recoverReadBytes = 1 << 20

	// cacheBytesDefault is the process-wide cache budget when the caller
	// names none (configs sizes it from the machine: "auto").
	cacheBytesDefault = 256 << 20
	// cacheChunkBytes is the step a cache's arena grows and shrinks by:
	// one transparent huge page, so a growing arena faults in whole ones.
	cacheChunkBytes = 2 << 20
	// cacheSmallBytes: a budget below it grows caches by blocks, not
	// huge pages (eight chunks at least, so shards can share it).
	cacheSmallBytes = 8 * cacheChunkBytes
	// cachePopulateLeadBytes is how far ahead of its need a growing
	// cache claims memory (when the budget has it), for the populator to
	// fault in before the copies reach it: 64 batches of 1 MiB.
	cachePopulateLeadBytes = 64 << 20
	// cachePopulateBytes is what the populator faults in per system
	// call: short enough that trim waits little for it.
	cachePopulateBytes = 256 << 10
	// populatorNice is the nice value of the populator's thread, the
	// lowest priority: its work is ahead of need and may wait for idle CPU.
	populatorNice = 19
	// cachePopulateRequestsMax bounds the ranges waiting for the
	// populator; past it the copies fault their own pages.
	cachePopulateRequestsMax = 64
	// cacheHeldMax bounds the written journals a cache holds while their
	// copies wait for the shard's next loop turns; past it the oldest is
	// copied at once.
	cacheHeldMax = 16
	// cacheYieldsHint sizes a cache's map of loans that may be yielded:
	// one per stream its shard's partitions receive at once.
	cacheYieldsHint = 8
	// cachePinMarginDivisor: a record fewer than capacity/divisor bytes of
	// inserts away from being overwritten is copied, not pinned (pin): a
	// send in place is then long over before the cache needs its room,
	// and a consumer reading at the eviction frontier does not make the
	// cache refuse a producer's records.
	cachePinMarginDivisor = 4
	// cacheEntriesMax bounds the number of batches one shard's cache
	// holds (8 MiB of entries, address space until used).
	cacheEntriesMax = 1 << 18
	// recycledBuffersMax bounds the released buffers the default allocator
	// keeps: a partition's two journals and its read buffers.
	recycledBuffersMax = 8

	// segmentsMax bounds the segments of one partition (1 MiB segments fill
	// 1 TiB before hitting it).
	segmentsMax = 1 << 20
	// consumersMax bounds stored consumer offsets per partition.
	consumersMax = 1 << 16
	// dedupIDsMax bounds the message-id dedup window of one partition.
	dedupIDsMax = 1 << 20
	// dedupCountDefault bounds a window given only a time bound.
	dedupCountDefault = 1 << 16
	// pollMessagesMax bounds the message count of one poll.
	pollMessagesMax = 1 << 20
	// listNamesMax bounds the directory entries of one partition directory.
	listNamesMax = 2*segmentsMax + 16
)

// errorDepthMax bounds the wrapping IsFatal follows: the engine's and
// its callers' error chains are a few links deep.
const errorDepthMax = 64

// indexIntervalBytes is the least .log distance between two index entries:
// a lookup walks at most this much plus one write chunk, and a segment's
// in-memory index costs 24 bytes per interval (384 KiB per GiB of log).
const indexIntervalBytes = 64 << 10

// pieceBytes is how much of a large batch is copied into the journal
// before its first piece is written: that write runs while the rest is
// copied and stamped. A quarter of a 1 MiB batch takes about as long to
// write as the other three quarters take to copy (disk ~1.2 GB/s, copy
// ~4 GB/s), so the second write starts as soon as the first ends.
const pieceBytes = 256 << 10

// piecesRecordBytesMin is the least record written in pieces: below it
// the copy is short and a second write costs more than it hides.
const piecesRecordBytesMin = 2 * pieceBytes

// streamPieceBytesMin is the least data piece of a streamed append
// (stream.go): arrived whole blocks wait until this many are ready, or
// until the batch is complete. Receives of a large frame complete in
// chunks of tens of KiB on loopback; a piece per chunk would add writes
// for nothing: 64 KiB pieces measured level with 128 KiB ones
// (bench/RESULTS.md).
const streamPieceBytesMin = 128 << 10

// streamPiecesMax bounds a stream's data pieces in flight. Into space
// allocated ahead (allocate.go) they run at once on the device: p1 with 4
// pieces of ≥ 128 KiB measured 1.20× the MB/s of one at a time into a
// growing file on a virtio NVMe disk (bench/RESULTS.md); 8 measured level
// with 4.
const streamPiecesMax = 4

// allocateAheadBatchesMin and allocateAheadBatchesMax bound how many of
// a partition's large batches an allocation reaches past the write
// (allocate.go): a partition that sends one large batch and stops holds
// 8 of them unused until its segment rolls or closes; one that streams
// reaches 64.
const (
	allocateAheadBatchesMin = 8
	allocateAheadBatchesMax = 64
)

// allocateAheadBytesMax bounds how far past the write space is allocated:
// 64 MiB is ~80 ms of a 1 MiB-batch stream at 800 MB/s, so allocations
// (each waits for the file's writes in flight) stay rare.
const allocateAheadBytesMax = 64 << 20

// walkAheadFrames is how far ahead of the layout walk of a pieced batch
// frame headers are loaded: enough misses in flight to hide most of the
// latency of another core's cache, few enough to stay within the record
// of a typical batch.
const walkAheadFrames = 8

// indexBufferBytes is the aligned buffer of one .index write.
const indexBufferBytes = 64 << 10

// Defaults that configs shows and validates against.
const (
	// SegmentBytesDefault is the default soft segment size (1 GiB).
	SegmentBytesDefault = segmentBytesDefault
	// CacheBytesDefault is the default process-wide cache budget.
	CacheBytesDefault = cacheBytesDefault
)

// File table limits (files.go). A handle is a File holding a slot index
// in its low fileIndexBits and the slot's generation above them, so it
// stays a positive int32.
const (
	fileIndexBits      = 24
	fileGenerationBits = 7
	// fileHandlesMax bounds the live handles of one table: 16 Mi, four
	// per partition for four million partitions.
	fileHandlesMax = 1 << fileIndexBits
	// fileOpsPooledMax bounds the carriers a table keeps for reuse.
	fileOpsPooledMax = 1 << 10
)
