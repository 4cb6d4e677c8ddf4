package wire

import (
	"encoding/binary"

	"github.com/whippetio/whippet/internal/invariant"
)

// Field offsets of the 256-byte header (§2.2, §2.3, §2.4).
const (
	offsetChecksum        = 0
	offsetChecksumBody    = 16
	offsetCluster         = 32
	offsetSize            = 48
	offsetView            = 52
	offsetRelease         = 56
	offsetCommand         = 60
	offsetReplica         = 61
	offsetFrameReserved   = 62
	offsetClient          = 128
	offsetRequestChecksum = 144
	offsetTimestamp       = 160
	offsetRequest         = 168
	offsetOperation       = 176
	offsetPadding         = 177
	offsetSession         = 184
	offsetUserID          = 192
	offsetCode            = 196
	offsetReserved        = 200

	offsetReplyRequestChecksum = 128
	offsetReplyContext         = 144
	offsetReplyClient          = 160
	offsetReplyOp              = 176
	offsetReplyCommit          = 184
	offsetReplyTimestamp       = 192
	offsetReplyRequest         = 200
	offsetReplyOperation       = 208
	offsetReplyPadding         = 209
	offsetReplyStatus          = 216
	offsetReplyReserved        = 220

	offsetEvictionClient     = 128
	offsetEvictionVersionMax = 144
	offsetEvictionVersionMin = 148
	offsetEvictionReserved   = 152
	offsetEvictionReason     = 255
)

// FrameSize reads the declared size of the frame whose header starts src.
// It returns 0 and no error while fewer than HeaderBytes are buffered, and
// an error for a size outside [HeaderBytes, FrameBytesMax]: the reader must
// then close the connection (§2.1).
func FrameSize(src []byte) (int, error) {
	if len(src) < HeaderBytes {
		return 0, nil
	}
	size := binary.LittleEndian.Uint32(src[offsetSize:])
	if size < HeaderBytes || size > FrameBytesMax {
		return 0, decodeFailure(offsetSize, "frame size outside 256..64 MiB")
	}
	return int(size), nil
}

// RequestHeader is the header of a client request (§2.2). The command byte
// is implied (CommandRequest). Reserved areas are not represented: a
// request with a non-zero reserved byte does not decode.
type RequestHeader struct {
	Checksum        Uint128
	ChecksumBody    Uint128
	Cluster         Uint128
	Size            uint32
	View            uint32
	Release         uint32
	Replica         uint8
	Client          Uint128
	RequestChecksum Uint128
	Timestamp       uint64
	Request         uint64
	Operation       Operation
	Session         uint64
	UserID          uint32
	Code            Code
}

// Decode reads a request header from the first HeaderBytes of src.
func (h *RequestHeader) Decode(src []byte) (int, error) {
	if len(src) < HeaderBytes {
		return 0, &DecodeError{Offset: 0, Need: HeaderBytes, Have: len(src), What: "request header"}
	}
	if Command(src[offsetCommand]) != CommandRequest {
		return 0, decodeFailure(offsetCommand, "frame command is not Request")
	}
	if offset := firstNonZero(src, offsetFrameReserved, offsetClient); offset >= 0 {
		return 0, decodeFailure(offset, "reserved header byte not zero")
	}
	if offset := firstNonZero(src, offsetPadding, offsetSession); offset >= 0 {
		return 0, decodeFailure(offset, "header padding not zero")
	}
	if offset := firstNonZero(src, offsetReserved, HeaderBytes); offset >= 0 {
		return 0, decodeFailure(offset, "reserved header byte not zero")
	}
	if _, err := FrameSize(src); err != nil {
		return 0, err
	}
	*h = RequestHeader{
		Checksum:        readUint128(src[offsetChecksum:]),
		ChecksumBody:    readUint128(src[offsetChecksumBody:]),
		Cluster:         readUint128(src[offsetCluster:]),
		Size:            binary.LittleEndian.Uint32(src[offsetSize:]),
		View:            binary.LittleEndian.Uint32(src[offsetView:]),
		Release:         binary.LittleEndian.Uint32(src[offsetRelease:]),
		Replica:         src[offsetReplica],
		Client:          readUint128(src[offsetClient:]),
		RequestChecksum: readUint128(src[offsetRequestChecksum:]),
		Timestamp:       binary.LittleEndian.Uint64(src[offsetTimestamp:]),
		Request:         binary.LittleEndian.Uint64(src[offsetRequest:]),
		Operation:       Operation(src[offsetOperation]),
		Session:         binary.LittleEndian.Uint64(src[offsetSession:]),
		UserID:          binary.LittleEndian.Uint32(src[offsetUserID:]),
		Code:            Code(binary.LittleEndian.Uint32(src[offsetCode:])),
	}
	return HeaderBytes, nil
}

