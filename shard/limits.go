package shard

import "time"

// Every queue, table, buffer and batch of the shard runtime has a named
// maximum here; TestLimits asserts how they relate and says why each
// relationship must hold. Memory is sized from these at startup.
const (
	// shardCountMax bounds the number of shards. The cross-shard queues
	// grow with its square (one per ordered pair).
	shardCountMax = 64

	// queueSlotCount is the capacity of one cross-shard SPSC queue (one per
	// ordered pair of shards): how many messages a shard may have in
	// flight to one peer before Send reports ErrQueueFull.
	queueSlotCount = 1024

	// messagesPerTurnMax bounds the messages a shard takes from one peer's
	// queue in one loop turn, so that one busy peer cannot starve the
	// shard's own I/O.
	messagesPerTurnMax = 256

	// completionsPerTurnMax bounds the completions a shard reaps in one
	// loop turn.
	completionsPerTurnMax = 256

	// connectionsPerShardMax bounds the connections one shard owns.
	connectionsPerShardMax = 4096

	// connectionsHandoffMax bounds the accepted fds shard 0 holds while
	// every target's queue is full; beyond it shard 0 serves them itself.
	connectionsHandoffMax = 64

	// acceptBacklog is the listen(2) backlog of the shared listener.
	acceptBacklog = 1024

	// acceptRetryDelay is how long the accepting shard waits before
	// re-arming an accept that failed (EMFILE, ENFILE, ENOBUFS).
	acceptRetryDelay = 10 * time.Millisecond

	// frameBytesMax is the largest frame a connection accepts, header
	// included; a larger declared size closes the connection.
	frameBytesMax = 64 << 20

	// frameHeadBytesMax is the most bytes a Handler may need to see before
	// it can tell a frame's size (Iggy's VSR header is 256 bytes).
	frameHeadBytesMax = 256

	// inflightRequestsMax bounds the frames of one connection handed to
	// the Handler whose reply is not yet sent; at the limit the shard
	// stops reading the connection (TCP backpressure reaches the client).
	inflightRequestsMax = 64

	// pushQueueLenMax bounds the buffers a connection queues outside any
	// request (Conn.Send); beyond it Send reports ErrSendQueueFull.
	pushQueueLenMax = 64

	// sendQueueLenMax bounds the buffers queued for sending on one
	// connection: every in-flight request's reply plus the pushes, so a
	// reply never finds the queue full.
	sendQueueLenMax = inflightRequestsMax + pushQueueLenMax

	// sendJoinBytesMax bounds the queued replies copied into one buffer to
	// go out in one send: small replies (acknowledgements, metadata) join;
	// a poll reply larger than this goes out from its own buffer.
	sendJoinBytesMax = 64 << 10

	// pollSpansMax bounds the records one poll reply sends in place from
	// the cache's arena (PollOp.Spans); records past it are copied. A 1 MB
	// reply of 1000-message batches holds one; one of 10-message batches
	// about a hundred, of which the first pollSpansMax go in place.
	pollSpansMax = 64

	// spanListsFreeMax bounds the span lists a shard keeps for reuse.
	spanListsFreeMax = 256

	// sendSpansMax bounds the spans of one vectored send (Backend.SendVec):
	// a poll reply's spans and the pieces of its buffer around them.
	sendSpansMax = 2*pollSpansMax + 1

	// recvBufferBytes is the size of one provided receive buffer (io_uring)
	// or one receive read (epoll).
	recvBufferBytes = 64 << 10

	// recvBufferCount is how many receive buffers a shard provides to the
	// kernel (io_uring buffer ring), or reads per loop turn (epoll). The
	// measurements in IO-URING-NOTES.md favoured 64 × 64 KiB over larger
	// rings (cache spill).
	recvBufferCount = 64

	// directRecvBytesMin is the size from which a frame is received
	// straight into its buffer (RecvInto) instead of being copied out of
	// receive buffers, and how much of it must still be missing for a
	// multishot receive to give way to that: enough to repay cancelling
	// the multishot receive and arming it again. With no receive armed,
	// the rest of such a frame is received straight in however little
	// of it is missing.
	directRecvBytesMin = 4 * recvBufferBytes

	// progressRecvBytes is the step in which a connection receives a
	// large frame whose arrival its handler watches (a SendMessages batch
	// appended while it arrives, front_stream.go): each step is one
	// completion, ~25 µs of loopback, and the disk writes what arrived
	// in pieces of at least the engine's streamPieceBytesMin.
	progressRecvBytes = 128 << 10

	// pausedInputBytesMax bounds the received bytes a connection keeps
	// while its reading is paused: what was already in flight when the
	// pause began, at most every receive buffer of the shard.
	pausedInputBytesMax = recvBufferCount * recvBufferBytes

	// timersPerShardMax bounds the pending timers of one shard.
	timersPerShardMax = 4096
	// timersFreeMax bounds the removed timers a shard keeps for reuse.
	timersFreeMax = 64

	// poolBuffersPerClassMax bounds the free buffers a shard's frame pool
	// keeps per power-of-two size class.
	poolBuffersPerClassMax = 64

	// poolClassBytesMin is the smallest pool size class.
	poolClassBytesMin = 512

	// uringClassMapBytes is the address space one io_uring memory class
	// below uringLargeClassBytesMin maps: its buffer count is this over its
	// buffer size, at least one. Pages become resident only when first
	// touched, and the pool hands out the most recently freed buffer
	// first, so a class costs the memory of its busiest moment, not this.
	uringClassMapBytes = 32 << 20

	// uringLargeClassBytesMin is the smallest class that maps
	// uringLargeClassMapBytes: the classes of partition buffers (the
	// engine's 1 MiB read buffer, its 4 MiB journals) and large replies.
	uringLargeClassBytesMin = 1 << 20

	// uringLargeClassMapBytes is the address space each large class
	// reserves: at the engine's default 4 MiB journal, 1 GiB holds the two
	// journals of uringRingPartitionsPerShard partitions in ring memory
	// (the 1 MiB class, their read buffers eight times over). It is
	// address space only (no MAP_POPULATE; idle pages trimmed), seven
	// classes × 1 GiB per shard, far inside the 128 TiB a process has. A
	// class that runs dry hands out Go memory (Stats.AllocsHeap) and the
	// backend bounces it: slower, never a failure.
	uringLargeClassMapBytes = 1 << 30

	// uringRingPartitionsPerShard is how many partitions per shard keep
	// their 4 MiB journals in ring memory (documentation of the sizing
	// above; TestLimits checks the arithmetic).
	uringRingPartitionsPerShard = 128

	// uringFixedClassBytesMin is the smallest class in the ring's fixed
	// buffer table (READ_FIXED / WRITE_FIXED). The table holds at most
	// ring.PoolBuffersMax (16384) slots; the 4 KiB class alone would take
	// 8192 and gains least from fixed buffers (one page to pin per op), so
	// classes from 64 KiB up (2992 slots) are in it and smaller ones do
	// plain READ / WRITE. The table is sparse: a slot pins its buffer (and
	// charges it to RLIMIT_MEMLOCK without CAP_IPC_LOCK) only from its
	// first file op until the idle trim gives the buffer back.
	uringFixedClassBytesMin = 64 << 10

	// spinMax bounds Options.Spin: past a millisecond a spin is a busy
	// loop, not a bridge over a wake-up's latency.
	spinMax = time.Millisecond

	// idleTrimDelay is how long a shard goes without completions before
	// it gives back the memory of its free buffers: a steady load never
	// pays a refill's page faults (about a microsecond a page, once), and
	// an idle broker's RSS falls within a second of its last request.
	idleTrimDelay = 500 * time.Millisecond

	// heapTrimIntervalMin spaces the idle trims of the Go heap: each is a
	// forced full GC, whose cost grows with the heap (about 100 ms of CPU
	// with 10,000 partitions), and heartbeats of idle connections end an
	// idle stretch every few seconds.
	heapTrimIntervalMin = 10 * time.Second

	// spinIdleTurnsMax is how many fruitless spins in a row turn spinning
	// off until work arrives again.
	spinIdleTurnsMax = 8
)

// fileOpsInFlightMax bounds the file ops one shard has in flight.
const fileOpsInFlightMax = 1024
