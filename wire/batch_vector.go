package wire

import (
	"encoding/binary"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/zeebo/xxh3"
)

// RequestVector is a SendMessages request frame held as a vector of slices
// instead of one buffer, so a producer writes it with vectored I/O and no
// payload is copied on its way to the socket. Pieces, concatenated, are the
// frame byte for byte as EncodeRequest writes it:
//
//	Head: [request header 256][body metadata][batch header 256][message header 48] ...
//	Pieces: Head[0:h0], payload 0, user headers 0, Head[h0:h1], payload 1, ...
//
// Empty payloads and user-header blocks are left out of Pieces, and the
// head bytes between two non-empty ones are one piece. The zero value is
// ready for EncodeSendVector, which reuses Head and Pieces.
type RequestVector struct {
	// Head holds everything of the frame except the payloads and user
	// headers: the request header (StampRequest writes into Head), the body
	// metadata, the batch header and every message header.
	Head []byte
	// Pieces are views of Head and of the messages' payloads and user
	// headers, in frame order.
	Pieces  [][]byte
	hasher  xxh3.Hasher
	scratch [frameScratchBytes]byte
}

// SendHeadBytes returns the size of the head of a SendMessages request
// carrying body: the frame without its payloads and user headers.
func SendHeadBytes(body *OutgoingMessages) int {
	return HeaderBytes + 4 + body.metadataBytes() + BatchHeaderBytes + MessageHeaderBytes*len(body.Messages)
}

// EncodeSendVector encodes the request frame of header and body into v,
// the same bytes EncodeRequest writes, and returns the frame size; it sets
// header.Size. The pieces alias the messages' payloads and user headers
// (nothing of them is copied): they must not change until the frame is
// written. CheckOutgoing must accept the messages.
func EncodeSendVector(v *RequestVector, header RequestHeader, body *OutgoingMessages) int {
	size := RequestBytes(body)
	invariant.Assert(size <= FrameBytesMax, "wire: request frame above 64 MiB")
	invariant.Assert(len(body.Messages) > 0, "wire: encoding an empty batch")
	headBytes := SendHeadBytes(body)
	if cap(v.Head) < headBytes {
		v.Head = make([]byte, headBytes)
	}
	head := v.Head[:headBytes]
	v.Head = head
	header.Size = uint32(size)
	header.Encode(head)
	metadataEnd := HeaderBytes + 4 + body.metadataBytes()
	e := newEncoder(head[HeaderBytes:], metadataEnd-HeaderBytes)
	e.sendMetadata(body.Stream, body.Topic, body.Partitioning, uint32(len(body.Messages)), body.metadataBytes())
	e.done(metadataEnd - HeaderBytes)
	v.encodeBatch(head, metadataEnd, body.Messages)
	if invariant.Enabled {
		v.checkAgainstFlat(header, body, size)
	}
	return size
}

// encodeBatch writes the batch header at batchStart of head and the message
// headers after it, and gathers the pieces.
func (v *RequestVector) encodeBatch(head []byte, batchStart int, messages []OutgoingMessage) {
	batch := head[batchStart:]
	origin, batchBytes := writeBatchHeader(batch, messages)
	var batchHasher BatchHasher
	batchHasher.Start(batch)
	v.Release()
	pieceStart, position, total := 0, batchStart+BatchHeaderBytes, 0
	for i := range messages {
		message := &messages[i]
		frameHeader := head[position : position+MessageHeaderBytes]
		writeMessageHeader(frameHeader, message, uint32(i), origin)
		binary.LittleEndian.PutUint64(frameHeader[messageOffsetChecksum:], v.frameChecksum(frameHeader, message))
		batchHasher.Add(frameHeader)
		position += MessageHeaderBytes
		if len(message.Payload) == 0 && len(message.UserHeaders) == 0 {
			continue
		}
		v.Pieces = append(v.Pieces, head[pieceStart:position:position])
		total += position - pieceStart
		total += v.appendPiece(message.Payload) + v.appendPiece(message.UserHeaders)
		pieceStart = position
	}
	invariant.Assert(position == len(head), "wire: message headers differ from SendHeadBytes")
	if pieceStart < position {
		v.Pieces = append(v.Pieces, head[pieceStart:position:position])
		total += position - pieceStart
	}
	binary.LittleEndian.PutUint64(batch[batchOffsetChecksum:], batchHasher.Sum64())
	invariant.Assert(total == batchStart+batchBytes, "wire: request pieces differ from the frame size")
}

