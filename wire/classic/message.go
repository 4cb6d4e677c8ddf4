package classic

import (
	"encoding/binary"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/zeebo/xxh3"
)

// MessageID is the 16-byte message id (a u128, little-endian). Zero asks the
// server to draw a random UUIDv4.
type MessageID [16]byte

// IsZero reports whether the producer left the id for the server to assign.
func (id MessageID) IsZero() bool { return id == MessageID{} }

// UUIDv4 turns 16 random bytes into a version-4, variant-1 UUID id.
func UUIDv4(random [16]byte) MessageID {
	random[6] = random[6]&0x0f | 0x40
	random[8] = random[8]&0x3f | 0x80
	return MessageID(random)
}

// Offsets of the 64-byte message header fields.
const (
	headerChecksumAt          = 0
	headerIDAt                = 8
	headerOffsetAt            = 24
	headerTimestampAt         = 32
	headerOriginTimestampAt   = 40
	headerUserHeadersLengthAt = 48
	headerPayloadLengthAt     = 52
	headerReservedAt          = 56
)

// MessageHeader is the 64-byte header in front of every classic message.
type MessageHeader struct {
	Checksum          uint64
	ID                MessageID
	Offset            uint64
	Timestamp         uint64
	OriginTimestamp   uint64
	UserHeadersLength uint32
	PayloadLength     uint32
	Reserved          uint64
}

// ReadMessageHeader reads the header at the start of raw, which must hold at
// least MessageHeaderBytes (callers check lengths at the gateway).
func ReadMessageHeader(raw []byte) MessageHeader {
	invariant.Assert(len(raw) >= MessageHeaderBytes, "message header is whole")
	var h MessageHeader
	h.Checksum = binary.LittleEndian.Uint64(raw[headerChecksumAt:])
	copy(h.ID[:], raw[headerIDAt:headerOffsetAt])
	h.Offset = binary.LittleEndian.Uint64(raw[headerOffsetAt:])
	h.Timestamp = binary.LittleEndian.Uint64(raw[headerTimestampAt:])
	h.OriginTimestamp = binary.LittleEndian.Uint64(raw[headerOriginTimestampAt:])
	h.UserHeadersLength = binary.LittleEndian.Uint32(raw[headerUserHeadersLengthAt:])
	h.PayloadLength = binary.LittleEndian.Uint32(raw[headerPayloadLengthAt:])
	h.Reserved = binary.LittleEndian.Uint64(raw[headerReservedAt:])
	return h
}

// AppendMessageHeader writes the 64 header bytes as given (checksum included).
func AppendMessageHeader(dst []byte, h *MessageHeader) []byte {
	dst = appendU64(dst, h.Checksum)
	dst = append(dst, h.ID[:]...)
	dst = appendU64(dst, h.Offset)
	dst = appendU64(dst, h.Timestamp)
	dst = appendU64(dst, h.OriginTimestamp)
	dst = appendU32(dst, h.UserHeadersLength)
	dst = appendU32(dst, h.PayloadLength)
	return appendU64(dst, h.Reserved)
}

// MessageBytes is the size of a message with this header.
func (h *MessageHeader) MessageBytes() int {
	return MessageHeaderBytes + int(h.PayloadLength) + int(h.UserHeadersLength)
}

// Message is a view of one classic message: its header and views of its
// payload and user headers inside the frame. Raw is the whole message.
type Message struct {
	Header      MessageHeader
	Payload     []byte
	UserHeaders []byte
	Raw         []byte
}

// viewMessage splits a message whose span was validated at the gateway.
func viewMessage(raw []byte) Message {
	header := ReadMessageHeader(raw)
	invariant.Assert(header.MessageBytes() == len(raw), "message span matches its header")
	payloadEnd := MessageHeaderBytes + int(header.PayloadLength)
	return Message{
		Header:      header,
		Payload:     raw[MessageHeaderBytes:payloadEnd:payloadEnd],
		UserHeaders: raw[payloadEnd:len(raw):len(raw)],
		Raw:         raw,
	}
}

// Checksum is XXH3-64 (seed 0) over message bytes 8..end: the rest of the
// header, the payload and the user headers.
func Checksum(raw []byte) uint64 {
	invariant.Assert(len(raw) >= MessageHeaderBytes, "checksummed message has a header")
	return xxh3.Hash(raw[ChecksumBytes:])
}

// Seal writes the checksum of raw into its first eight bytes.
func Seal(raw []byte) {
	binary.LittleEndian.PutUint64(raw[headerChecksumAt:], Checksum(raw))
}

// ChecksumValid reports whether the stored checksum matches the bytes.
func ChecksumValid(raw []byte) bool {
	return binary.LittleEndian.Uint64(raw[headerChecksumAt:]) == Checksum(raw)
}

// Stamp overwrites what the server owns in a received message, in place:
// the id when the producer left it zero (replaced by idIfZero, which must be
// non-zero), the offset, the append timestamp and the checksum. The client's
// checksum, offset and timestamp are ignored, as in 0.8.
func Stamp(raw []byte, offset, timestamp uint64, idIfZero MessageID) {
	invariant.Assert(len(raw) >= MessageHeaderBytes, "stamped message has a header")
	invariant.Assert(!idIfZero.IsZero(), "replacement id is non-zero")
	id := MessageID(raw[headerIDAt:headerOffsetAt])
	if id.IsZero() {
		copy(raw[headerIDAt:headerOffsetAt], idIfZero[:])
	}
	binary.LittleEndian.PutUint64(raw[headerOffsetAt:], offset)
	binary.LittleEndian.PutUint64(raw[headerTimestampAt:], timestamp)
	Seal(raw)
}

// checkMessageSpan validates one message of span bytes at offset in a body:
// the header must fit, its lengths must add up to the span and stay under
// the 0.8 caps. It returns nil or the error to report.
func checkMessageSpan(raw []byte, offset int) *DecodeError {
	if len(raw) < MessageHeaderBytes {
		return &DecodeError{What: "message size", Offset: offset, Value: uint64(len(raw)), Status: StatusTooSmallMessage}
	}
	payloadBytes := binary.LittleEndian.Uint32(raw[headerPayloadLengthAt:])
	headersBytes := binary.LittleEndian.Uint32(raw[headerUserHeadersLengthAt:])
	if payloadBytes > MessagePayloadBytesMax {
		return &DecodeError{What: "message payload_length", Offset: offset + headerPayloadLengthAt,
			Value: uint64(payloadBytes), Status: StatusTooBigMessagePayload}
	}
	if headersBytes > UserHeadersBytesMax {
		return &DecodeError{What: "message user_headers_length", Offset: offset + headerUserHeadersLengthAt,
			Value: uint64(headersBytes), Status: StatusTooBigUserHeaders}
	}
	if MessageHeaderBytes+uint64(payloadBytes)+uint64(headersBytes) != uint64(len(raw)) {
		return &DecodeError{What: "message size", Offset: offset, Value: uint64(len(raw)),
			Status: StatusInvalidMessagesSize}
	}
	return nil
}
