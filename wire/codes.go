package wire

import (
	"sort"
	"strconv"
)

// Status is a protocol status code (§10): the reply header's status word, a
// result-section entry, or the code an SDK's typed error carries. A non-zero
// Status is an error value, so callers can test with errors.Is.
type Status uint32

type statusEntry struct {
	code    Status
	name    string
	message string
}

func lookupStatus(code Status) (statusEntry, bool) {
	index := sort.Search(len(statusTable), func(i int) bool { return statusTable[i].code >= code })
	if index < len(statusTable) && statusTable[index].code == code {
		return statusTable[index], true
	}
	return statusEntry{}, false
}

// String returns the Iggy name of the status ("StreamIdNotFound").
func (s Status) String() string {
	if s == StatusOK {
		return "OK"
	}
	if entry, ok := lookupStatus(s); ok {
		return entry.name
	}
	return "Status(" + strconv.FormatUint(uint64(s), 10) + ")"
}

// Message returns the Iggy message format of the status ("stream with ID:
// %s was not found" keeps its verbs: the arguments never travel on the wire).
func (s Status) Message() string {
	if entry, ok := lookupStatus(s); ok {
		return entry.message
	}
	return "unknown status " + strconv.FormatUint(uint64(s), 10)
}

// Known reports whether the status is one of the codes of §10.
func (s Status) Known() bool {
	_, ok := lookupStatus(s)
	return ok || s == StatusOK
}

func (s Status) Error() string {
	return "wire: status " + strconv.FormatUint(uint64(s), 10) + " " + s.String()
}

// Status lets a Status satisfy ErrStatus.
func (s Status) Status() Status { return s }

// Command is the frame command byte @60 (§2.6).
type Command uint8

// Frame commands. A client connection carries CommandRequest inbound and
// CommandReply or CommandEviction outbound; the rest are replica-internal.
const (
	CommandReserved        Command = 0
	CommandPing            Command = 1
	CommandPong            Command = 2
	CommandPingClient      Command = 3
	CommandPongClient      Command = 4
	CommandRequest         Command = 5
	CommandPrepare         Command = 6
	CommandPrepareOK       Command = 7
	CommandReply           Command = 8
	CommandCommit          Command = 9
	CommandStartViewChange Command = 10
	CommandDoViewChange    Command = 11
	CommandStartView       Command = 12
	CommandEviction        Command = 13
	commandLast            Command = 29
)

// Valid reports whether the byte names a declared frame command.
func (c Command) Valid() bool { return c <= commandLast }

// Operation is the one-byte operation of a request (@176) or reply (@208)
// (§3.1).
type Operation uint8

// Operations. 64..68 are replica-internal and appear only in replies.
const (
	OperationReserved                        Operation = 0
	OperationRegister                        Operation = 1
	OperationNonReplicated                   Operation = 2
	OperationLogout                          Operation = 3
	OperationCreateTopicWithAssignments      Operation = 64
	OperationCreatePartitionsWithAssignments Operation = 65
	OperationRemoveConsumerGroupMember       Operation = 66
	OperationCompleteConsumerGroupRevocation Operation = 67
	OperationTruncatePartition               Operation = 68
	OperationCreateStream                    Operation = 128
	OperationUpdateStream                    Operation = 129
	OperationDeleteStream                    Operation = 130
	OperationPurgeStream                     Operation = 131
	OperationCreateTopic                     Operation = 132
	OperationUpdateTopic                     Operation = 133
	OperationDeleteTopic                     Operation = 134
	OperationPurgeTopic                      Operation = 135
	OperationCreatePartitions                Operation = 136
	OperationDeletePartitions                Operation = 137
	OperationDeleteSegments                  Operation = 138
	OperationCreateConsumerGroup             Operation = 139
	OperationDeleteConsumerGroup             Operation = 140
	OperationCreateUser                      Operation = 141
	OperationUpdateUser                      Operation = 142
	OperationDeleteUser                      Operation = 143
	OperationChangePassword                  Operation = 144
	OperationUpdatePermissions               Operation = 145
	OperationCreatePersonalAccessToken       Operation = 146
	OperationDeletePersonalAccessToken       Operation = 147
	OperationJoinConsumerGroup               Operation = 148
	OperationLeaveConsumerGroup              Operation = 149
	OperationSendMessages                    Operation = 160
	OperationStoreConsumerOffset             Operation = 161
	OperationDeleteConsumerOffset            Operation = 162
)

