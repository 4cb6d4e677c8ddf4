package wire

import (
	"encoding/binary"

	"github.com/whippetio/whippet/internal/invariant"
)

// resultSectionOKBytes is the `00 00 00 00` a successful result-framed
// reply starts with (§4.2).
const resultSectionOKBytes = 4

// ReplyBytes returns the frame size of a success reply under operation.
func ReplyBytes(operation Operation, payload Body) int {
	size := HeaderBytes
	if operation.ResultFramed() {
		size += resultSectionOKBytes
	}
	if payload != nil {
		size += payload.EncodedSize()
	}
	return size
}

// EncodeReply writes a success reply (status 0) into dst and returns its
// size: the header, the empty result section when the operation is
// result-framed, then the payload (nil for none).
func EncodeReply(dst []byte, header ReplyHeader, payload Body) int {
	size := ReplyBytes(header.Operation, payload)
	invariant.Assert(size <= FrameBytesMax, "wire: reply frame above 64 MiB")
	invariant.Assert(len(dst) >= size, "wire: reply buffer shorter than the frame")
	header.Size = uint32(size)
	header.Status = StatusOK
	position := header.Encode(dst)
	if header.Operation.ResultFramed() {
		clear(dst[position : position+resultSectionOKBytes])
		position += resultSectionOKBytes
	}
	if payload != nil {
		position += payload.Encode(dst[position:size])
	}
	invariant.Assert(position == size, "wire: reply payload wrote other than EncodedSize")
	return size
}

// EncodeStatusReply writes a pre-commit refusal: status in the header and
// an empty body (§4.1). It returns HeaderBytes.
func EncodeStatusReply(dst []byte, header ReplyHeader, status Status) int {
	invariant.Assert(status != StatusOK, "wire: status reply with status 0")
	header.Size = HeaderBytes
	header.Status = status
	return header.Encode(dst)
}

// ResultReplyBytes is the size of a committed-rejection reply.
const ResultReplyBytes = HeaderBytes + 4 + ResultEntryBytes

// EncodeResultReply writes a committed rejection of a result-framed write:
// status 0 and a one-entry result section carrying result (§4.1).
func EncodeResultReply(dst []byte, header ReplyHeader, result Status) int {
	invariant.Assert(result != StatusOK, "wire: result reply with result 0")
	invariant.Assert(header.Operation.ResultFramed(), "wire: result reply under an unframed operation")
	header.Size = ResultReplyBytes
	header.Status = StatusOK
	position := header.Encode(dst)
	binary.LittleEndian.PutUint32(dst[position:], 1)
	binary.LittleEndian.PutUint32(dst[position+4:], 0)
	binary.LittleEndian.PutUint32(dst[position+8:], uint32(result))
	return ResultReplyBytes
}

// Reply is one decoded server frame: a Reply or an Eviction.
type Reply struct {
	Command  Command // CommandReply or CommandEviction
	Header   ReplyHeader
	Eviction EvictionHeader
	Body     []byte // the whole body, result section included (view)
	Payload  []byte // what the typed decoder reads (view)
	Result   Status // first result-section entry; StatusOK when none
}

// DecodeReply decodes the server frame at the start of src in the SDKs'
// order (§4.1): command, size, status, operation, result section.
func DecodeReply(src []byte) (Reply, int, error) {
	if len(src) < HeaderBytes {
		return Reply{}, 0, &DecodeError{Need: HeaderBytes, Have: len(src), What: "reply header"}
	}
	switch Command(src[offsetCommand]) {
	case CommandEviction:
		reply := Reply{Command: CommandEviction}
		if _, err := reply.Eviction.Decode(src); err != nil {
			return Reply{}, 0, err
		}
		return reply, HeaderBytes, nil
	case CommandReply:
		return decodeReplyFrame(src)
	}
	return Reply{}, 0, decodeFailure(offsetCommand, "frame command is neither Reply nor Eviction")
}

func decodeReplyFrame(src []byte) (Reply, int, error) {
	reply := Reply{Command: CommandReply}
	if _, err := reply.Header.Decode(src); err != nil {
		return Reply{}, 0, err
	}
	size := int(reply.Header.Size)
	if len(src) < size {
		return Reply{}, 0, &DecodeError{Offset: HeaderBytes, Need: size - HeaderBytes,
			Have: len(src) - HeaderBytes, What: "reply body"}
	}
	reply.Body = src[HeaderBytes:size:size]
	reply.Payload = reply.Body
	if reply.Header.Status != StatusOK {
		return reply, size, nil
	}
	if !reply.Header.Operation.Declared() {
		return Reply{}, 0, decodeFailure(offsetReplyOperation, "reply operation not declared")
	}
	if !reply.Header.Operation.BodyFramed(len(reply.Body)) {
		return reply, size, nil
	}
	d := decoder{src: reply.Body}
	count := d.count32(ResultEntryBytes, "result section")
	if d.err != nil {
		return Reply{}, 0, d.err
	}
	if count > 0 {
		_ = d.u32("result index") // the index names the failed sub-request; one per reply today
		reply.Result = Status(d.u32("result"))
	}
	for range max(count-1, 0) {
		d.u64("result entry")
	}
	reply.Payload = reply.Body[d.pos:]
	return reply, size, nil
}

// Err returns the error the reply carries on any of the three channels
// (§4.1): the eviction's status, the header status, or the first result
// of the result section. It is nil for a success.
func (r *Reply) Err() error {
	switch {
	case r.Command == CommandEviction:
		return r.Eviction.Status()
	case r.Header.Status != StatusOK:
		return r.Header.Status
	case r.Result != StatusOK:
		return r.Result
	}
	return nil
}
