package wire

import (
	"encoding/binary"

	"github.com/whippetio/whippet/internal/invariant"
)

// Request is one decoded request frame. Body is a view into the frame.
type Request struct {
	Header RequestHeader
	Body   []byte
}

// DecodeRequest decodes the request frame at the start of src and returns
// it with the bytes it spans. A DecodeError with Truncated() true means src
// holds only part of the frame; any other error means the stream is broken.
func DecodeRequest(src []byte) (Request, int, error) {
	var request Request
	if _, err := request.Header.Decode(src); err != nil {
		return Request{}, 0, err
	}
	size := int(request.Header.Size)
	if len(src) < size {
		return Request{}, 0, &DecodeError{Offset: HeaderBytes, Need: size - HeaderBytes,
			Have: len(src) - HeaderBytes, What: "request body"}
	}
	request.Body = src[HeaderBytes:size:size]
	return request, size, nil
}

// RequestBytes returns the frame size of a request carrying body.
func RequestBytes(body Body) int {
	if body == nil {
		return HeaderBytes
	}
	return HeaderBytes + body.EncodedSize()
}

// EncodeRequest writes header and body as one frame into dst and returns
// its size; it sets header.Size. A nil body encodes a header-only frame.
func EncodeRequest(dst []byte, header RequestHeader, body Body) int {
	size := RequestBytes(body)
	invariant.Assert(size <= FrameBytesMax, "wire: request frame above 64 MiB")
	invariant.Assert(len(dst) >= size, "wire: request buffer shorter than the frame")
	header.Size = uint32(size)
	header.Encode(dst)
	if body != nil {
		written := body.Encode(dst[HeaderBytes:size])
		invariant.Assert(HeaderBytes+written == size, "wire: body wrote other than EncodedSize")
	}
	return size
}

// StampRequest writes the session fields of an encoded request in place:
// client id @128, request id @168 and session @184. A client that
// pipelines assigns request ids at the moment it writes, so ids leave in
// increasing order (§5.4).
func StampRequest(frame []byte, client Uint128, request, session uint64) {
	invariant.Assert(len(frame) >= HeaderBytes, "wire: stamping a request shorter than its header")
	writeUint128(frame[offsetClient:], client)
	binary.LittleEndian.PutUint64(frame[offsetRequest:], request)
	binary.LittleEndian.PutUint64(frame[offsetSession:], session)
}

// StampRequestChecksum sets request_checksum @144 of an encoded request to
// XXH3-64 of its body widened to 128 bits, as the Rust SDK does for
// metadata writes (§2.2).
func StampRequestChecksum(frame []byte) {
	size, err := FrameSize(frame)
	invariant.Assert(err == nil && size == len(frame), "wire: stamping a frame of the wrong size")
	binary.LittleEndian.PutUint64(frame[offsetRequestChecksum:], Checksum(frame[HeaderBytes:size]))
	binary.LittleEndian.PutUint64(frame[offsetRequestChecksum+8:], 0)
}

// VerifyRequestChecksum checks a non-zero request_checksum against the body
// (§2.2); a mismatch is answered with StatusInvalidFormat.
func VerifyRequestChecksum(request *Request) error {
	sum := request.Header.RequestChecksum
	if sum.IsZero() {
		return nil
	}
	if sum.Hi != 0 || sum.Lo != Checksum(request.Body) {
		return StatusInvalidFormat
	}
	return nil
}

// Assembler gathers stream bytes into whole frames: the connection feeds it
// whatever a read returned, however split, and takes frames out. It owns
// one buffer that grows to the largest frame seen, up to FrameBytesMax.
type Assembler struct {
	buffer   []byte
	buffered int
	size     int // declared size of the frame being gathered; 0 = unknown
}

// Write appends bytes of the stream and returns how many it took: it stops
// at the end of the current frame, so the caller re-offers the rest after
// taking the frame. An error means the stream is broken (bad size).
func (a *Assembler) Write(src []byte) (int, error) {
	taken := 0
	for taken < len(src) {
		want := HeaderBytes
		if a.size != 0 {
			want = a.size
		}
		if a.buffered == want {
			break
		}
		a.grow(want)
		copied := copy(a.buffer[a.buffered:want], src[taken:])
		a.buffered += copied
		taken += copied
		if a.size == 0 && a.buffered == HeaderBytes {
			size, err := FrameSize(a.buffer[:HeaderBytes])
			if err != nil {
				return taken, err
			}
			a.size = size
		}
	}
	return taken, nil
}

// Frame returns the gathered frame once it is whole. The slice is valid
// until the next Write after Reset.
func (a *Assembler) Frame() ([]byte, bool) {
	if a.size == 0 || a.buffered < a.size {
		return nil, false
	}
	return a.buffer[:a.size], true
}

// Reset drops the returned frame and starts on the next one.
func (a *Assembler) Reset() {
	a.buffered = 0
	a.size = 0
}

func (a *Assembler) grow(want int) {
	if len(a.buffer) >= want {
		return
	}
	grown := make([]byte, max(want, 2*len(a.buffer)))
	copy(grown, a.buffer[:a.buffered])
	a.buffer = grown
}