// Encode writes the header into dst[:HeaderBytes].
func (h *RequestHeader) Encode(dst []byte) int {
	invariant.Assert(len(dst) >= HeaderBytes, "wire: request header buffer shorter than 256")
	invariant.Assert(h.Size >= HeaderBytes, "wire: request size below the header size")
	clear(dst[:HeaderBytes])
	writeUint128(dst[offsetChecksum:], h.Checksum)
	writeUint128(dst[offsetChecksumBody:], h.ChecksumBody)
	writeUint128(dst[offsetCluster:], h.Cluster)
	binary.LittleEndian.PutUint32(dst[offsetSize:], h.Size)
	binary.LittleEndian.PutUint32(dst[offsetView:], h.View)
	binary.LittleEndian.PutUint32(dst[offsetRelease:], h.Release)
	dst[offsetCommand] = byte(CommandRequest)
	dst[offsetReplica] = h.Replica
	writeUint128(dst[offsetClient:], h.Client)
	writeUint128(dst[offsetRequestChecksum:], h.RequestChecksum)
	binary.LittleEndian.PutUint64(dst[offsetTimestamp:], h.Timestamp)
	binary.LittleEndian.PutUint64(dst[offsetRequest:], h.Request)
	dst[offsetOperation] = byte(h.Operation)
	binary.LittleEndian.PutUint64(dst[offsetSession:], h.Session)
	binary.LittleEndian.PutUint32(dst[offsetUserID:], h.UserID)
	binary.LittleEndian.PutUint32(dst[offsetCode:], uint32(h.Code))
	return HeaderBytes
}

// EncodedSize returns HeaderBytes.
func (h *RequestHeader) EncodedSize() int { return HeaderBytes }

// Invalid returns why a server must drop this request without a reply
// (§2.2 header validation), or "" when the header is acceptable. Session
// checks are left to the server: before login it answers writes with an
// Eviction and reads with status 40 (§15 #1), it does not drop them.
func (h *RequestHeader) Invalid() string {
	switch {
	case h.Client.IsZero():
		return "client id is zero"
	case !h.Operation.Declared():
		return "operation not declared"
	case h.Operation == OperationRegister && h.Session != 0:
		return "register with a non-zero session"
	case h.Operation == OperationRegister && h.Request != 0:
		return "register with a non-zero request id"
	case h.Operation != OperationRegister && h.Operation != OperationNonReplicated && h.Request == 0:
		return "write with request id zero"
	}
	return ""
}

// CommandCode returns the command this request carries (see CodeOf).
func (h *RequestHeader) CommandCode() Code { return CodeOf(h.Operation, h.Code) }

// ReplyHeader is the header of a server reply (§2.3). The command byte is
// implied (CommandReply).
type ReplyHeader struct {
	Checksum        Uint128
	ChecksumBody    Uint128
	Cluster         Uint128
	Size            uint32
	View            uint32
	Release         uint32
	Replica         uint8
	RequestChecksum Uint128
	Context         Uint128
	Client          Uint128
	Op              uint64
	Commit          uint64
	Timestamp       uint64
	Request         uint64
	Operation       Operation
	Status          Status
}

