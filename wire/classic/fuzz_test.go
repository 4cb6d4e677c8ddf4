package classic

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecodeClassic feeds request frames to the classic codec. Properties:
// no panic on any input; the decoder never consumes past the declared body;
// trailing bytes after the body change nothing; accepted input re-encodes to
// the same bytes; a failure is a *DecodeError inside the body; split at any
// point, the stream splitter waits and then yields the same frame; Detect
// never panics and never changes a decision as more bytes arrive.
func FuzzDecodeClassic(f *testing.F) {
	for _, v := range loadVectors[requestVector](f, "requests.json", 63) {
		f.Add(unhex(f, v.FrameHex), uint16(3))
	}
	for _, sample := range loadVectors[detectionVector](f, "detection.json", 126) {
		f.Add(unhex(f, sample.Prefix), uint16(sample.Decided))
	}
	f.Fuzz(func(t *testing.T, frame []byte, cut uint16) {
		checkDetectMonotonic(t, frame)
		header, size, err := SplitRequest(frame)
		if err != nil || size > len(frame) {
			return
		}
		checkSplitHalves(t, frame, int(cut)%(len(frame)+1), header, size)
		body := frame[RequestPrologueBytes:size:size]
		req, consumed, err := DecodeRequest(header.Code, body)
		if err != nil {
			checkDecodeError(t, err, len(body))
			return
		}
		if consumed < 0 || consumed > len(body) {
			t.Fatalf("%v consumed %d of %d", header.Code, consumed, len(body))
		}
		encoded, err := req.AppendBody(nil)
		if err != nil || !bytes.Equal(encoded, body[:consumed]) {
			t.Fatalf("%v: re-encoded %x, %v; want %x", header.Code, encoded, err, body[:consumed])
		}
		if send, ok := req.(*SendMessages); ok {
			for i := 0; i < int(send.Count); i++ {
				_ = CheckUserHeaders(send.Message(i).UserHeaders) // must not panic; blocks are unchecked in 0.8
			}
			return
		}
		checkTrailingIgnored(t, header.Code, body, consumed, encoded)
	})
}

func checkDecodeError(t *testing.T, err error, bodyBytes int) {
	var decodeError *DecodeError
	if !errors.As(err, &decodeError) {
		t.Fatalf("error %v is not a *DecodeError", err)
	}
	if decodeError.Offset < 0 || decodeError.Offset > bodyBytes {
		t.Fatalf("error offset %d outside a %d-byte body: %v", decodeError.Offset, bodyBytes, err)
	}
	if decodeError.Status == StatusOK || !decodeError.Status.Known() {
		t.Fatalf("error carries status %v: %v", decodeError.Status, err)
	}
	if decodeError.Need > 0 && decodeError.Have >= decodeError.Need {
		t.Fatalf("truncation error that had enough bytes: %v", err)
	}
}

// checkTrailingIgnored: the body plus garbage decodes to the same value.
func checkTrailingIgnored(t *testing.T, code Code, body []byte, consumed int, encoded []byte) {
	longer := append(append([]byte(nil), body...), 0xa5, 0x5a, 0xff)
	req, again, err := DecodeRequest(code, longer)
	if err != nil || again != consumed {
		t.Fatalf("%v with trailing bytes: consumed %d (was %d), %v", code, again, consumed, err)
	}
	if reencoded, _ := req.AppendBody(nil); !bytes.Equal(reencoded, encoded) {
		t.Fatalf("%v with trailing bytes re-encodes differently", code)
	}
}

// checkSplitHalves: a reader holding only the first part either waits for
// more or already sees the same whole frame.
func checkSplitHalves(t *testing.T, frame []byte, cut int, header RequestHeader, size int) {
	partHeader, partSize, err := SplitRequest(frame[:cut])
	if err != nil {
		t.Fatalf("prefix of a valid frame failed: %v", err)
	}
	if cut >= RequestPrologueBytes && (partHeader != header || partSize != size) {
		t.Fatalf("prefix sees %+v/%d, whole %+v/%d", partHeader, partSize, header, size)
	}
	if cut < RequestPrologueBytes && partSize != RequestPrologueBytes {
		t.Fatalf("short prefix asks for %d bytes", partSize)
	}
}

func checkDetectMonotonic(t *testing.T, data []byte) {
	whole := Detect(data)
	if whole.Verdict == NeedMore {
		if whole.Bytes <= len(data) {
			t.Fatalf("NeedMore asks for %d with %d buffered", whole.Bytes, len(data))
		}
		return
	}
	if whole.Bytes > len(data) {
		t.Fatalf("decided on %d bytes with %d buffered", whole.Bytes, len(data))
	}
	if early := Detect(data[:whole.Bytes]); early != whole {
		t.Fatalf("decision on %d bytes %+v differs from whole %+v", whole.Bytes, early, whole)
	}
}

// FuzzDecodeClassicReply feeds reply bodies to the decoder of a code.
// Properties: no panic; accepted bodies re-encode to the same bytes.
func FuzzDecodeClassicReply(f *testing.F) {
	for _, v := range loadVectors[responseVector](f, "responses.json", 64) {
		f.Add(v.Code, unhex(f, v.FrameHex))
	}
	f.Fuzz(func(t *testing.T, code uint32, frame []byte) {
		header, size, err := SplitReply(frame)
		if err != nil || size > len(frame) || header.Status != StatusOK {
			return
		}
		reply, ok := NewReply(Code(code))
		if !ok {
			return
		}
		body := frame[ReplyPrologueBytes:size:size]
		if err := reply.Decode(body); err != nil {
			checkDecodeError(t, err, len(body))
			return
		}
		if encoded := reply.AppendBody(nil); !bytes.Equal(encoded, body) {
			t.Fatalf("%v: re-encoded %x, want %x", Code(code), encoded, body)
		}
	})
}
