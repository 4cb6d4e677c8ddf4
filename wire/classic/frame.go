package classic

import (
	"encoding/binary"

	"github.com/whippetio/whippet/internal/invariant"
)

// RequestHeader is the classic request prologue [length u32][code u32].
// Length counts the code and the body, not itself.
type RequestHeader struct {
	Length uint32
	Code   Code
}

// BodyBytes is the size of the body that follows the prologue.
func (h RequestHeader) BodyBytes() int {
	invariant.Assert(h.Length >= RequestCodeBytes, "decoded request length covers its code")
	return int(h.Length) - RequestCodeBytes
}

// DecodeRequestHeader reads the 8-byte prologue. A length below 4 is a
// DecodeError (reply 3 and keep reading: there is no body to drain). A body
// above the code's cap is a DecodeError wrapping ErrBodyTooLarge: reply 3 and
// close, since draining it would let a client pin the connection. An unknown
// code is not an error here: the caller drains the body and replies 3.
func DecodeRequestHeader(prologue []byte) (RequestHeader, error) {
	if len(prologue) < RequestPrologueBytes {
		return RequestHeader{}, &DecodeError{What: "request prologue", Need: RequestPrologueBytes,
			Have: len(prologue), Status: StatusInvalidCommand}
	}
	header := RequestHeader{
		Length: binary.LittleEndian.Uint32(prologue[0:4]),
		Code:   Code(binary.LittleEndian.Uint32(prologue[4:8])),
	}
	if header.Length < RequestCodeBytes {
		return RequestHeader{}, &DecodeError{What: "request length", Value: uint64(header.Length),
			Status: StatusInvalidCommand}
	}
	if uint64(header.Length)-RequestCodeBytes > uint64(header.Code.BodyBytesMax()) {
		return header, &DecodeError{What: "request length", Value: uint64(header.Length),
			Status: StatusInvalidCommand, Cause: ErrBodyTooLarge}
	}
	return header, nil
}

// AppendRequestHeader writes a prologue for a body of bodyBytes.
func AppendRequestHeader(dst []byte, code Code, bodyBytes int) []byte {
	invariant.Assert(bodyBytes >= 0, "request body size is not negative")
	invariant.Assert(bodyBytes <= code.BodyBytesMax(), "request body fits its cap")
	dst = appendU32(dst, uint32(bodyBytes+RequestCodeBytes))
	return appendU32(dst, uint32(code))
}

// AppendRequest writes a whole request frame (prologue and body) for req.
// On error dst is returned unchanged.
func AppendRequest(dst []byte, req Request) ([]byte, error) {
	start := len(dst)
	dst = appendU32(dst, 0)
	dst = appendU32(dst, uint32(req.Code()))
	out, err := req.AppendBody(dst)
	if err != nil {
		return dst[:start], err
	}
	bodyBytes := len(out) - start - RequestPrologueBytes
	if bodyBytes > req.Code().BodyBytesMax() {
		return out[:start], ErrBodyTooLarge
	}
	binary.LittleEndian.PutUint32(out[start:], uint32(bodyBytes+RequestCodeBytes))
	return out, nil
}

// ReplyHeader is the classic reply prologue [status u32][length u32]; Length
// counts the body only.
type ReplyHeader struct {
	Status Status
	Length uint32
}

// DecodeReplyHeader reads the 8-byte reply prologue. An error status with a
// body, or a body above ReplyBodyBytesMax, is refused: the stream can no
// longer be trusted and the client should reconnect.
func DecodeReplyHeader(prologue []byte) (ReplyHeader, error) {
	if len(prologue) < ReplyPrologueBytes {
		return ReplyHeader{}, &DecodeError{What: "reply prologue", Need: ReplyPrologueBytes,
			Have: len(prologue), Status: StatusInvalidCommand}
	}
	header := ReplyHeader{
		Status: Status(binary.LittleEndian.Uint32(prologue[0:4])),
		Length: binary.LittleEndian.Uint32(prologue[4:8]),
	}
	if header.Status != StatusOK && header.Length != 0 {
		return ReplyHeader{}, &DecodeError{What: "error reply length", Offset: 4,
			Value: uint64(header.Length), Status: StatusInvalidFormat}
	}
	if header.Length > ReplyBodyBytesMax {
		return ReplyHeader{}, &DecodeError{What: "reply length", Offset: 4, Value: uint64(header.Length),
			Status: StatusInvalidFormat, Cause: ErrBodyTooLarge}
	}
	return header, nil
}

