package wire

import (
	"encoding/binary"
	"math"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/zeebo/xxh3"
)

// OutgoingMessage is a message a producer sends. UserHeaders is an encoded
// TLV block (see Headers.Encode) or nil.
type OutgoingMessage struct {
	ID              Uint128
	OriginTimestamp uint64 // µs since the epoch
	Payload         []byte
	UserHeaders     []byte
}

// BatchBytes returns the size of the batch record carrying messages.
func BatchBytes(messages []OutgoingMessage) int {
	size := BatchHeaderBytes
	for i := range messages {
		size += MessageHeaderBytes + len(messages[i].Payload) + len(messages[i].UserHeaders)
	}
	return size
}

// CheckOutgoing returns why messages cannot travel as one batch, or nil:
// none at all, a payload or header block above its cap, origin timestamps
// spread wider than a u32 of µs, or a record above the frame cap.
func CheckOutgoing(messages []OutgoingMessage) error {
	if len(messages) == 0 {
		return StatusInvalidMessagesCount
	}
	if BatchBytes(messages) > BodyBytesMax {
		return StatusTooBigMessagePayload
	}
	originFirst, originLast := uint64(math.MaxUint64), uint64(0)
	for i := range messages {
		if len(messages[i].Payload) > PayloadBytesMax {
			return StatusTooBigMessagePayload
		}
		if len(messages[i].UserHeaders) > UserHeadersBytesMax {
			return StatusTooBigUserHeaders
		}
		originFirst = min(originFirst, messages[i].OriginTimestamp)
		originLast = max(originLast, messages[i].OriginTimestamp)
	}
	if originLast-originFirst > math.MaxUint32 {
		return StatusInvalidMessageTimestampDelta
	}
	return nil
}

// EncodeBatch writes messages as one batch record into dst, the way a
// producer does (§8.2-§8.4): server-stamped fields zero, origin timestamp
// the smallest among the messages, offset deltas 0, 1, 2 …, both checksums.
// Each payload is copied exactly once. CheckOutgoing must accept messages.
func EncodeBatch(dst []byte, messages []OutgoingMessage) int {
	invariant.Assert(len(messages) > 0, "wire: encoding an empty batch")
	origin, size := writeBatchHeader(dst, messages)
	invariant.Assert(len(dst) >= size, "wire: batch buffer shorter than the batch")
	var hasher BatchHasher
	hasher.Start(dst[:BatchHeaderBytes])
	position := BatchHeaderBytes
	for i := range messages {
		frameBytes := encodeFrame(dst[position:], &messages[i], uint32(i), origin)
		hasher.Add(dst[position:])
		position += frameBytes
	}
	binary.LittleEndian.PutUint64(dst[batchOffsetChecksum:], hasher.Sum64())
	invariant.Assert(position == size, "wire: batch frames differ from BatchBytes")
	if invariant.Enabled {
		_, err := ValidateBatch(dst[:size])
		invariant.Assert(err == nil, "wire: an encoded batch does not validate")
	}
	return size
}

// writeBatchHeader writes at dst the header of a producer's batch of
// messages, its checksum left to the caller, and returns the origin
// timestamp (the least of the messages') and the batch size.
func writeBatchHeader(dst []byte, messages []OutgoingMessage) (origin uint64, size int) {
	size = BatchBytes(messages)
	origin = uint64(math.MaxUint64)
	for i := range messages {
		origin = min(origin, messages[i].OriginTimestamp)
	}
	header := BatchHeader{OriginTimestamp: origin, BatchLength: uint64(size), MessageCount: uint32(len(messages))}
	header.Encode(dst)
	return origin, size
}

// writeMessageHeader writes every field of a producer's message header but
// the checksum (§8.3): offset delta index, timestamp delta from origin.
func writeMessageHeader(frame []byte, message *OutgoingMessage, index uint32, origin uint64) {
	delta := message.OriginTimestamp - origin
	invariant.Assert(delta <= math.MaxUint32, "wire: timestamp delta above u32")
	writeUint128(frame[messageOffsetID:], message.ID)
	binary.LittleEndian.PutUint32(frame[messageOffsetOffsetDelta:], index)
	binary.LittleEndian.PutUint32(frame[messageOffsetTimestampDelta:], uint32(delta))
	binary.LittleEndian.PutUint32(frame[messageOffsetUserHeadersLength:], uint32(len(message.UserHeaders)))
	binary.LittleEndian.PutUint32(frame[messageOffsetPayloadLength:], uint32(len(message.Payload)))
	binary.LittleEndian.PutUint64(frame[messageOffsetReserved:], 0)
}

