package wire

import (
	"bytes"
	"testing"
)

// FuzzDecodeBody aims the mutations at request bodies, past the strict
// header: for every command, a body that decodes re-encodes to itself, and
// a decode never depends on bytes after the body.
func FuzzDecodeBody(f *testing.F) {
	var vectors []requestVector
	loadJSON(f, "requests.json", &vectors)
	for _, vector := range vectors {
		f.Add(uint16(vector.Code), unhex(f, vector.Payload))
	}
	f.Fuzz(func(t *testing.T, code uint16, body []byte) {
		decoded, ok := NewRequestBody(Code(code))
		if !ok {
			return
		}
		if err := DecodeAll(decoded, body); err != nil {
			return
		}
		encoded := make([]byte, decoded.EncodedSize())
		if decoded.Encode(encoded) != len(body) || !bytes.Equal(encoded, body) {
			t.Fatalf("code %d re-encoded\n%x\nwant\n%x", code, encoded, body)
		}
		if send, ok := decoded.(*SendMessages); ok {
			checkAcceptedBatch(t, send.Batch)
		}
	})
}

// FuzzDecodeReply is the client's side: any server frame either fails to
// decode or yields a reply whose typed payload re-encodes to itself.
func FuzzDecodeReply(f *testing.F) {
	var vectors []replyVector
	loadJSON(f, "responses.json", &vectors)
	for _, vector := range vectors {
		f.Add(uint16(vector.Code), unhex(f, vector.Frame))
	}
	f.Fuzz(func(t *testing.T, code uint16, frame []byte) {
		reply, size, err := DecodeReply(frame)
		if err != nil {
			return
		}
		if size > len(frame) || len(reply.Payload) > len(reply.Body) {
			t.Fatalf("size %d of %d, payload %d of body %d", size, len(frame), len(reply.Payload), len(reply.Body))
		}
		_ = reply.Err() // must not panic on any status or reason
		payload, ok := NewReplyPayload(Code(code))
		if !ok || reply.Command != CommandReply || len(reply.Payload) == 0 {
			return
		}
		if err := DecodeAll(payload, reply.Payload); err != nil {
			return
		}
		if polled, ok := payload.(*PolledMessages); ok {
			iterator := polled.Messages()
			for count := uint32(0); ; count++ {
				if _, ok := iterator.Next(); !ok {
					if count != polled.MessagesCount {
						t.Fatalf("iterated %d of %d", count, polled.MessagesCount)
					}
					break
				}
			}
		}
		if _, lenient := payload.(*UserDetails); lenient {
			return // "no permissions" may arrive as 1..4 zero bytes; we write 4
		}
		encoded := make([]byte, payload.EncodedSize())
		if payload.Encode(encoded) != len(reply.Payload) || !bytes.Equal(encoded, reply.Payload) {
			t.Fatalf("code %d payload re-encoded\n%x\nwant\n%x", code, encoded, reply.Payload)
		}
	})
}