// ReplyTo returns a reply header answering request: it echoes the fields
// the reference echoes (§2.3) and sets the reply operation. Size, Op,
// Commit and Status are the caller's.
func ReplyTo(request *RequestHeader, operation Operation) ReplyHeader {
	return ReplyHeader{
		Cluster:         request.Cluster,
		View:            request.View,
		Release:         request.Release,
		Replica:         request.Replica,
		RequestChecksum: request.RequestChecksum,
		Client:          request.Client,
		Timestamp:       request.Timestamp,
		Request:         request.Request,
		Operation:       operation,
	}
}

// Decode reads a reply header. It checks the command byte and the size
// bounds but ignores reserved areas: a client is lenient with its server.
func (h *ReplyHeader) Decode(src []byte) (int, error) {
	if len(src) < HeaderBytes {
		return 0, &DecodeError{Offset: 0, Need: HeaderBytes, Have: len(src), What: "reply header"}
	}
	if Command(src[offsetCommand]) != CommandReply {
		return 0, decodeFailure(offsetCommand, "frame command is not Reply")
	}
	if _, err := FrameSize(src); err != nil {
		return 0, err
	}
	*h = ReplyHeader{
		Checksum:        readUint128(src[offsetChecksum:]),
		ChecksumBody:    readUint128(src[offsetChecksumBody:]),
		Cluster:         readUint128(src[offsetCluster:]),
		Size:            binary.LittleEndian.Uint32(src[offsetSize:]),
		View:            binary.LittleEndian.Uint32(src[offsetView:]),
		Release:         binary.LittleEndian.Uint32(src[offsetRelease:]),
		Replica:         src[offsetReplica],
		RequestChecksum: readUint128(src[offsetReplyRequestChecksum:]),
		Context:         readUint128(src[offsetReplyContext:]),
		Client:          readUint128(src[offsetReplyClient:]),
		Op:              binary.LittleEndian.Uint64(src[offsetReplyOp:]),
		Commit:          binary.LittleEndian.Uint64(src[offsetReplyCommit:]),
		Timestamp:       binary.LittleEndian.Uint64(src[offsetReplyTimestamp:]),
		Request:         binary.LittleEndian.Uint64(src[offsetReplyRequest:]),
		Operation:       Operation(src[offsetReplyOperation]),
		Status:          Status(binary.LittleEndian.Uint32(src[offsetReplyStatus:])),
	}
	return HeaderBytes, nil
}

// Encode writes the header into dst[:HeaderBytes].
func (h *ReplyHeader) Encode(dst []byte) int {
	invariant.Assert(len(dst) >= HeaderBytes, "wire: reply header buffer shorter than 256")
	invariant.Assert(h.Size >= HeaderBytes, "wire: reply size below the header size")
	clear(dst[:HeaderBytes])
	writeUint128(dst[offsetChecksum:], h.Checksum)
	writeUint128(dst[offsetChecksumBody:], h.ChecksumBody)
	writeUint128(dst[offsetCluster:], h.Cluster)
	binary.LittleEndian.PutUint32(dst[offsetSize:], h.Size)
	binary.LittleEndian.PutUint32(dst[offsetView:], h.View)
	binary.LittleEndian.PutUint32(dst[offsetRelease:], h.Release)
	dst[offsetCommand] = byte(CommandReply)
	dst[offsetReplica] = h.Replica
	writeUint128(dst[offsetReplyRequestChecksum:], h.RequestChecksum)
	writeUint128(dst[offsetReplyContext:], h.Context)
	writeUint128(dst[offsetReplyClient:], h.Client)
	binary.LittleEndian.PutUint64(dst[offsetReplyOp:], h.Op)
	binary.LittleEndian.PutUint64(dst[offsetReplyCommit:], h.Commit)
	binary.LittleEndian.PutUint64(dst[offsetReplyTimestamp:], h.Timestamp)
	binary.LittleEndian.PutUint64(dst[offsetReplyRequest:], h.Request)
	dst[offsetReplyOperation] = byte(h.Operation)
	binary.LittleEndian.PutUint32(dst[offsetReplyStatus:], uint32(h.Status))
	return HeaderBytes
}

