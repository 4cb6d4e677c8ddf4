package shard

// # The data plane (data_*.go)
//
// Data runs the partitions of a runtime. Each partition belongs to one
// shard, OwnerOf(key, shardCount): the upper 16 bits of
// MurmurHash3_x86_32 over the packed namespace stream<<32 | topic<<20 |
// partition, modulo the shard count (IGGY-SERVER-NOTES.md §3.3). Only the
// owner's thread touches a partition's engine.Partition, its files and its
// cache. A partition lives in
// {Directory}/streams/{stream}/topics/{topic}/partitions/{partition}
// in the engine's layout (engine/doc.go).
//
// Wiring (cmd/whippet-server):
//
//	data, err := shard.NewData(shard.DataOptions{Directory: path, Partitions: specs})
//	rt, err := shard.Start(data.Install(shard.Options{...}))
//	// in a Handler, on the connection's shard:
//	ds := data.Local(conn.Shard())
//	op := ds.Get()
//	op.Key, op.Batch, op.Conn, op.Done = key, batch, conn, onAppended
//	ds.Append(op)       // Done runs here, on this shard, exactly once
//	...                 // in Done: reply from op's results, then ds.Put(op)
//
// Partition ops (Append, Poll, StoreOffset, GetOffset, DeleteOffset,
// Flush, DeleteSegments, Stats) go to the owner: directly when the
// connection's shard owns the partition, else as a Message over the SPSC
// queue; the owner runs the op on its engine.Partition and the completed op
// travels back the same way, and Done runs on the origin. Topic ops
// (Create, Delete, Purge, TopicStats over a range of partitions, StatsAll
// over every shard) send one share to each owner involved and finish when
// every share came back.
//
// Ownership of memory: between the start call and Done the DataOp and
// what it points to (Batch, Out, Stats) belong to the data plane; the
// owner reads Batch in place (the engine copies it into its journal) and
// polls append straight into Out, so a poll reply is built in the
// origin's buffer with one copy from the journal, cache or disk. The SPSC
// queue's release/acquire ordering makes those writes visible on the
// origin when the reply arrives.
//
// Backpressure: a full peer queue never drops a message. The sender holds
// it, with everything it sends that peer later, and resends in order at
// the next loop turn (dataPendingSendsMax bounds what can be held; the op
// bound makes it unreachable). A partition that is opening, purging or
// whose journal is full parks ops in arrival order (partitionParkedMax,
// then ErrDataBusy) and retries them at the next loop turn after a
// completion, or at the next tick. So does one whose engine appends a
// batch while it arrives (data_stream.go): appends wait for that stream,
// whose own op never waits behind them.
//
// Startup and recovery: DataOptions.Partitions (from the metadata state)
// are recovered by their owners in OnStart; ops on a partition still
// recovering park until it is open (TopicStats reports ErrDataBusy for
// it meanwhile; Data.Opening counts them). A partition that refuses to
// open (engine ErrCorrupt, naming file and position) answers every op
// with that error and is logged; the other partitions serve, and Delete
// still removes its directory. Create opens (or creates) a partition at
// run time and leaves an open one as it is; Delete removes it for good,
// failing the ops parked on it; a Create of a partition being deleted
// waits for the delete, and ops arriving after that Create park for the
// new partition. Purge waits for a recovering partition; appends and
// polls park while a purge runs. After a whole topic is deleted the
// caller removes its empty directories with RemoveTopicDirectory.
//
// Memory: each open partition holds the engine's two write buffers
// (DataOptions.JournalBytes each, engine default 4 MiB), one read buffer
// (1 MiB) and small index and offset buffers, allocated on first use; each
// shard holds one recent-batch cache, all drawing on one budget
// (DataOptions.CacheBytes, engine.CacheBudget; the arenas are mapped
// outside the Go heap and fill only with written data). On
// io_uring the classes from 1 MiB up reserve 1 GiB of address space each
// (uringLargeClassMapBytes: the journals of 128 partitions per shard at
// 4 MiB); past that a partition's buffers are Go memory, bounced per op
// and counted in Stats.AllocsHeap, and the partition still opens.
//
// Durability: per topic (PartitionConfig.Durability), Done of an Append
// runs after the durability point. A failed fdatasync is fatal: the op
// gets the *engine.FatalError, and the data plane stops the runtime with
// it, so Runtime.Err() (and Data.Fatal) return it and cmd exits with its
// own code (engine.IsFatal).
//
// Timers: every TickInterval the partitions on the shard's tick list (those
// that appended, park ops, purge, open or belong to a group) Tick
// (retrying a stalled write) and parked ops retry, so idle partitions cost
// no tick; every MaintenanceInterval retention runs (ExpiryMicros,
// SizeBytesMax) on partitions that have a limit, and partitions that saw
// no large batch since the previous pass give back the log space
// allocated ahead of them (engine TrimSpace).
// OnStop closes every partition (writes drained, active segment synced),
// driving the completions itself since the loop no longer turns.
//
// Open files: every shard's Storage runs its ops through an engine
// FileTable holding the shard's share of DataOptions.OpenFilesMax (0:
// RLIMIT_NOFILE, raised to its hard limit, minus OpenFilesReserve), so
// any number of partitions keeps a bounded number of descriptors: files
// not in use are closed least recently used and reopened on demand, an op
// waiting for a descriptor waits for the next completion, and the first
// forced close is logged once per shard.
//
// Storage: the engine's file ops go through Storage: reads, writes and
// data fdatasyncs on the shard's backend (io_uring ops on ring memory
// from Shard.Buffer when it is aligned, else aligned Go memory bounced by
// the backend). On io_uring the pools from 64 KiB up form the ring's
// sparse fixed-buffer table, so journal writes and log reads are
// WRITE_FIXED / READ_FIXED (Stats.FixedFileOps); a buffer's slot is filled
// on its first file op and emptied when the idle trim gives it back, so
// only buffers in use are pinned. Without the table (registration or a
// slot refused, e.g. RLIMIT_MEMLOCK without CAP_IPC_LOCK) the ops are
// plain READ / WRITE (Stats.PlainFileOps), logged once. Namespace ops (open, mkdir, list, remove, rename,
// directory sync) as blocking calls completed at the next turn; see
// Storage for why.
//
// Steady path: ops come from a per-shard pool with their engine
// completions bound once, messages carry pointers, and the partition
// table is a map keyed by value, so Append and Poll allocate nothing.
//
// Invariants of the data plane:
//
//  1. Only the owner shard's thread touches a partition (its engine
//     state, files and parked ops); other shards reach it only through
//     messages.
//  2. Done runs exactly once per start, on the origin shard's thread.
//  3. Messages to one peer leave in the order they were sent: once one is
//     held, later ones queue behind it. Ops on one partition run in the
//     order the owner received them: once one is parked, later ones park
//     behind it.
//  4. Nothing is dropped: a held message waits for queue room, a parked
//     op for the partition; only a partition's parked limit turns ops
//     away, with ErrDataBusy.
//  5. A fatal storage error stops the whole runtime (never one shard).
