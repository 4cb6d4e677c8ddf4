package shard

import "time"

// Named limits of the data plane (the partition ops a shard runs for its
// own connections and for its peers). They sit beside the runtime's
// limits.go; TestDataLimits asserts how they relate.
const (
	// dataOpsPerShardMax bounds the DataOps one shard has started and not
	// yet seen Done: each is answering one in-flight frame, and a shard has
	// at most connectionsPerShardMax × inflightRequestsMax of those.
	dataOpsPerShardMax = connectionsPerShardMax * inflightRequestsMax

	// dataOpsPoolMax bounds the free DataOps a shard keeps for reuse;
	// beyond it Put leaves them to the garbage collector.
	dataOpsPoolMax = 4096

	// dataPendingSendsMax bounds the messages one shard holds because a
	// peer's queue was full: its own requests (at most dataOpsPerShardMax)
	// plus its replies to every peer's requests. Holding is never dropping:
	// the bound follows from the op bound, so reaching it is a bug.
	dataPendingSendsMax = shardCountMax * dataOpsPerShardMax

	// partitionParkedMax bounds the ops one partition holds while it opens,
	// purges or has a full journal; beyond it ops fail with ErrDataBusy.
	partitionParkedMax = 4096

	// storageDeliverMax bounds the namespace-op completions one delivery
	// runs in a loop turn.
	storageDeliverMax = 1024

	// dataRetryPeriod is the period of the retry timer while messages are
	// held or ops parked: shorter than any loop turn, so it fires every
	// turn.
	dataRetryPeriod = time.Microsecond

	// streamHoldMax is how long a batch appended while it arrives
	// (data_stream.go) may hold its partition while other appends wait
	// for it: a megabyte arrives in well under a millisecond on a fast
	// link, and a client that trickles one in is not allowed to stall the
	// partition's other producers. Past it the stream is dropped and its
	// request, once whole, is appended whole.
	streamHoldMax = 20 * time.Millisecond
	// dataDrainBytesPerTurn is how much of the cache's held journals one
	// drain copies: ~50 µs into resident memory, ~250 µs where the copy
	// faults pages in ahead of the populator. A request arriving meanwhile
	// waits for at most that.
	dataDrainBytesPerTurn = 512 << 10
	// dataDrainPeriod spaces the drains. Timers fire at the start of a
	// turn, before its Wait submits what the previous turn queued, so the
	// first drain waits a period: the acknowledgements of the write that
	// filled the cache go out first, and usually the poll of a consumer
	// reading it back is served before the copy starts. 512 KiB per
	// 250 µs drains 2 GB/s, faster than the disk the journals went to.
	dataDrainPeriod = 250 * time.Microsecond

	// dataTickIntervalDefault is how often each partition's Tick runs and
	// parked ops are retried when nothing else wakes them.
	dataTickIntervalDefault = 10 * time.Millisecond

	// dataOpenFilesReserveDefault is the descriptors a derived open-files
	// budget leaves to the rest of the process when the caller names no
	// reserve: listeners, epoll and io_uring instances, logs, transient
	// directory listings and about a thousand connections.
	dataOpenFilesReserveDefault = 1280
	// dataOpenFilesProcessReserve is that room without the connections.
	dataOpenFilesProcessReserve = 256

	// dataMaintenanceIntervalDefault is how often retention runs (Iggy's
	// data_maintenance.messages.interval default).
	dataMaintenanceIntervalDefault = time.Minute

	// dataStopTimeout bounds how long a stopping shard waits for its
	// partitions to close (flush and fdatasync) before it gives up on them.
	dataStopTimeout = 30 * time.Second

	// dataStopWait is the longest single wait of a stopping shard's pump.
	dataStopWait = 10 * time.Millisecond

	// dataDrainAllBytes asks the cache to copy every held journal at once
	// (no drain timer to spare).
	dataDrainAllBytes = 1 << 62
)

// Message kinds of the data plane, in a range no other user of Shard.Send
// takes (Data.OnMessage ignores the rest).
const (
	dataMessageBase    uint32 = 0xDA7A_0000
	dataMessageRequest        = dataMessageBase + 1 // run a partition op here; Data: *DataOp
	dataMessageReply          = dataMessageBase + 2 // a partition op is done; Data: *DataOp
	dataMessageFan            = dataMessageBase + 3 // run a topic op's share here; Data: *dataFan
	dataMessageFanDone        = dataMessageBase + 4 // a share is done; Data: *dataFan
	dataMessageLast           = dataMessageFanDone
)
