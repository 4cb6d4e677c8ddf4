package classic

import "github.com/whippetio/whippet/internal/invariant"

// MessageFields is the neutral form of one message: the facts the classic
// 64-byte header and the 0.9 48-byte frame both carry. Payload and
// UserHeaders are views; neither framing's checksum is part of it, because
// each covers its own layout and is recomputed on the way out.
type MessageFields struct {
	ID              MessageID
	Offset          uint64
	Timestamp       uint64
	OriginTimestamp uint64
	Payload         []byte
	UserHeaders     []byte
}

// Fields returns the neutral form of a classic message view.
func (m *Message) Fields() MessageFields {
	return MessageFields{
		ID:              m.Header.ID,
		Offset:          m.Header.Offset,
		Timestamp:       m.Header.Timestamp,
		OriginTimestamp: m.Header.OriginTimestamp,
		Payload:         m.Payload,
		UserHeaders:     m.UserHeaders,
	}
}

// AppendMessage writes one stored message in classic form (header, payload,
// user headers) with reserved zero and a fresh checksum: what a poll reply
// carries.
func AppendMessage(dst []byte, f *MessageFields) []byte {
	invariant.Assert(len(f.Payload) <= MessagePayloadBytesMax, "stored payload fits the 0.8 cap")
	invariant.Assert(len(f.UserHeaders) <= UserHeadersBytesMax, "stored user headers fit the 0.8 cap")
	start := len(dst)
	header := MessageHeader{
		ID:                f.ID,
		Offset:            f.Offset,
		Timestamp:         f.Timestamp,
		OriginTimestamp:   f.OriginTimestamp,
		UserHeadersLength: uint32(len(f.UserHeaders)),
		PayloadLength:     uint32(len(f.Payload)),
	}
	dst = AppendMessageHeader(dst, &header)
	dst = append(dst, f.Payload...)
	dst = append(dst, f.UserHeaders...)
	Seal(dst[start:])
	return dst
}

// FrameFields are the values of a 0.9 message frame header (PROTOCOL.md
// §8.3) apart from its checksum, which the 0.9 codec computes over its own
// 48-byte layout. Offset and timestamp are deltas against the batch.
type FrameFields struct {
	ID                MessageID
	OffsetDelta       uint32
	TimestampDelta    uint32
	UserHeadersLength uint32
	PayloadLength     uint32
}

// BatchFields are the 0.9 batch header values a frame's deltas refer to.
type BatchFields struct {
	BaseOffset      uint64
	BaseTimestamp   uint64
	OriginTimestamp uint64
}

// BatchOrigin is the smallest origin timestamp of a SendMessages body: the
// origin_timestamp of the 0.9 batch record built from it.
func (req *SendMessages) BatchOrigin() uint64 {
	origin := ^uint64(0)
	for i := 0; i < int(req.Count); i++ {
		origin = min(origin, ReadMessageHeader(req.MessageRaw(i)).OriginTimestamp)
	}
	return origin
}

// ToFrame maps message index of a classic batch onto 0.9 frame values:
// offset_delta is the index, timestamp_delta the distance from the batch
// origin. A batch spanning more than u32 µs (≈ 71.6 min) of origin time
// cannot be one 0.9 record: ErrFieldRange, and the caller splits it.
func ToFrame(f *MessageFields, index uint32, batchOrigin uint64) (FrameFields, error) {
	if f.OriginTimestamp < batchOrigin || f.OriginTimestamp-batchOrigin > uint64(^uint32(0)) {
		return FrameFields{}, ErrFieldRange
	}
	return FrameFields{
		ID:                f.ID,
		OffsetDelta:       index,
		TimestampDelta:    uint32(f.OriginTimestamp - batchOrigin),
		UserHeadersLength: uint32(len(f.UserHeaders)),
		PayloadLength:     uint32(len(f.Payload)),
	}, nil
}

// FromFrame rebuilds the neutral form of a stored 0.9 frame for a classic
// poll: offset = base_offset + offset_delta, timestamp = base_timestamp (one
// append time per batch), origin = origin_timestamp + timestamp_delta.
// payload and userHeaders are the frame's views, whose lengths must match.
func FromFrame(frame FrameFields, batch BatchFields, payload, userHeaders []byte) MessageFields {
	invariant.Assert(len(payload) == int(frame.PayloadLength), "payload view matches the frame")
	invariant.Assert(len(userHeaders) == int(frame.UserHeadersLength), "user headers view matches the frame")
	return MessageFields{
		ID:              frame.ID,
		Offset:          batch.BaseOffset + uint64(frame.OffsetDelta),
		Timestamp:       batch.BaseTimestamp,
		OriginTimestamp: batch.OriginTimestamp + uint64(frame.TimestampDelta),
		Payload:         payload,
		UserHeaders:     userHeaders,
	}
}
