package vsr

import (
	"encoding/binary"
	"errors"
)

// Command names a message type (header byte 32).
type Command uint8

// The commands. Numbers are part of the wire format: never renumber.
const (
	CommandReserved         Command = 0
	CommandRequest          Command = 1  // client → replica
	CommandReply            Command = 2  // replica → client
	CommandPrepare          Command = 3  // primary → chain, and repair answers
	CommandPrepareOK        Command = 4  // backup → primary
	CommandCommit           Command = 5  // primary → all: commit point, heartbeat
	CommandStartViewChange  Command = 6  // all ↔ all
	CommandDoViewChange     Command = 7  // replica → new primary
	CommandStartView        Command = 8  // new primary → all
	CommandRequestStartView Command = 9  // lagging replica → primary
	CommandRecovery         Command = 10 // recovering replica → all
	CommandRecoveryResponse Command = 11 // normal replica → recovering replica
	CommandRequestPrepares  Command = 12 // repairing replica → peer
	CommandPreparesEvicted  Command = 13 // peer → repairing replica: range overwritten
	CommandRequestState     Command = 14 // lagging replica → peer
	CommandState            Command = 15 // peer → lagging replica: snapshot
	commandCount                    = 16
)

var commandNames = [commandCount]string{
	"reserved", "request", "reply", "prepare", "prepare_ok", "commit",
	"start_view_change", "do_view_change", "start_view", "request_start_view",
	"recovery", "recovery_response", "request_prepares", "prepares_evicted",
	"request_state", "state",
}

func (c Command) String() string {
	if int(c) < len(commandNames) {
		return commandNames[c]
	}
	return "unknown"
}

// Header is the decoded fixed header of every message; doc.go draws its
// layout. Fields a command does not use are zero on the wire.
type Header struct {
	Checksum     uint32 // CRC-32C of header bytes [4, 128); a Prepare's identity
	ChecksumBody uint32 // CRC-32C of the body
	Cluster      uint64
	Group        uint64
	Size         uint32 // header plus body bytes
	View         uint32
	Command      Command
	Replica      uint8 // sender; for a Prepare, the primary that made it
	Operation    uint8 // application operation of a Request or Prepare
	Parent       uint32
	Op           uint64
	Commit       uint64
	Client       uint64
	Request      uint64
	Context      uint32
	LogView      uint32
	Nonce        uint64
}

// Errors returned by Step for messages that fail validation. The caller
// drops such a message; it never changes replica state.
var (
	ErrShort        = errors.New("vsr: message shorter than its header")
	ErrSize         = errors.New("vsr: header size disagrees with message length")
	ErrTooLarge     = errors.New("vsr: message larger than messageBytesMax")
	ErrChecksum     = errors.New("vsr: header checksum mismatch")
	ErrChecksumBody = errors.New("vsr: body checksum mismatch")
	ErrCommand      = errors.New("vsr: unknown command")
	ErrCluster      = errors.New("vsr: message from another cluster")
	ErrGroup        = errors.New("vsr: message for another group")
	ErrReplica      = errors.New("vsr: sender replica out of range")
	ErrReserved     = errors.New("vsr: reserved header bytes are not zero")
)

func putHeader(dst []byte, h *Header) {
	_ = dst[headerBytes-1]
	le := binary.LittleEndian
	le.PutUint32(dst[4:], h.ChecksumBody)
	le.PutUint64(dst[8:], h.Cluster)
	le.PutUint64(dst[16:], h.Group)
	le.PutUint32(dst[24:], h.Size)
	le.PutUint32(dst[28:], h.View)
	dst[32] = byte(h.Command)
	dst[33] = h.Replica
	dst[34] = h.Operation
	dst[35] = 0
	le.PutUint32(dst[36:], h.Parent)
	le.PutUint64(dst[40:], h.Op)
	le.PutUint64(dst[48:], h.Commit)
	le.PutUint64(dst[56:], h.Client)
	le.PutUint64(dst[64:], h.Request)
	le.PutUint32(dst[72:], h.Context)
	le.PutUint32(dst[76:], h.LogView)
	le.PutUint64(dst[80:], h.Nonce)
	clear(dst[88:headerBytes])
	h.Checksum = checksum(dst[4:headerBytes])
	le.PutUint32(dst[0:], h.Checksum)
}

func readHeader(src []byte, h *Header) {
	_ = src[headerBytes-1]
	le := binary.LittleEndian
	h.Checksum = le.Uint32(src[0:])
	h.ChecksumBody = le.Uint32(src[4:])
	h.Cluster = le.Uint64(src[8:])
	h.Group = le.Uint64(src[16:])
	h.Size = le.Uint32(src[24:])
	h.View = le.Uint32(src[28:])
	h.Command = Command(src[32])
	h.Replica = src[33]
	h.Operation = src[34]
	h.Parent = le.Uint32(src[36:])
	h.Op = le.Uint64(src[40:])
	h.Commit = le.Uint64(src[48:])
	h.Client = le.Uint64(src[56:])
	h.Request = le.Uint64(src[64:])
	h.Context = le.Uint32(src[72:])
	h.LogView = le.Uint32(src[76:])
	h.Nonce = le.Uint64(src[80:])
}

// encodeMessage writes header and body into dst (which must have room for
// both), sealing both checksums, and returns the message.
func encodeMessage(dst []byte, h *Header, body []byte) []byte {
	size := headerBytes + len(body)
	dst = dst[:size]
	copy(dst[headerBytes:], body)
	h.Size = uint32(size)
	h.ChecksumBody = checksum(dst[headerBytes:])
	putHeader(dst, h)
	return dst
}

// DecodeMessage validates message and reads its header into h. It checks
// framing and both checksums, not protocol state. It does not allocate.
func DecodeMessage(message []byte, h *Header) error {
	if len(message) < headerBytes {
		return ErrShort
	}
	if len(message) > messageBytesMax {
		return ErrTooLarge
	}
	readHeader(message, h)
	if int(h.Size) != len(message) {
		return ErrSize
	}
	if checksum(message[4:headerBytes]) != h.Checksum {
		return ErrChecksum
	}
	if message[35] != 0 {
		return ErrReserved
	}
	for _, b := range message[88:headerBytes] {
		if b != 0 {
			return ErrReserved
		}
	}
	if checksum(message[headerBytes:]) != h.ChecksumBody {
		return ErrChecksumBody
	}
	if h.Command == CommandReserved || h.Command >= commandCount {
		return ErrCommand
	}
	return nil
}

// EncodeRequest builds a client Request into dst (grown if too small) and
// returns it. Clients and tests use it; client must be nonzero and request
// numbers start at 1 and grow by one per new request. body may be
// dst[HeaderBytes:HeaderBytes+n] itself: a request built in place is sealed
// without a copy.
func EncodeRequest(dst []byte, cluster, group, client, request uint64, operation uint8, body []byte) []byte {
	size := headerBytes + len(body)
	if cap(dst) < size {
		dst = make([]byte, size)
	}
	h := Header{Cluster: cluster, Group: group, Command: CommandRequest,
		Client: client, Request: request, Operation: operation}
	return encodeMessage(dst[:size], &h, body)
}
