package shard

import (
	"time"

	"github.com/whippetio/whippet/wire"
)

// Limits of the RPC front (PROTOCOL.md §9 names the user ones). TestLimits
// checks how they relate to the runtime's.
const (
	// usernameBytesMin..usernameBytesMax bound a username (§9).
	usernameBytesMin = 3
	usernameBytesMax = 50
	// passwordBytesMin..passwordBytesMax bound a password (§9).
	passwordBytesMin = 3
	passwordBytesMax = 100
	// partitionsPerRequestMax bounds the partitions one CreateTopic,
	// CreatePartitions or DeletePartitions names (§9).
	partitionsPerRequestMax = 1000
	// nameBytesMax bounds stream, topic, group and token names (§9).
	nameBytesMax = 255

	// tokensPerUserDefault caps a user's personal access tokens when the
	// configuration does not.
	tokensPerUserDefault = 100
	// tokenBytes is the entropy of a minted personal access token.
	tokenBytes = 32

	// queuedFramesMax bounds the frames a session holds while an earlier
	// one of the same connection executes. The runtime stops reading a
	// connection at inflightRequestsMax frames, so the queue never holds
	// more than that.
	queuedFramesMax = inflightRequestsMax

	// outboxRetryDelay is how long a shard waits before it retries
	// messages a full cross-shard queue refused.
	outboxRetryDelay = 50 * time.Microsecond

	// notReadyRetryDelay is how long a request waits before it retries
	// while shard 0 is still opening the metadata store.
	notReadyRetryDelay = time.Millisecond

	// passwordCacheEntriesMax bounds each shard's cache of verified
	// (password, hash) pairs, which spares a repeated login the argon2id
	// cost. The cache is emptied when full.
	passwordCacheEntriesMax = 1024

	// callsFreeMax bounds the recycled calls a shard keeps.
	callsFreeMax = 4096

	// staleFactorPercent: a group member silent for this share of the
	// heartbeat interval is stale (§5.7: 1.2 × interval).
	staleFactorPercent = 120

	// affinityRequestsMin is how many partition requests in a row must go
	// to one other shard before the connection moves there
	// (front_affinity.go): a client whose requests spread over shards
	// breaks the run and stays put, and one stray request never moves it.
	affinityRequestsMin = 8

	// affinityMoveIntervalMin is the least time between two moves of one
	// connection: a client whose load shifts from shard to shard in long
	// runs moves at most this often, so a move (a cancelled receive and a
	// queue slot) stays rare next to the requests it saves hops on.
	affinityMoveIntervalMin = time.Second

	// streamFrameBytesMin is the least SendMessages frame whose batch is
	// appended while it arrives (front_stream.go): below it the receive
	// is too short to hide anything behind. The engine asks at least as
	// much of the batch (piecesRecordBytesMin, 512 KiB).
	streamFrameBytesMin = 512 << 10
	// streamHeadBytesMin is how much of a frame's body must have arrived
	// before the front looks at it: the envelope (at most 4 + 2 × 257
	// identifier bytes + 257 partitioning bytes + 4) and the batch header.
	streamHeadBytesMin = 2048
)

// Poll reply sizing: the records buffer grows with the count asked, within
// these bounds (a poll serves what fits; the engine slices a batch that
// alone does not fit).
const (
	// pollBytesPerMessage is a 1 KiB message as stored: its frame header
	// plus the payload. Without the header, a poll of N 1 KiB messages got
	// room for about 96% of them, so the next poll started inside the same
	// batch and the disk read it again.
	pollBytesPerMessage = wire.MessageHeaderBytes + 1024
	pollRecordsBytesMin = 64 << 10
	pollRecordsBytesCap = 8 << 20
	// pollReplyBytesMax bounds a poll reply that holds one message larger
	// than pollRecordsBytesCap: a frame, which any accepted message fits.
	pollReplyBytesMax = wire.FrameBytesMax
	pollPrefixBytes   = 16
	pollNoPartition   = 0xFFFFFFFF // the group fence sentinel (§8.5)
)

// Argon2id parameters for stored passwords (the OWASP minimum: 19 MiB, two
// passes, one lane).
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyBytes  = 32
	argonSaltBytes = 16
)
