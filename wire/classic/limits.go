package classic

import "time"

// Frame geometry. Every size here is fixed by the 0.8 wire format.
const (
	// RequestPrologueBytes is the [length u32][code u32] that opens a request.
	RequestPrologueBytes = 8
	// ReplyPrologueBytes is the [status u32][length u32] that opens a reply.
	ReplyPrologueBytes = 8
	// RequestCodeBytes is the part of the request length word that is not body.
	RequestCodeBytes = 4
	// MessageHeaderBytes is the per-message header of SendMessages and polls.
	MessageHeaderBytes = 64
	// IndexEntryBytes is one entry of the SendMessages index array.
	IndexEntryBytes = 16
	// PollReplyHeaderBytes is [partition_id u32][current_offset u64][count u32].
	PollReplyHeaderBytes = 16
	// IdentifierNumericBytes is [kind u8][len u8][id u32].
	IdentifierNumericBytes = 6
	// OptionalPartitionBytes is [flag u8][partition u32].
	OptionalPartitionBytes = 5
	// PollingStrategyBytes is [kind u8][value u64].
	PollingStrategyBytes = 9
	// ChecksumBytes is the XXH3-64 value at the start of a message header.
	ChecksumBytes = 8
)

// Maxima the server enforces on input.
const (
	// ControlBodyBytesMax caps the body of every command except SendMessages.
	// The 0.8 server answers a larger control body with status 3; a new server
	// must also close, because it does not drain the announced body.
	ControlBodyBytesMax = 10 * 1024 * 1024
	// SendMessagesBodyBytesMax caps a SendMessages body. 0.8 had no cap; 64 MiB
	// is the 0.9 VSR frame cap, so one batch fits either framing.
	SendMessagesBodyBytesMax = 64 * 1024 * 1024
	// ReplyBodyBytesMax caps a reply body a client accepts (a poll reply is the
	// largest). A server never builds a larger one.
	ReplyBodyBytesMax = 64 * 1024 * 1024
	// MessagePayloadBytesMax is the 0.8 cap on one message payload (status 4022).
	MessagePayloadBytesMax = 64_000_000
	// UserHeadersBytesMax is the 0.8 cap on one message's user headers (status 4017).
	UserHeadersBytesMax = 100_000
	// NameBytesMax bounds every name8 field (names, tokens, identifiers).
	NameBytesMax = 255
	// MessagesCountMax is the most messages one SendMessages body can hold: each
	// costs at least an index entry and a header.
	MessagesCountMax = SendMessagesBodyBytesMax / (IndexEntryBytes + MessageHeaderBytes)
	// PermissionStreamsMax and PermissionTopicsMax bound the permission lists of
	// one user; the linked-list encoding has no count, so decode stops here.
	PermissionStreamsMax = 100_000
	PermissionTopicsMax  = 100_000
	// SnapshotTypesMax is the largest types_count a GetSnapshot body can carry.
	SnapshotTypesMax = 255
)

// Detection of the framing on a fresh connection.
const (
	// DetectPrologueBytes is what every real client sends before it reads.
	DetectPrologueBytes = 8
	// VSRHeaderBytes is the 0.9 request header the detector validates when
	// the prologue is neither classic nor VSR-shaped.
	VSRHeaderBytes = 256
	// VSRFrameBytesMax is the 0.9 frame cap (header included).
	VSRFrameBytesMax = 64 * 1024 * 1024
	// DetectCandidateDeadline is how long the caller waits for a full VSR
	// header once Detect says NeedMore with Deadline set. A real VSR client
	// writes its 256-byte header at once, so a few seconds is generous; the
	// timer belongs to the caller, Detect itself is pure.
	DetectCandidateDeadline = 3 * time.Second
)

// Ranges the 0.8 server checks after decoding, each with its own status
// (PROTOCOL-0.8.md §2.2, §6.2); CheckCredentials and CheckTokenName apply them.
const (
	UsernameBytesMin  = 3
	UsernameBytesMax  = 50
	PasswordBytesMin  = 3
	PasswordBytesMax  = 100
	TokenNameBytesMin = 3
	TokenNameBytesMax = 30
	// PartitionsPerRequestMax caps CreateTopic/CreatePartitions (status 2015).
	PartitionsPerRequestMax = 1000
)