// EncodedSize returns HeaderBytes.
func (h *ReplyHeader) EncodedSize() int { return HeaderBytes }

// EvictionHeader is a header-only frame that ends a session (§2.4).
type EvictionHeader struct {
	Cluster    Uint128
	View       uint32
	Replica    uint8
	Client     Uint128
	VersionMax uint32
	VersionMin uint32
	Reason     EvictionReason
}

// Decode reads an eviction frame (its size must be HeaderBytes).
func (h *EvictionHeader) Decode(src []byte) (int, error) {
	if len(src) < HeaderBytes {
		return 0, &DecodeError{Offset: 0, Need: HeaderBytes, Have: len(src), What: "eviction header"}
	}
	if Command(src[offsetCommand]) != CommandEviction {
		return 0, decodeFailure(offsetCommand, "frame command is not Eviction")
	}
	if binary.LittleEndian.Uint32(src[offsetSize:]) != HeaderBytes {
		return 0, decodeFailure(offsetSize, "eviction frame with a body")
	}
	*h = EvictionHeader{
		Cluster:    readUint128(src[offsetCluster:]),
		View:       binary.LittleEndian.Uint32(src[offsetView:]),
		Replica:    src[offsetReplica],
		Client:     readUint128(src[offsetEvictionClient:]),
		VersionMax: binary.LittleEndian.Uint32(src[offsetEvictionVersionMax:]),
		VersionMin: binary.LittleEndian.Uint32(src[offsetEvictionVersionMin:]),
		Reason:     EvictionReason(src[offsetEvictionReason]),
	}
	return HeaderBytes, nil
}

// Encode writes the eviction frame into dst[:HeaderBytes].
func (h *EvictionHeader) Encode(dst []byte) int {
	invariant.Assert(len(dst) >= HeaderBytes, "wire: eviction buffer shorter than 256")
	invariant.Assert(h.Reason != 0, "wire: eviction without a reason")
	clear(dst[:HeaderBytes])
	writeUint128(dst[offsetCluster:], h.Cluster)
	binary.LittleEndian.PutUint32(dst[offsetSize:], HeaderBytes)
	binary.LittleEndian.PutUint32(dst[offsetView:], h.View)
	dst[offsetCommand] = byte(CommandEviction)
	dst[offsetReplica] = h.Replica
	writeUint128(dst[offsetEvictionClient:], h.Client)
	binary.LittleEndian.PutUint32(dst[offsetEvictionVersionMax:], h.VersionMax)
	binary.LittleEndian.PutUint32(dst[offsetEvictionVersionMin:], h.VersionMin)
	dst[offsetEvictionReason] = byte(h.Reason)
	return HeaderBytes
}

// EncodedSize returns HeaderBytes.
func (h *EvictionHeader) EncodedSize() int { return HeaderBytes }

// Status returns the error code an SDK surfaces for this eviction.
func (h *EvictionHeader) Status() Status { return h.Reason.Status(h.VersionMax, h.VersionMin) }

func readUint128(src []byte) Uint128 {
	return Uint128{Lo: binary.LittleEndian.Uint64(src), Hi: binary.LittleEndian.Uint64(src[8:])}
}

func writeUint128(dst []byte, value Uint128) {
	binary.LittleEndian.PutUint64(dst, value.Lo)
	binary.LittleEndian.PutUint64(dst[8:], value.Hi)
}

func firstNonZero(src []byte, from, to int) int {
	for i := from; i < to; i++ {
		if src[i] != 0 {
			return i
		}
	}
	return -1
}
