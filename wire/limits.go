package wire

// Named maxima and fixed sizes of the protocol. Each one is either read out
// of the reference (PROTOCOL.md section in the comment) or derived from the
// others; TestLimits asserts the relationships between them.
const (
	// HeaderBytes is the fixed consensus header in front of every frame (§2.1).
	HeaderBytes = 256
	// FrameBytesMax bounds a whole frame, header included (§2.1). A reader
	// closes the connection on a larger declared size.
	FrameBytesMax = 64 << 20
	// BodyBytesMax is what remains of a frame after its header.
	BodyBytesMax = FrameBytesMax - HeaderBytes

	// BatchHeaderBytes is the fixed header of a batch record (§8.2).
	BatchHeaderBytes = 256
	// MessageHeaderBytes is the fixed header of a message frame (§8.3).
	MessageHeaderBytes = 48
	// MessagesPerBatchMax follows from the frame cap: a message frame is at
	// least MessageHeaderBytes long (payloads may be empty on the wire).
	MessagesPerBatchMax = (BodyBytesMax - BatchHeaderBytes) / MessageHeaderBytes
	// PayloadBytesMax is the reference's per-message payload cap (§8.3).
	PayloadBytesMax = 64_000_000
	// UserHeadersBytesMax is the reference's cap on one message's user
	// headers (§8.3).
	UserHeadersBytesMax = 100_000

	// NameBytesMax bounds every name8 string: stream, topic, group, PAT
	// names, tokens, SDK name and version (§1.1).
	NameBytesMax = 255
	// UsernameBytesMin and UsernameBytesMax bound a username (§9).
	UsernameBytesMin = 3
	UsernameBytesMax = 50
	// PasswordBytesMin and PasswordBytesMax bound a password (§9).
	PasswordBytesMin = 3
	PasswordBytesMax = 100
	// NumericIdentifierBytes is the only legal length of a numeric
	// identifier value (§1.2).
	NumericIdentifierBytes = 4

	// OptionsEntriesMax and OptionsBlockBytesMax bound an option block
	// (§1.7). An entry is one key TLV plus one value TLV.
	OptionsEntriesMax    = 1024
	OptionsBlockBytesMax = 100_000
	// HeaderValueBytesMax bounds one TLV value or key (§1.7).
	HeaderValueBytesMax = 255
	// tlvPrefixBytes is the kind byte plus the u32 length of one TLV.
	tlvPrefixBytes = 5

	// PartitionsPerRequestMax bounds CreateTopic, CreatePartitions and
	// DeletePartitions (§9).
	PartitionsPerRequestMax = 1000
	// PartitionIDMax is one past the largest partition id in a topic (§9).
	PartitionIDMax = 1_000_000
	// TopicsPerStreamMax and StreamsMax are the reference's entity caps (§9).
	TopicsPerStreamMax = 4096
	StreamsMax         = 1 << 20
	// ClusterNodesMax is the largest roster the Go SDK accepts (§11).
	ClusterNodesMax = 64

	// frameScratchBytes bounds the frames RequestVector checksums by copying
	// header tail, payload and user headers into a scratch for one one-shot
	// XXH3; longer ones go through the streaming hasher. BenchmarkFrameChecksum
	// (5 runs) scratch vs hasher: 100 B 23-27 vs 26-40 ns, 1000 B 60-66 vs
	// 62-95 ns, 4000 B 142-144 vs 177-249 ns, 64000 B 2.7-3.0 vs 2.5-2.7 us.
	frameScratchBytes = 4096

	// PollPrefixBytes is the fixed prefix of a PollMessages reply (§8.5).
	PollPrefixBytes = 16
	// SendConfirmationBytes is one entry of a SendMessages reply (§7.7).
	SendConfirmationBytes = 20
	// PartitionEntryBytes is one partition entry of a topic reply (§7.3).
	PartitionEntryBytes = 40
	// ResultEntryBytes is one {index, result} pair of a result section (§4.1).
	ResultEntryBytes = 8
	// GlobalPermissionsBytes is the fixed global part of permissions (§1.8).
	GlobalPermissionsBytes = 10

	// PollPartitionResync is the partition id of an empty poll that tells a
	// group consumer its assignment changed (§8.5, §9.1).
	PollPartitionResync = 0xFFFFFFFF
	// ClientUserNone is the user id of a client that has not logged in (§7.5).
	ClientUserNone = 0xFFFFFFFF
	// ExpiryNever is the u64 sentinel for "never expire" and "unlimited" (§1.9).
	ExpiryNever = ^uint64(0)
)

// Topic setting bounds and defaults (§6.5, §1.9).
const (
	SegmentBytesMin                     = 1 << 20
	SegmentBytesMax                     = 1 << 30
	SegmentBytesAlignment               = 512
	SegmentBytesDefault                 = SegmentBytesMax
	MessagesRequiredToSaveDefault       = 1024
	SizeOfMessagesRequiredToSaveDefault = 1 << 20
)

// ProtocolVersion is the packed protocol version this package speaks
// (§1.10): 0.11.0.
var ProtocolVersion = PackVersion(0, 11, 0)

// PackVersion packs major.minor.patch as major<<20 | minor<<10 | patch.
func PackVersion(major, minor, patch uint32) uint32 {
	return (major&0x3FF)<<20 | (minor&0x3FF)<<10 | patch&0x3FF
}

// VersionAccepted reports whether a server speaking [versionMin, versionMax]
// accepts a client's packed version (§1.10): patch levels are ignored upward.
func VersionAccepted(client, versionMin, versionMax uint32) bool {
	return client >= versionMin && client>>10 <= versionMax>>10
}
