package vsr

// Named limits. Every queue, table and message in the replica is bounded by
// one of these; TestLimits checks the relationships between them.
const (
	// headerBytes is the fixed size of every message header (see doc.go).
	headerBytes = 128

	// messageBytesMax bounds one message, header included: a Prepare carries
	// one client request, a State message one snapshot.
	messageBytesMax = 1 << 20

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

	// stateChunkBytesMax bounds one State chunk: a message's body.
	stateChunkBytesMax = messageBytesMax - headerBytes

	// stateChunkBytesDefault is the chunk a replica serves unless configured.
	stateChunkBytesDefault = 256 << 10

	// stateChunksPerRequest bounds the chunks one RequestState is answered
	// with.
	stateChunksPerRequest = 8

	// stateBytesMax bounds a whole state transfer payload (client table and
	// application snapshot), which both sides hold in memory.
	stateBytesMax = 1 << 30
)
