package wire

import (
	"encoding/binary"
	"math"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/zeebo/xxh3"
)

// RequestStream encodes a SendMessages request into one frame in two
// passes, so a producer writes the frame's start while it still copies the
// rest: Start writes everything but the payloads and user headers (request
// header, body metadata, batch header, every message header with its frame
// checksum, and the batch checksum, which needs only the frame checksums);
// each Next then copies payloads and user headers up to the next chunk
// boundary and returns the chunk, now final. The chunks, in order, are the
// frame byte for byte as EncodeRequest writes it. The zero value is ready
// for Start.
type RequestStream struct {
	frame    []byte
	messages []OutgoingMessage
	// encoded is the frame's final prefix: Next returns frame[chunked:encoded].
	encoded int
	chunked int
	// next is the message whose payload or user headers are copied next;
	// frameStart is where its frame begins.
	next       int
	frameStart int
	checksums  frameHasher
}

// Start encodes into frame (RequestBytes(body) bytes) the
// request of header and body but for its payloads and user headers, and
// sets s up to copy those chunk by chunk. It returns the frame size; it
// sets header.Size. s keeps views of frame and of the messages until
// Release or the last chunk; the messages must not change until then.
// CheckOutgoing must accept the messages.
func (s *RequestStream) Start(frame []byte, header RequestHeader, body *OutgoingMessages) int {
	size := RequestBytes(body)
	invariant.Assert(size <= FrameBytesMax, "wire: request frame above 64 MiB")
	invariant.Assert(len(frame) == size, "wire: request stream frame differs from the frame size")
	invariant.Assert(len(body.Messages) > 0, "wire: encoding an empty batch")
	header.Size = uint32(size)
	header.Encode(frame)
	metadataEnd := HeaderBytes + 4 + body.metadataBytes()
	e := newEncoder(frame[HeaderBytes:], metadataEnd-HeaderBytes)
	e.sendMetadata(body.Stream, body.Topic, body.Partitioning, uint32(len(body.Messages)), body.metadataBytes())
	e.done(metadataEnd - HeaderBytes)
	s.frame, s.messages = frame, body.Messages
	s.encodeHeaders(frame[metadataEnd:])
	s.chunked, s.next = 0, 0
	s.frameStart = metadataEnd + BatchHeaderBytes
	s.encoded = s.frameStart + MessageHeaderBytes
	return size
}

// encodeHeaders writes the batch header at the start of batch and every
// message header at its place after it, checksums included, reading each
// payload without copying it into batch.
func (s *RequestStream) encodeHeaders(batch []byte) {
	messages := s.messages
	origin := uint64(math.MaxUint64)
	for i := range messages {
		origin = min(origin, messages[i].OriginTimestamp)
	}
	batchHeader := BatchHeader{OriginTimestamp: origin, BatchLength: uint64(len(batch)),
		MessageCount: uint32(len(messages))}
	batchHeader.Encode(batch)
	var batchHasher BatchHasher
	batchHasher.Start(batch)
	position := BatchHeaderBytes
	for i := range messages {
		message := &messages[i]
		frameHeader := batch[position : position+MessageHeaderBytes]
		writeMessageHeader(frameHeader, message, uint32(i), origin)
		binary.LittleEndian.PutUint64(frameHeader[messageOffsetChecksum:], s.checksums.frameChecksum(frameHeader, message))
		batchHasher.Add(frameHeader)
		position += MessageHeaderBytes + len(message.Payload) + len(message.UserHeaders)
	}
	invariant.Assert(position == len(batch), "wire: batch frames differ from BatchBytes")
	binary.LittleEndian.PutUint64(batch[batchOffsetChecksum:], batchHasher.Sum64())
}

// Done reports whether Next has returned the whole frame.
func (s *RequestStream) Done() bool { return s.chunked == len(s.frame) }

// Next copies the payloads and user headers of the frame's next
// chunkBytes (fewer at the frame's end) into the frame and returns that
// chunk; the first chunk starts with the request header, so stamp it
// before. The frame must not be Done.
func (s *RequestStream) Next(chunkBytes int) []byte {
	invariant.Assert(chunkBytes > 0, "wire: request stream chunk of no bytes")
	invariant.Assert(!s.Done(), "wire: request stream already done")
	end := min(s.chunked+chunkBytes, len(s.frame))
	for s.next < len(s.messages) && s.encoded <= end {
		message := &s.messages[s.next]
		payloadStart := s.frameStart + MessageHeaderBytes
		headersStart := payloadStart + len(message.Payload)
		frameEnd := headersStart + len(message.UserHeaders)
		to := min(end, frameEnd)
		copyWithin(s.frame, s.encoded, to, payloadStart, message.Payload)
		copyWithin(s.frame, s.encoded, to, headersStart, message.UserHeaders)
		s.encoded = to
		if to < frameEnd {
			break
		}
		s.next++
		s.frameStart = frameEnd
		if s.next < len(s.messages) {
			s.encoded = frameEnd + MessageHeaderBytes // the next header is final since Start
		}
	}
	chunk := s.frame[s.chunked:end:end]
	s.chunked = end
	if s.Done() {
		invariant.Assert(s.next == len(s.messages), "wire: request stream done before its last message")
		if invariant.Enabled {
			_, err := ValidateBatch(s.frame[len(s.frame)-BatchBytes(s.messages):])
			invariant.Assert(err == nil, "wire: a streamed batch does not validate")
		}
		s.Release()
	}
	return chunk
}

// Release drops s's views of the frame and the messages, as the last
// chunk does; a stream given up part way is released before its frame is
// reused.
func (s *RequestStream) Release() {
	s.frame, s.messages = nil, nil
	s.encoded, s.chunked, s.next, s.frameStart = 0, 0, 0, 0
}

// copyWithin copies into frame[from:to] the part of block, which belongs
// at frame[blockStart:], that falls in that range.
func copyWithin(frame []byte, from, to, blockStart int, block []byte) {
	start, end := max(from, blockStart), min(to, blockStart+len(block))
	if start < end {
		copy(frame[start:end], block[start-blockStart:end-blockStart])
	}
}

// frameHasher computes frame checksums of messages whose header tail,
// payload and user headers lie apart (RequestVector, RequestStream).
type frameHasher struct {
	hasher  xxh3.Hasher
	scratch [frameScratchBytes]byte
}

// frameChecksum is XXH3-64 over a frame's bytes after its checksum field
// (§8.4): the header's tail, then the payload and user headers, which lie
// elsewhere. A frame up to frameScratchBytes is copied into a scratch that
// stays in L1 and hashed in one go, which measured faster than feeding the
// streaming hasher; a longer one is streamed, so no frame-sized scratch
// is needed.
func (h *frameHasher) frameChecksum(frameHeader []byte, message *OutgoingMessage) uint64 {
	tail := frameHeader[messageOffsetID:MessageHeaderBytes]
	tailBytes := len(tail) + len(message.Payload) + len(message.UserHeaders)
	if tailBytes <= len(h.scratch) {
		position := copy(h.scratch[:], tail)
		position += copy(h.scratch[position:], message.Payload)
		position += copy(h.scratch[position:], message.UserHeaders)
		return xxh3.Hash(h.scratch[:position])
	}
	h.hasher.Reset()
	_, _ = h.hasher.Write(tail) // Hasher.Write never fails
	_, _ = h.hasher.Write(message.Payload)
	_, _ = h.hasher.Write(message.UserHeaders)
	return h.hasher.Sum64()
}
