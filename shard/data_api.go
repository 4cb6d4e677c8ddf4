package shard

import (
	"errors"
	"log/slog"
	"time"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/metadata"
)

// Errors of the data plane; engine's errors (ErrInvalidOffset,
// ErrOffsetNotFound, ErrCorrupt, *FatalError...) pass through DataOp.Err
// unchanged.
var (
	// ErrPartitionNotFound: the owner shard has no such partition (never
	// created, deleted, or its directory failed to open).
	ErrPartitionNotFound = errors.New("shard: partition not found")
	// ErrDataBusy: the partition already parks partitionParkedMax ops
	// (it is opening, purging or its journal is full); retry later.
	ErrDataBusy = errors.New("shard: partition busy")
	// ErrDataStopped: the data plane is stopping; the op did not run.
	ErrDataStopped = errors.New("shard: data plane stopped")
)

// DataKind is the operation a DataOp carries.
type DataKind uint8

// Partition operations run on the partition's owner; topic operations fan
// out to the owners of a range of partitions; DataStatsAll to every shard.
const (
	DataAppend DataKind = iota + 1
	DataPoll
	DataStoreOffset
	DataGetOffset
	DataDeleteOffset
	DataFlush
	DataDeleteSegments
	DataStats
	DataCreate     // topic op: create (or open) partitions
	DataDelete     // topic op: delete partitions for good
	DataPurge      // topic op: empty partitions, offsets included
	DataTopicStats // topic op: Stats of each partition into DataOp.Stats
	DataRetention  // topic op: set the retention limits of open partitions
	DataStatsAll   // every shard's totals into DataOp.Shards
)

// PartitionConfig is what a partition opens with, from its topic's
// options (PartitionConfigOf maps a metadata.TopicConfig).
type PartitionConfig struct {
	Durability engine.Durability
	// SegmentBytes: 0 means engine.SegmentBytesDefault.
	SegmentBytes int64
	// ExpiryMicros: a sealed segment whose newest message is older goes at
	// the next maintenance run; 0 never.
	ExpiryMicros uint64
	// SizeBytesMax: the oldest sealed segments go while the partition holds
	// more; 0 unlimited. It is this partition's share of max_topic_size.
	SizeBytesMax      int64
	DedupCount        int
	DedupWindowMicros uint64
}

// PartitionConfigOf maps a topic's resolved options to the configuration
// of each of its partitionCount partitions: max_topic_size is shared
// equally between them.
func PartitionConfigOf(topic metadata.TopicConfig, partitionCount int) PartitionConfig {
	config := PartitionConfig{
		Durability:        engine.Durability(topic.Durability),
		DedupCount:        int(topic.DedupCount),
		DedupWindowMicros: topic.DedupWindowMicros,
	}
	if topic.SegmentBytes != 0 && topic.SegmentBytes <= 1<<62 {
		config.SegmentBytes = int64(topic.SegmentBytes)
	}
	if topic.MessageExpiryMicros != ^uint64(0) {
		config.ExpiryMicros = topic.MessageExpiryMicros
	}
	if topic.MaxTopicSizeBytes != ^uint64(0) && topic.MaxTopicSizeBytes != 0 && partitionCount > 0 {
		config.SizeBytesMax = int64(min(topic.MaxTopicSizeBytes/uint64(partitionCount), 1<<62))
	}
	return config
}

// PartitionSpec is a partition to open at start, with its configuration.
type PartitionSpec struct {
	Key    PartitionKey
	Config PartitionConfig
}

