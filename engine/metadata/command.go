package metadata

import "github.com/whippetio/whippet/engine/metadata/fbs"

// Kind names a command; the values are the flatbuffers enum's.
type Kind = fbs.Kind

// Command kinds.
const (
	CreateStream              = fbs.KindCreateStream
	UpdateStream              = fbs.KindUpdateStream
	DeleteStream              = fbs.KindDeleteStream
	PurgeStream               = fbs.KindPurgeStream
	CreateTopic               = fbs.KindCreateTopic
	UpdateTopic               = fbs.KindUpdateTopic
	DeleteTopic               = fbs.KindDeleteTopic
	PurgeTopic                = fbs.KindPurgeTopic
	CreatePartitions          = fbs.KindCreatePartitions
	DeletePartitions          = fbs.KindDeletePartitions
	CreateUser                = fbs.KindCreateUser
	UpdateUser                = fbs.KindUpdateUser
	DeleteUser                = fbs.KindDeleteUser
	UpdatePermissions         = fbs.KindUpdatePermissions
	ChangePassword            = fbs.KindChangePassword
	CreatePersonalAccessToken = fbs.KindCreatePersonalAccessToken
	DeletePersonalAccessToken = fbs.KindDeletePersonalAccessToken
	CreateConsumerGroup       = fbs.KindCreateConsumerGroup
	DeleteConsumerGroup       = fbs.KindDeleteConsumerGroup
)

// Command is one state change. Which fields matter depends on Kind (see
// each kind's apply function). Create commands carry no id: Prepare
// resolves it (lowest free slot; monotonic for consumer groups) before the
// command is logged, so replay is deterministic.
type Command struct {
	Kind     Kind
	StreamID uint32
	TopicID  uint32
	GroupID  uint32
	UserID   uint32
	// Count is a partition count.
	Count uint32
	Name  string
	// HasName and HasStatus mark the optional fields of UpdateUser.
	HasName   bool
	HasStatus bool
	// Secret is a password hash (PHC string) or a token hash (BLAKE3 hex):
	// the engine never sees raw secrets.
	Secret string
	Status uint8
	// Permissions are the wire permission bytes (PROTOCOL.md §1.8), kept
	// opaque; HasPermissions false means none.
	HasPermissions bool
	Permissions    []byte
	// CreatedAt and ExpiryAt are µs since the Unix epoch.
	CreatedAt uint64
	ExpiryAt  uint64
	Config    TopicConfig
	// Op is the replication op that committed the command in cluster
	// mode (0 on a single node); State.AppliedOp follows it.
	Op uint64
}

// TopicConfig holds a topic's resolved options.
type TopicConfig struct {
	MessageExpiryMicros uint64 // u64::MAX: never
	MaxTopicSizeBytes   uint64 // u64::MAX: unlimited
	SegmentBytes        uint64
	Compression         uint8 // 1 none, 2 gzip
	Durability          uint8 // engine.Durability
	ReplicationFactor   uint8
	DedupCount          uint32
	DedupWindowMicros   uint64
	// Options are the option entries the client set, canonical kinds.
	Options []Option
}

// Option is one key/value option entry (PROTOCOL.md §1.7 kinds).
type Option struct {
	Key   string
	Kind  uint8
	Value []byte
}

// Result says what a command created.
type Result struct {
	StreamID uint32
	TopicID  uint32
	GroupID  uint32
	UserID   uint32
	// PartitionIDs are the partitions a CreateTopic or CreatePartitions
	// added, or DeletePartitions removed.
	PartitionIDs []uint32
}
