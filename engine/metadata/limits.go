package metadata

// Named limits (PROTOCOL.md §9); TestLimits relates them.
const (
	streamsMax            = 1 << 20
	topicsPerStreamMax    = 4096
	partitionsPerTopicMax = 1_000_000
	partitionsPerRequest  = 1000
	usersMax              = 1 << 16
	tokensPerUserMax      = 100
	groupsPerTopicMax     = 1 << 16
	nameBytesMax          = 255
	usernameBytesMin      = 3
	usernameBytesMax      = 50
	// recordBytesMax bounds one metadata log record (a topic's options
	// are at most 100,000 bytes).
	recordBytesMax = 1 << 20
	// snapshotRecords is how many records the log holds before a snapshot
	// replaces them.
	snapshotRecords = 1024
	// snapshotBytesMax bounds a snapshot read at open.
	snapshotBytesMax = 1 << 30
)