func encodeFrame(dst []byte, message *OutgoingMessage, index uint32, origin uint64) int {
	frameBytes := MessageHeaderBytes + len(message.Payload) + len(message.UserHeaders)
	frame := dst[:frameBytes]
	writeMessageHeader(frame, message, index, origin)
	copy(frame[MessageHeaderBytes:], message.Payload)
	copy(frame[MessageHeaderBytes+len(message.Payload):], message.UserHeaders)
	binary.LittleEndian.PutUint64(frame[messageOffsetChecksum:], xxh3.Hash(frame[8:]))
	return frameBytes
}

// BatchSlice is the part of a stored batch a poll serves (§8.5): a header
// to send in place of the stored one, and the served frames as a view of
// the stored bytes. A server writes Header[:] then Frames without copying
// or re-encoding any message.
type BatchSlice struct {
	Header       [BatchHeaderBytes]byte
	Frames       []byte
	MessageCount uint32
	OffsetFirst  uint64
	OffsetLast   uint64
}

// Bytes returns the record size: the header plus the served frames.
func (s *BatchSlice) Bytes() int { return BatchHeaderBytes + len(s.Frames) }

// SliceBatch selects from a stored (stamped, validated) batch the messages
// with offset ≥ offsetFirst, at most countMax of them. ok is false when
// none qualifies. A slice that covers the whole batch keeps the stored
// header; a partial one keeps base offset and timestamps, and rewrites
// batch_length, message_count and batch_checksum for the served frames
// (§8.5, §15 #8).
func SliceBatch(batch []byte, offsetFirst uint64, countMax uint32) (slice BatchSlice, ok bool) {
	return SliceBatchWithin(batch, offsetFirst, countMax, math.MaxInt)
}

// SliceBatchWithin is SliceBatch with the record (header and frames) kept
// within recordBytesMax, except that the first qualifying message is
// always served.
func SliceBatchWithin(batch []byte, offsetFirst uint64, countMax uint32, recordBytesMax int) (
	slice BatchSlice, ok bool) {
	header := readBatchHeader(batch)
	invariant.Assert(header.BatchLength == uint64(len(batch)), "wire: slicing a batch whose length field differs")
	if countMax == 0 {
		return BatchSlice{}, false
	}
	framesStart, framesEnd := -1, BatchHeaderBytes
	for position := BatchHeaderBytes; position < len(batch) && slice.MessageCount < countMax; {
		message := readMessageHeader(batch[position:])
		offset := header.BaseOffset + uint64(message.OffsetDelta)
		frameEnd := position + message.FrameBytes()
		if offset >= offsetFirst {
			if framesStart >= 0 && BatchHeaderBytes+frameEnd-framesStart > recordBytesMax {
				break
			}
			if framesStart < 0 {
				framesStart = position
				slice.OffsetFirst = offset
			}
			slice.OffsetLast = offset
			slice.MessageCount++
			framesEnd = frameEnd
		}
		position = frameEnd
	}
	if framesStart < 0 {
		return BatchSlice{}, false
	}
	slice.Frames = batch[framesStart:framesEnd:framesEnd]
	copy(slice.Header[:], batch[:BatchHeaderBytes])
	if slice.MessageCount == header.MessageCount {
		return slice, true
	}
	binary.LittleEndian.PutUint64(slice.Header[batchOffsetLength:], uint64(slice.Bytes()))
	binary.LittleEndian.PutUint32(slice.Header[batchOffsetMessageCount:], slice.MessageCount)
	binary.LittleEndian.PutUint64(slice.Header[batchOffsetChecksum:], framesChecksum(slice.Header[:], slice.Frames))
	if invariant.Enabled {
		_, err := VerifyRecord(append(slice.Header[:], slice.Frames...))
		invariant.Assert(err == nil, "wire: a sliced record does not verify")
	}
	return slice, true
}
