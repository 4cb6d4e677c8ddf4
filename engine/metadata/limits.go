package metadata

import "github.com/whippetio/whippet/wire"

// Named limits (PROTOCOL.md §9); TestLimits relates them. Those the
// protocol fixes are wire's.
const (
	streamsMax            = wire.StreamsMax
	topicsPerStreamMax    = wire.TopicsPerStreamMax
	partitionsPerTopicMax = 1_000_000
	partitionsPerRequest  = wire.PartitionsPerRequestMax
	usersMax              = 1 << 16
	tokensPerUserMax      = 100
	groupsPerTopicMax     = 1 << 16
	nameBytesMax          = wire.NameBytesMax
	usernameBytesMin      = wire.UsernameBytesMin
	usernameBytesMax      = wire.UsernameBytesMax
	// recordBytesMax bounds one metadata log record (a topic's options
	// are at most 100,000 bytes).
	recordBytesMax = 1 << 20
	// snapshotRecords is how many records the log holds before a snapshot
	// replaces them.
	snapshotRecords = 1024
	// snapshotBytesMax bounds a snapshot read at open.
	snapshotBytesMax = 1 << 30
)
