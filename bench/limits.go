package bench

import "time"

// Named limits and defaults of the load generator. TestLimits asserts how
// they relate and why each relation must hold.
const (
	// ActorsMax bounds producers, consumers and producing consumers of one
	// kind: each actor owns a connection and its own series.
	ActorsMax = 1024
	// StreamsMax bounds the bench streams a run creates.
	StreamsMax = 1024
	// PartitionsMax mirrors the protocol's cap on one CreateTopic request.
	PartitionsMax = 1000
	// ConsumerGroupsMax bounds the groups a run creates.
	ConsumerGroupsMax = 1024

	// MessageSizeDefault and MessagesPerBatchDefault are iggy-bench's.
	MessageSizeDefault      = 1000
	MessagesPerBatchDefault = 1000
	// MessageBatchesDefault is used when neither --message-batches nor
	// --total-data is given.
	MessageBatchesDefault = 1000
	// MessageSizeMax bounds one payload; MessagesPerBatchMax one batch, so
	// that a batch of the largest messages still fits one frame.
	MessageSizeMax      = 1 << 20
	MessagesPerBatchMax = 10_000
	// BatchBytesMax bounds the payload bytes of one batch: below the
	// protocol's 64 MiB frame, with room for the 48-byte message headers.
	BatchBytesMax = 60 << 20

	// PinnedStreamsDefault, BalancedStreamsDefault, BalancedPartitionsDefault,
	// ProducersDefault, ConsumersDefault and ConsumerGroupsDefault are the
	// kind defaults of iggy-bench.
	PinnedStreamsDefault      = 8
	BalancedStreamsDefault    = 1
	BalancedPartitionsDefault = 24
	ProducersDefault          = 8
	ConsumersDefault          = 8
	ConsumerGroupsDefault     = 1
	// ReadAmplificationDefault speeds consumers up so they keep pace with
	// producers when end-to-end latency is measured.
	ReadAmplificationDefault = 1.05

	// SamplingTimeDefault is the width of a time-series bucket and
	// MovingAverageWindowDefault the SMA window (in buckets) of the
	// throughput series.
	SamplingTimeDefault        = 10 * time.Millisecond
	SamplingTimeMin            = time.Millisecond
	MovingAverageWindowDefault = 20
	MovingAverageWindowMax     = 10_000
	// SeriesBucketsMax bounds one actor's series (at the 10 ms default,
	// about 29 hours); later records still count in every total.
	SeriesBucketsMax = 1 << 23
	// LatencySamplesMax bounds the raw samples an actor keeps for the
	// linear-interpolated percentiles; the HdrHistogram keeps counting.
	LatencySamplesMax = 1 << 24
	// ChartPointsMax bounds the points of one chart line (LTTB downsampling).
	ChartPointsMax = 3000
	// DistributionBins is the bin count of the pooled latency distribution
	// and DistributionClampP99 its upper edge as a multiple of the P99.
	DistributionBins     = 50
	DistributionClampP99 = 1.5

	// HistogramLatencyMinMicros, HistogramLatencyMaxMicros and
	// HistogramSignificantDigits size every HdrHistogram: 1 µs to one hour
	// at three significant digits (0.1% error).
	HistogramLatencyMinMicros  = 1
	HistogramLatencyMaxMicros  = int64(time.Hour / time.Microsecond)
	HistogramSignificantDigits = 3

	// OpenLoopInFlightDefault is how many batches one open-loop actor may
	// have outstanding; 1 reproduces wrk2's corrected single connection.
	OpenLoopInFlightDefault = 1
	// OpenLoopInFlightMax stays within the client's pipeline bound.
	OpenLoopInFlightMax = 64

	// IdlePollBackoff paces a consumer that found nothing new, and
	// ConsumerStallMax is how long a consumer may see no progress after
	// the producers finished before the run fails.
	IdlePollBackoff  = 100 * time.Microsecond
	ConsumerStallMax = 15 * time.Second
	// GroupAssignmentRefresh is how often a group consumer re-reads its
	// assignment while its partitions yield nothing.
	GroupAssignmentRefresh = time.Second

	// PayloadPoolBytes is the pre-generated random alphanumeric buffer
	// payloads are sliced from.
	PayloadPoolBytes = 4 << 20

	// ServerStartTimeout bounds the wait for a local server to answer a
	// ping, ServerStopTimeout its graceful stop before SIGKILL, and
	// ServerProbeInterval the pause between readiness probes.
	ServerStartTimeout  = 30 * time.Second
	ServerStopTimeout   = 15 * time.Second
	ServerProbeInterval = 50 * time.Millisecond
	// HeartbeatInterval keeps every actor's connection alive while it waits
	// (for the release, for data), as the Go SDK's 5 s pings do, so the
	// server never evicts a group member as stale.
	HeartbeatInterval = 5 * time.Second

	// backgroundTopicPartitionsMax is the partitions of one background
	// topic: the server's limit of partitions created by one request.
	backgroundTopicPartitionsMax = 1000
	// A server has settled after its background setup when it used less
	// than backgroundSettleCPUShare of a core in each of
	// backgroundSettleQuiet consecutive backgroundSettleWindows; the wait
	// gives up after backgroundSettleMax.
	backgroundSettleCPUShare = 0.05
	backgroundSettleWindow   = 500 * time.Millisecond
	backgroundSettleMax      = time.Minute
	backgroundSettleQuiet    = 4
	// backgroundIdleWindow is how long the settled server's idle CPU is
	// measured (the periodic ticks over its partitions and connections).
	backgroundIdleWindow = 2 * time.Second
	// SetupTimeout bounds creating or checking streams, topics and groups.
	SetupTimeout = 2 * time.Minute
	// ProgressInterval paces the progress bar redraws.
	ProgressInterval = 200 * time.Millisecond
)