// Declared reports whether the operation is one of §3.1 (0 excluded).
func (o Operation) Declared() bool {
	switch {
	case o >= OperationRegister && o <= OperationLogout:
		return true
	case o >= OperationCreateTopicWithAssignments && o <= OperationTruncatePartition:
		return true
	case o >= OperationCreateStream && o <= OperationLeaveConsumerGroup:
		return true
	case o >= OperationSendMessages && o <= OperationDeleteConsumerOffset:
		return true
	}
	return false
}

// Internal reports whether the operation is replica-internal (64..68): a
// client may see it in a reply but must never send it.
func (o Operation) Internal() bool {
	return o >= OperationCreateTopicWithAssignments && o <= OperationTruncatePartition
}

// Replicated reports whether a request with this operation is a write that
// goes through consensus (metadata writes, DeleteSegments, partition ops).
func (o Operation) Replicated() bool {
	return o.Declared() && o >= OperationCreateStream
}

// Metadata reports whether the operation is a metadata write (128..149),
// the ones that advance the request counter (§5.4).
func (o Operation) Metadata() bool {
	return o >= OperationCreateStream && o <= OperationLeaveConsumerGroup
}

// ResultFramed reports whether a reply with this operation starts its body
// with a result section (§3.1, §4.2). Register is result-framed only when
// its body is non-empty; callers pass the body length through BodyFramed.
func (o Operation) ResultFramed() bool {
	switch {
	case o == OperationRegister:
		return true
	case o.Internal():
		return true
	case o == OperationDeleteSegments:
		return false
	case o.Metadata():
		return true
	case o == OperationStoreConsumerOffset || o == OperationDeleteConsumerOffset:
		return true
	}
	return false
}

// BodyFramed reports whether a reply body of bodyBytes under this operation
// carries a result section: Register's empty body is not framed (§4.2).
func (o Operation) BodyFramed(bodyBytes int) bool {
	if o == OperationRegister && bodyBytes == 0 {
		return false
	}
	return o.ResultFramed()
}

// EvictionReason is byte 255 of an Eviction frame (§2.4).
type EvictionReason uint8

// Eviction reasons.
const (
	EvictionNoSession               EvictionReason = 1
	EvictionClientReleaseTooLow     EvictionReason = 2
	EvictionClientReleaseTooHigh    EvictionReason = 3
	EvictionInvalidRequestOperation EvictionReason = 4
	EvictionInvalidRequestBody      EvictionReason = 5
	EvictionInvalidRequestBodySize  EvictionReason = 6
	EvictionSessionTooLow           EvictionReason = 7
	EvictionSessionReleaseMismatch  EvictionReason = 8
	EvictionInvalidCredentials      EvictionReason = 9
	EvictionInvalidToken            EvictionReason = 10
	EvictionUserInactive            EvictionReason = 11
	EvictionSessionError            EvictionReason = 12
	EvictionStaleClient             EvictionReason = 13
	EvictionIncompatibleProtocol    EvictionReason = 14
	EvictionMalformedLogin          EvictionReason = 15
)

// Status maps an eviction to the error code the SDKs surface (§2.4). The
// protocol window matters only for EvictionIncompatibleProtocol, which
// degrades to Unauthenticated when the window is empty.
func (r EvictionReason) Status(versionMax, versionMin uint32) Status {
	switch r {
	case EvictionClientReleaseTooLow, EvictionClientReleaseTooHigh,
		EvictionInvalidRequestOperation, EvictionInvalidRequestBody, EvictionInvalidRequestBodySize:
		return StatusInvalidCommand
	case EvictionInvalidCredentials:
		return StatusInvalidCredentials
	case EvictionInvalidToken:
		return StatusInvalidPersonalAccessToken
	case EvictionStaleClient:
		return StatusStaleClient
	case EvictionIncompatibleProtocol:
		if versionMin == 0 || versionMax < versionMin {
			return StatusUnauthenticated
		}
		return StatusIncompatibleProtocolVersion
	case EvictionMalformedLogin:
		return StatusInvalidFormat
	}
	return StatusUnauthenticated
}
