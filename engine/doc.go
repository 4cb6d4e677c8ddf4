// Package engine owns the storage of partitions: segments, the sparse
// index, appends with group commit, polls, recovery, retention, consumer
// offsets and the message-id dedup window. It runs inside one shard and
// does all file I/O through the Storage interface it declares, so the same
// code runs on the shard's io_uring ring, on DirectStorage (portable
// pread/pwrite, O_DIRECT) and on enginetest's crashable storage. It is a
// state machine driven by completions: no goroutines, no blocking, no
// locks; one shard's thread calls it.
//
// engine may import wire (the batch layout) and internal/ only; never
// shard, ring, vsr or configs. Stamping, verifying and slicing batch
// records is wire's (wire.StampBatch, wire.VerifyRecord, wire.SliceBatch);
// format.go keeps the header field readers and the offset_delta
// contiguity check the engine relies on. engine/metadata holds the
// metadata state machine and its log; engine/enginetest the test fakes.
//
// # Using a partition (shard)
//
//	OpenPartition(storage, options, done)   recover, then done(p, err)
//	p.Append(&AppendOp{...})                Done after the topic's durability point
//	p.Poll(&PollOp{...})                    Done with records appended to Out
//	p.StoreOffset / DeleteOffset            consumer offsets, Done when stored
//	p.Retain / DeleteSegments / Purge       whole-segment removal
//	p.Sync(done)                            FlushUnsavedBuffer with fsync
//	p.Tick()                                periodically: retries a stalled write
//	p.Close(done) / p.Delete(done)
//
// A shard with many partitions opens them over a FileTable, a Storage
// that bounds the files open at once (NewFileTable, RaiseOpenFilesLimit,
// OpenFilesBudget).
//
// Completions arrive through the Storage the partition was opened with;
// the shard's loop reaps them and calls Op.Callback. Buffers handed to
// Storage come from PartitionOptions.Allocate (ring-registered buffers in
// production) and go back through Release at Close and Delete. Errors:
// ErrCorrupt (wrapped in *CorruptError) refuses a partition or a read;
// *FatalError (a failed fdatasync) means stop the process with its exit
// code; the rest are operating errors for a status code.
//
// The topic option key "durability" (String: memory, written, persisted;
// default persisted) selects PartitionOptions.Durability; segment_size,
// message_expiry and max_topic_size map to SegmentBytes, Retain's
// ExpiryMicros and SizeBytesMax (max_topic_size divided by the partition
// count).
//
// # Directory layout
//
//	{partition}/
//	  00000000000000000000.log    batch records, exactly the wire layout
//	  00000000000000000000.index  sparse 24-byte entries
//	  00000000000016000000.log    next segment, named by its first offset
//	  00000000000016000000.index
//	  offsets                     32-byte consumer offset slots
//
// # .log: batch records back to back (PROTOCOL.md §8.2–8.4, little-endian)
//
//	0        8             16              24                32             40               48            52        256
//	+--------+-------------+---------------+-----------------+--------------+----------------+-------------+---------+
//	|partition|base_offset |base_timestamp |origin_timestamp |batch_length  |batch_checksum  |message_count|reserved |
//	|  u64   |    u64      |  u64 µs       |   u64 µs        | u64          | u64 XXH3-64    |    u32      | 0 x 204 |
//	+--------+-------------+---------------+-----------------+--------------+----------------+-------------+---------+
//	then message_count frames:
//	0         8              24             28               32                 36               40        48
//	+---------+--------------+--------------+----------------+------------------+----------------+---------+---------+-------------+
//	|checksum | id u128      | offset_delta | timestamp_delta| user_headers_len | payload_length | reserved| payload | user headers|
//	+---------+--------------+--------------+----------------+------------------+----------------+---------+---------+-------------+
//
// The stored record is what a poll serves: a reply copies it, or a sliced
// view of it (header rewritten, frames untouched). O_DIRECT writes whole
// blocks, so a .log may end in zero padding up to a 4096-byte boundary,
// and space allocated ahead of large appends reads as zeros until
// written, so after a crash any .log may end in megabytes of zeros.
// Recovery treats a tail of zeros only, however long, as the clean end
// and cuts the file back to its last batch; a tail holding any other
// byte is torn (see invariant 4).
//
// # .index: one entry per write chunk, at least indexIntervalBytes apart
//
//	0          8             16            24
//	+----------+-------------+-------------+
//	| offset   | timestamp   | position    |   u64 each: the chunk's first
//	+----------+-------------+-------------+   batch, its base_timestamp, its .log position
//
// # offsets: one 32-byte slot per consumer, rewritten in place
//
//	0      1          4       8          16          24           32
//	+------+----------+-------+----------+-----------+------------+
//	| kind | reserved | id u32| offset   | reserved  | XXH3-64 of |
//	|  u8  |  0 x 3   |       |  u64     |  0 x 8    | bytes 0..24|
//	+------+----------+-------+----------+-----------+------------+
//
// kind 1 is a consumer, 2 a consumer group, 0xff the purge generation
// the last Purge recorded, 0 a free slot; a slot whose checksum fails was
// torn and is ignored (the consumer may see redelivery, never a skip).
//
// # Write path
//
// Append stamps the batch (partition_id, base_offset, base_timestamp,
// batch_checksum) in the pending write buffer. While a write or fdatasync
// is in flight, appends accumulate; when it completes the pending buffer
// goes out as one write (group commit). Each buffer starts with the file's
// partial last block, because O_DIRECT writes whole aligned blocks. After
// the write (and fdatasync under DurabilityPersisted) the group's first
// batch gets an index entry, the batches enter the shard's cache, and the
// appends are acknowledged. The cache copies the written batches into its
// arena, memory outside the Go heap that the shards share within one
// CacheBudget and that evicts oldest first: O_DIRECT bypasses the page
// cache, so this is what serves a consumer reading recent data from
// memory. A closed, deleted or purged partition's records die at once:
// the ring's tail passes them unless an older record is alive (eviction
// is FIFO), and a ring whose records all died starts again at the
// arena's start, in memory already faulted in, before it grows into
// fresh memory.
// A batch of at least piecesRecordBytesMin arriving while no write runs
// or waits is written in pieces when the Storage is a Kicker (io_uring):
// its layout is checked and its stamped checksum computed on the received
// bytes, its first pieceBytes are copied and written at once, and the rest
// is copied while that write runs; its completion writes the rest. A
// piece never holds a byte that changes later (the header is final), a
// refused batch writes nothing, and the batch is indexed, visible, cached
// and acknowledged only after its last piece, as a group is (pieces.go).
// A large batch may also be appended while its request still arrives
// (StreamOpen, StreamFeed, StreamFinish; stream.go), its bytes fed or
// received straight into a journal the cache lent (StreamRoom,
// StreamReceived): data pieces after its header block(s) are written as
// bytes arrive and are validated, the last data at the end and the
// header block(s) once every piece was written, and no other append is
// admitted meanwhile (ErrBusy). A segment whose size reached SegmentBytes is
// sealed after the write that crossed it: fdatasync of its .log and
// .index, creation of the next pair, fsync of the directory.
//
// # Invariants
//
//  1. Offsets in a partition are contiguous from the first stored offset:
//     each segment starts at the previous one's end, and each batch's
//     base_offset is the previous batch's last offset + 1.
//  2. A poll never returns an offset at or above OffsetNext, the end of the
//     acknowledged prefix; under DurabilityPersisted everything below it
//     was fdatasynced before it was acknowledged.
//  3. Only the last segment is written; sealed segments were fdatasynced
//     (both files) before the next segment was created, and are immutable
//     until retention removes them whole, oldest first.
//  4. An index entry is written only after its batch's write (and
//     fdatasync, when persisted) completed. So under DurabilityPersisted an
//     entry on disk proves its batch was durable: damage at or before the
//     last entry's position, or anywhere in a sealed segment, is
//     corruption (ErrCorrupt, the partition refuses to open), whatever
//     the bytes past the walk's stop hold, zeros included; damage after
//     it is a torn tail, truncated and logged with bytes and offsets. A
//     tail of zeros alone is not damage, in a sealed segment either.
//     Entries are at least indexIntervalBytes apart, so the witness trails
//     the true durable end by less than that plus one write group; under
//     written and memory durability every tail damage of the active
//     segment is treated as torn.
//  9. Bytes past a failed write, or written by a stream that was dropped,
//     are cut off before the next write, so an append that was refused
//     never reappears at recovery; a stream's header is written only after
//     every earlier piece of it completed; a file created
//     by the engine (segment, offsets, metadata log) has its directory
//     entry synced before anything written to it is acknowledged.
//  5. A buffer handed to Storage is not written by the engine until its
//     completion: the in-flight write buffer is never appended to (polls
//     may read it); the pending one is. The one exception is the batch
//     being written in pieces: within its Append, bytes are copied past
//     the end of the first piece in flight, never inside it; likewise a
//     streamed batch's bytes are copied, or received by its owner,
//     past its data piece in flight, and its header is stamped before
//     the header block is written. A journal lent for such a receive
//     stays the partition's, even after its stream was dropped, until
//     the owner reported the receive's end (StreamReceived). A disk
//     read trusts only bytes below the segment size at the moment it
//     was issued, and so does a
//     read-ahead (the bytes after a sequential consumer's last poll, read
//     while its reply travels), which serves only a poll continuing the
//     same segment at the walk's offset.
//  6. A failed fdatasync is fatal (FatalError): never retried, every later
//     op fails, shard stops the process with its own exit code.
//  7. Retention and DeleteSegments never remove the active segment, nor a
//     segment holding an offset above the least stored consumer offset.
//  8. Recovery verifies every batch (layout, frame and batch checksums,
//     offset continuity) before serving; reads from disk verify again.
//  10. A FileTable (files.go) keeps at most OpenMax files of its inner
//     storage open, opens and closes in flight included, whatever the
//     number of handles; it closes only files with no op in flight, least
//     recently used first, reopens them by path on demand, and an op
//     waiting for a descriptor waits for the next op in flight to complete
//     instead of failing.
//  11. The cache returns a batch's exact written bytes or nothing: its
//     records are evicted in sequence order (oldest first, shrinking
//     included) and a forgotten one (its partition closed or purged)
//     returns nothing while its room waits for the tail to pass it,
//     a record lies only in arena memory that is claimed from the
//     CacheBudget and (with PopulateAhead) faulted in, a held journal is
//     freed once, after its live batches were copied or died, and the
//     caches of all shards claim at most the budget's limit plus one
//     shard's fair share, only while the budget is under pressure.
//  12. A record pinned for a send in place (PollOp.Spans, PollSpan) is
//     neither evicted, overwritten nor given back to the kernel until its
//     span is released: eviction stops at it (an insert that needs its
//     room is refused, a Trim waits), and only records already copied into
//     the arena are pinned, never a held journal's, which Drain frees.
//
// Limits are named in limits.go; TestLimits asserts how they relate.
package engine
