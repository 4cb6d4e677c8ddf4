package vsr

// Named limits. Every queue, table and message in the replica is bounded by
// one of these; TestLimits checks the relationships between them.
const (
	// headerBytes is the fixed size of every message header (see doc.go).
	headerBytes = 128

	// messageBytesMax bounds one message, header included: a Prepare carries
	// one client request, which for a partition is one whole batch as the
	// front admits it (a 64 MiB frame) plus the application's own small
	// header; a State message carries one snapshot chunk.
	messageBytesMax = 64<<20 + 64<<10

	// replicaCountMax bounds a cluster. Acknowledgements are kept in a
	// uint32 bitset per pipeline entry.
	replicaCountMax = 16

	// pipelineLenMax bounds the ops a primary has prepared but not committed.
	pipelineLenMax = 32

	// journalSlotCountMax bounds the in-memory and on-disk journal ring.
	journalSlotCountMax = 1 << 16

	// journalSlotCountDefault is the ring a group gets unless configured.
	journalSlotCountDefault = 1024

	// clientsMax bounds the client table of one group.
	clientsMax = 1024

	// repairPreparesMax bounds how many prepares one RequestPrepares asks
	// for, so a reply burst cannot swamp a peer's send queue.
	repairPreparesMax = 64

	// messagesPerStepMax bounds the messages one Step or Tick emits: a
	// repair burst, plus a broadcast to every replica, plus replies for a
	// pipeline's worth of commits.
	messagesPerStepMax = repairPreparesMax + 2*replicaCountMax + pipelineLenMax*2

	// clientSessionBytes is one encoded client table row: client, request, op.
	clientSessionBytes = 24

	// stateChunkBytesMax bounds one State chunk. It is far below
	// messageBytesMax: a burst of stateChunksPerRequest chunks is held in
	// one buffer, and small chunks keep a transfer from monopolising a link.
	stateChunkBytesMax = 1<<20 - headerBytes

	// stateChunkBytesDefault is the chunk a replica serves unless configured.
	stateChunkBytesDefault = 256 << 10

	// stateChunksPerRequest bounds the chunks one RequestState is answered
	// with.
	stateChunksPerRequest = 8

	// stateBytesMax bounds a whole state transfer payload (client table and
	// application snapshot), which both sides hold in memory.
	stateBytesMax = 1 << 30
)

// MessageBytesMax is messageBytesMax for transports: a frame larger than
// it is not a vsr message.
const MessageBytesMax = messageBytesMax

// HeaderBytes is the size of every message header: a caller that builds a
// request in place writes its body at this offset (EncodeRequest).
const HeaderBytes = headerBytes
