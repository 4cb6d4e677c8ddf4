package replicalog

// Named limits. TestLimits asserts how they relate and says why.
const (
	// MessageBytesMax bounds one journal slot's message: a vsr Prepare
	// carrying the largest batch the front admits (the 64 MiB wire frame)
	// plus its header, with room to spare.
	MessageBytesMax = 64<<20 + 64<<10

	// SlotCountMax bounds the journal ring of one group (vsr's
	// journalSlotCountMax).
	SlotCountMax = 1 << 16

	// HardStateBytesMax bounds the opaque hard state: vsr's fixed fields
	// plus a client table of 1024 rows of 24 bytes fit with room to spare.
	HardStateBytesMax = 64 << 10

	// AppBytesMax bounds the application record (the applied mark).
	AppBytesMax = 256

	// PersistQueueMax bounds the Persists queued behind the one in flight.
	PersistQueueMax = 8
)

// Format sizes (diagrams in doc.go).
const (
	// recordHeaderBytes frames a journal record: length, checksum, slot, op.
	recordHeaderBytes = 4 + 8 + 4 + 8
	// fileHeaderBytes is the journal file's header.
	fileHeaderBytes = 64
	// copyHeaderBytes is a superblock copy's header.
	copyHeaderBytes = 64
	// copyBytes is the fixed region of one superblock copy; the journal
	// file holds two, at copyAt(0) and copyAt(1), after the header's block.
	copyBytes = 128 << 10
	// recordsAt is where the journal's records start: after the header's
	// block and the two copy regions.
	recordsAt = 4096 + 2*copyBytes
)

// Tuning.
const (
	// copyMessageBytesMax: messages up to this size are copied into the
	// staging buffer, so a Persist of many small slots is one write; larger
	// ones are written from the caller's buffer, avoiding a copy.
	copyMessageBytesMax = 64 << 10
	// chunksInflightMax bounds the journal writes one Persist has in
	// flight at once.
	chunksInflightMax = 8
	// compactRatio: the journal is rewritten when its file exceeds this
	// multiple of the live bytes (header plus each slot's latest record)…
	compactRatio = 4
	// compactBytesMin …and at least this size, so small journals are not
	// rewritten over and over.
	compactBytesMin = 4 << 20
	// readChunkBytes is the size of one read of the journal scan at open
	// and of compaction's copy.
	readChunkBytes = 4 << 20
	// journalBytesMax bounds the journal file open accepts: every slot at
	// its maximum, times the compaction ratio, plus one more Persist.
	journalBytesMax = (compactRatio + 1) * SlotCountMax * (recordHeaderBytes + MessageBytesMax)
)