// AppendErrorReply writes a reply with a non-zero status and no body: a
// classic client never reads the body of an error reply.
func AppendErrorReply(dst []byte, status Status) []byte {
	invariant.Assert(status != StatusOK, "error reply has a non-zero status")
	dst = appendU32(dst, uint32(status))
	return appendU32(dst, 0)
}

// BeginReply reserves a success prologue; the caller appends the body and
// calls FinishReply with the returned start.
func BeginReply(dst []byte) ([]byte, int) {
	start := len(dst)
	dst = appendU32(dst, uint32(StatusOK))
	return appendU32(dst, 0), start
}

// FinishReply patches the body length of the reply begun at start.
func FinishReply(dst []byte, start int) []byte {
	bodyBytes := len(dst) - start - ReplyPrologueBytes
	invariant.Assert(bodyBytes >= 0, "reply body follows its prologue")
	invariant.Assert(bodyBytes <= ReplyBodyBytesMax, "reply body fits ReplyBodyBytesMax")
	// The classic Go SDK treats a 1-byte body as empty without reading it,
	// which would desynchronise the stream; no reply layout is 1 byte long.
	invariant.Assert(bodyBytes != 1, "reply body is never exactly 1 byte")
	binary.LittleEndian.PutUint32(dst[start+4:], uint32(bodyBytes))
	return dst
}

// AppendReply writes a whole success reply carrying reply's body.
func AppendReply(dst []byte, reply Reply) []byte {
	dst, start := BeginReply(dst)
	return FinishReply(reply.AppendBody(dst), start)
}

// Request is one classic request body. AppendBody checks values that came
// from an application and returns an error instead of writing bad bytes.
type Request interface {
	Code() Code
	AppendBody(dst []byte) ([]byte, error)
}

// Reply is one success reply body built from validated server state.
type Reply interface {
	AppendBody(dst []byte) []byte
}

// EmptyReply is the body of every command whose success reply is empty, and
// of the "not found" convention of GetStream, GetTopic, GetUser,
// GetConsumerGroup, GetClient and GetConsumerOffset.
type EmptyReply struct{}

// AppendBody writes nothing.
func (EmptyReply) AppendBody(dst []byte) []byte { return dst }

// Decode accepts only an empty body.
func (EmptyReply) Decode(body []byte) error {
	if len(body) != 0 {
		return &DecodeError{What: "empty reply", Value: uint64(len(body)), Status: StatusInvalidFormat}
	}
	return nil
}

// SplitRequest tells a stream reader how many bytes the first request frame
// in buf occupies: RequestPrologueBytes while fewer are buffered, then the
// whole frame (prologue and body). The frame is complete once len(buf)
// reaches that size; its body is buf[RequestPrologueBytes:size]. Errors are
// those of DecodeRequestHeader; for a length below 4 the size is the
// 8-byte prologue alone, which the reader skips after replying.
func SplitRequest(buf []byte) (RequestHeader, int, error) {
	if len(buf) < RequestPrologueBytes {
		return RequestHeader{}, RequestPrologueBytes, nil
	}
	header, err := DecodeRequestHeader(buf)
	if err != nil {
		return header, RequestPrologueBytes, err
	}
	return header, RequestPrologueBytes + header.BodyBytes(), nil
}

// SplitReply is SplitRequest for replies: the first reply frame in buf
// occupies the returned number of bytes.
func SplitReply(buf []byte) (ReplyHeader, int, error) {
	if len(buf) < ReplyPrologueBytes {
		return ReplyHeader{}, ReplyPrologueBytes, nil
	}
	header, err := DecodeReplyHeader(buf)
	if err != nil {
		return header, ReplyPrologueBytes, err
	}
	return header, ReplyPrologueBytes + int(header.Length), nil
}