func (v *RequestVector) appendPiece(piece []byte) int {
	if len(piece) > 0 {
		v.Pieces = append(v.Pieces, piece)
	}
	return len(piece)
}

// frameChecksum is XXH3-64 over a frame's bytes after its checksum field
// (§8.4): the header's tail, then the payload and user headers, which lie
// elsewhere. A frame up to frameScratchBytes is copied into a scratch that
// stays in L1 and hashed in one go, which measured faster than feeding the
// streaming hasher; a longer one is streamed, so no frame-sized scratch
// is needed.
func (v *RequestVector) frameChecksum(frameHeader []byte, message *OutgoingMessage) uint64 {
	tail := frameHeader[messageOffsetID:MessageHeaderBytes]
	tailBytes := len(tail) + len(message.Payload) + len(message.UserHeaders)
	if tailBytes <= len(v.scratch) {
		position := copy(v.scratch[:], tail)
		position += copy(v.scratch[position:], message.Payload)
		position += copy(v.scratch[position:], message.UserHeaders)
		return xxh3.Hash(v.scratch[:position])
	}
	v.hasher.Reset()
	_, _ = v.hasher.Write(tail) // Hasher.Write never fails
	_, _ = v.hasher.Write(message.Payload)
	_, _ = v.hasher.Write(message.UserHeaders)
	return v.hasher.Sum64()
}

// StampRequestChecksum is StampRequestChecksum for a frame held as v:
// request_checksum @144 of Head becomes XXH3-64 of the body the pieces
// carry. Stamp the session fields first or after; they are not in the body.
func (v *RequestVector) StampRequestChecksum() {
	invariant.Assert(len(v.Pieces) > 0, "wire: stamping an empty request vector")
	invariant.Assert(len(v.Pieces[0]) >= HeaderBytes, "wire: the first request piece is shorter than a header")
	v.hasher.Reset()
	_, _ = v.hasher.Write(v.Pieces[0][HeaderBytes:]) // Hasher.Write never fails
	for _, piece := range v.Pieces[1:] {
		_, _ = v.hasher.Write(piece)
	}
	binary.LittleEndian.PutUint64(v.Head[offsetRequestChecksum:], v.hasher.Sum64())
	binary.LittleEndian.PutUint64(v.Head[offsetRequestChecksum+8:], 0)
}

// Release drops the pieces' views of the messages, so a vector kept for
// reuse does not hold the caller's payloads alive.
func (v *RequestVector) Release() {
	clear(v.Pieces)
	v.Pieces = v.Pieces[:0]
}

// AppendTo appends the frame the pieces make up to dst, for a transport
// without vectored writes, and returns the extended slice.
func (v *RequestVector) AppendTo(dst []byte) []byte {
	for _, piece := range v.Pieces {
		dst = append(dst, piece...)
	}
	return dst
}

// checkAgainstFlat re-encodes the request into one buffer and asserts the
// pieces match it (invariant builds only: it copies every payload).
func (v *RequestVector) checkAgainstFlat(header RequestHeader, body *OutgoingMessages, size int) {
	flat := make([]byte, size)
	EncodeRequest(flat, header, body)
	joined := v.AppendTo(make([]byte, 0, size))
	invariant.Assert(string(joined) == string(flat), "wire: a request vector differs from the flat frame")
}
