package shard

// The operations a front starts on its connection's shard. Each fills
// the DataOp fields its doc names, runs on the partition's owner shard,
// and calls op.Done back on this shard exactly once.

// Append stores op.Batch (a validated batch record) at the partition's
// next offset; Done runs after the topic's durability point (memory: in
// the journal; written: write completed; persisted: fdatasynced) with
// BaseOffset and Messages set.
func (ds *DataShard) Append(op *DataOp) { ds.start(op, DataAppend) }

// Poll appends up to op.Count messages chosen by op.Strategy and op.Value
// (and op.Consumer for PollNext) to op.Out, within its capacity, as stored
// batch records; with op.AutoCommit it also stores the last returned
// offset for op.Consumer. Done reports Messages, OffsetFirst, OffsetLast
// and CurrentOffset; the caller writes the poll prefix.
func (ds *DataShard) Poll(op *DataOp) { ds.start(op, DataPoll) }

// StoreOffset stores op.Offset for op.Consumer (a consumer or a consumer
// group); engine.ErrInvalidOffset past the current offset.
func (ds *DataShard) StoreOffset(op *DataOp) { ds.start(op, DataStoreOffset) }

// GetOffset answers op.Consumer's stored offset in Offset (Found false
// when none is stored) and the partition's CurrentOffset.
func (ds *DataShard) GetOffset(op *DataOp) { ds.start(op, DataGetOffset) }

// DeleteOffset deletes op.Consumer's stored offset;
// engine.ErrOffsetNotFound when none is stored.
func (ds *DataShard) DeleteOffset(op *DataOp) { ds.start(op, DataDeleteOffset) }

// Flush is FlushUnsavedBuffer: it waits until everything appended so far
// is written (a memory-durability topic may hold appends not yet written)
// and, when op.Fsync, fdatasyncs the active segment's .log and .index.
func (ds *DataShard) Flush(op *DataOp) { ds.start(op, DataFlush) }

// DeleteSegments removes the op.SegmentCount oldest sealed segments, never
// past the least stored consumer offset nor the active segment.
func (ds *DataShard) DeleteSegments(op *DataOp) { ds.start(op, DataDeleteSegments) }

// Stats answers the partition's counters in op.Partition and
// CurrentOffset.
func (ds *DataShard) Stats(op *DataOp) { ds.start(op, DataStats) }

// Create opens partitions op.Key.Partition .. +op.PartitionCount-1 of
// op.Key's topic with op.Config, creating their directories, each on its
// owner; an open partition is left as it is. Done runs when every one is
// open, with the first error.
func (ds *DataShard) Create(op *DataOp) { ds.startFan(op, DataCreate) }

// Delete removes partitions op.Key.Partition .. +op.PartitionCount-1 for
// good (DeleteTopic, DeletePartitions): ops still parked on them fail
// with ErrPartitionNotFound, files and directories are removed. A Create
// of the same partition waits for the Delete. Once the whole topic is
// gone the caller may call RemoveTopicDirectory.
func (ds *DataShard) Delete(op *DataOp) { ds.startFan(op, DataDelete) }

// Purge empties partitions op.Key.Partition .. +op.PartitionCount-1:
// every segment and stored consumer offset goes, offsets restart at 0.
func (ds *DataShard) Purge(op *DataOp) { ds.startFan(op, DataPurge) }

// Retention sets the retention limits (op.Config's ExpiryMicros and
// SizeBytesMax; the rest of Config is fixed at create) of partitions
// op.Key.Partition .. +op.PartitionCount-1, each on its owner, effective
// from the next maintenance run (UpdateTopic, or a change of the
// partition count that changes each partition's share of the topic's
// size cap). Partitions that are gone or failed are skipped.
func (ds *DataShard) Retention(op *DataOp) { ds.startFan(op, DataRetention) }

// TopicStats fills op.Stats[i] with the counters of partition
// op.Key.Partition+i, for i below op.PartitionCount (len(op.Stats) must
// be at least op.PartitionCount).
func (ds *DataShard) TopicStats(op *DataOp) { ds.startFan(op, DataTopicStats) }

// StatsAll fills op.Shards[i] with shard i's totals (len(op.Shards) must
// be at least the shard count): GetStats sums them.
func (ds *DataShard) StatsAll(op *DataOp) { ds.startFan(op, DataStatsAll) }