// DataOptions configure the data plane of a runtime.
type DataOptions struct {
	// Directory is system.path: partitions live under
	// {Directory}/streams/{stream}/topics/{topic}/partitions/{partition}.
	Directory string
	// Partitions are opened (recovered) at start, each by its owner shard;
	// ops on a partition still recovering wait for it.
	Partitions []PartitionSpec
	// CacheBytes is the recent-batch cache budget of the whole runtime,
	// shared by its shards (a busy shard may hold most of it; see
	// engine.CacheBudget); 0: engine.CacheBytesDefault; negative: no cache.
	CacheBytes int
	// JournalBytes is each partition's write buffer size (0: engine's).
	JournalBytes int
	// TickInterval is how often each partition's Tick runs (retrying a
	// stalled write); 0: dataTickIntervalDefault.
	TickInterval time.Duration
	// MaintenanceInterval is how often retention (ExpiryMicros,
	// SizeBytesMax) and the give-back of idle partitions' space allocated
	// ahead run; 0: dataMaintenanceIntervalDefault.
	MaintenanceInterval time.Duration
	// OpenFilesMax bounds the files the data plane holds open, all shards
	// together (each gets an equal share): partitions' segment, offsets
	// and directory files, the metadata and replica logs. Files not in use
	// are closed least recently used and reopened on demand. 0 derives it
	// from RLIMIT_NOFILE (raised to its hard limit) minus
	// OpenFilesReserve.
	OpenFilesMax int
	// OpenFilesReserve is the descriptors a derived OpenFilesMax leaves to
	// the rest of the process: connections, listeners, rings, logs
	// (0: dataOpenFilesReserveDefault).
	OpenFilesReserve int
	// ReadChecksumsUnverified serves batches read from disk without
	// verifying their checksums (engine.PartitionOptions).
	ReadChecksumsUnverified bool
	// AllocateAheadOff: partitions never allocate log space ahead of
	// large appends (engine.PartitionOptions).
	AllocateAheadOff bool
	// Now gives the time retention compares against; nil: time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// PartitionStats is what GetTopic and GetStats report for one partition.
type PartitionStats struct {
	engine.Stats
	Err error // ErrPartitionNotFound when the owner has no such partition
}

// ShardDataStats are one shard's totals over the partitions it owns.
type ShardDataStats struct {
	Partitions    int
	Segments      int
	MessagesCount uint64
	SizeBytes     int64
}

// DataOp is one data-plane request. The caller takes it from its shard's
// pool (DataShard.Get), fills the fields its kind reads, starts it with a
// DataShard method, and owns it again when Done runs, on the caller's
// shard thread; then it returns it with DataShard.Put. Between the start
// and Done the op belongs to the data plane (possibly another shard's
// thread): the caller must not touch it nor the buffers it points to.
type DataOp struct {
	Key PartitionKey
	// Done runs exactly once, on the shard that started the op, possibly
	// before the start call returns.
	Done func(op *DataOp)
	// Conn and Context are the caller's: the data plane never reads them.
	Conn    *Conn
	Context any

	// Append: Batch is a validated batch record (wire.ValidateBatch),
	// which the owner copies; Timestamp is base_timestamp in µs (0: now).
	// With Stream set, Batch completes the streamed append that
	// DataShard.StreamOpen opened on this shard (data_stream.go) and is
	// validated there.
	Batch     []byte
	Timestamp uint64
	Stream    uint64

	// Poll: strategy, value, count, consumer, auto-commit. Out receives
	// stored batch records (PROTOCOL.md §8.5) after its current length,
	// within its capacity; the caller writes the 16-byte poll prefix.
	Strategy   engine.PollStrategy
	Value      uint64
	Count      uint32
	Consumer   engine.Consumer
	AutoCommit bool
	Out        []byte
	// Spans, with spare capacity, lets the poll leave whole records the
	// cache holds in its arena in place (engine.PollOp.Spans); only for an
	// op whose partition this shard owns, as the spans pin this shard's
	// cache. Done hands them to the caller, who releases each.
	Spans []engine.PollSpan

	// StoreOffset: Offset. GetOffset answers Offset and Found.
	Offset uint64
	Found  bool

	// Flush: Fsync (both drain the write pipeline; Fsync also
	// fdatasyncs, see DataShard.Flush). DeleteSegments: SegmentCount.
	Fsync        bool
	SegmentCount int

	// Topic ops: the partitions Key.Partition .. +PartitionCount-1 of the
	// topic; Create opens them with Config. TopicStats fills Stats, which
	// the caller sizes to PartitionCount (Stats[i] is partition
	// Key.Partition+i). StatsAll fills Shards, sized to the shard count.
	PartitionCount int
	Config         PartitionConfig
	Stats          []PartitionStats
	Shards         []ShardDataStats

	// PurgeGeneration: a Purge's topic purge generation (metadata) in
	// cluster mode, where it names the purge in the partitions' logs.
	PurgeGeneration uint64

	// Results. Append: BaseOffset and Messages stored (fewer than sent
	// when dedup dropped some). Poll: Messages appended to Out, from
	// OffsetFirst to OffsetLast. CurrentOffset: the partition's last
	// acknowledged offset (poll, offsets, stats). Partition: one partition's
	// stats (DataStats). NeedBytes: a poll that returned nothing because
	// its first message does not fit Out's spare capacity sets the capacity
	// it needs (engine.PollOp.NeedBytes). Err: nil, ErrPartitionNotFound,
	// ErrDataBusy, an engine error, or an *engine.FatalError (the runtime
	// is stopping).
	BaseOffset    uint64
	NeedBytes     int
	Messages      uint32
	OffsetFirst   uint64
	OffsetLast    uint64
	CurrentOffset uint64
	Partition     engine.Stats
	Err           error

	dataOpState
}
