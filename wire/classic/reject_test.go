package classic

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// Goal: every cut of every golden request body short of what the decoder
// consumes is refused with a *DecodeError at or before the cut, never a
// panic or a half-decoded success.
func TestTruncatedRequestsRejected(t *testing.T) {
	for _, v := range loadVectors[requestVector](t, "requests.json", 63) {
		code := Code(v.Code)
		body := unhex(t, v.PayloadHex)
		if !code.Known() {
			continue
		}
		_, consumed, err := DecodeRequest(code, body)
		if err != nil {
			t.Fatalf("%s: golden body refused: %v", v.Command, err)
		}
		for cut := 0; cut < consumed; cut++ {
			_, _, err := DecodeRequest(code, body[:cut])
			var decodeError *DecodeError
			if !errors.As(err, &decodeError) {
				t.Fatalf("%s cut at %d: err = %v", v.Command, cut, err)
			}
			if decodeError.Offset > cut {
				t.Fatalf("%s cut at %d: error offset %d beyond the cut", v.Command, cut, decodeError.Offset)
			}
			if decodeError.Need > 0 && (decodeError.Have >= decodeError.Need || decodeError.Offset+decodeError.Have != cut) {
				t.Fatalf("%s cut at %d: inconsistent truncation report %+v", v.Command, cut, decodeError)
			}
		}
	}
}

// sendBody builds a SendMessages body around raw index and data bytes.
func sendBody(count uint32, index, data []byte) []byte {
	body := appendSendMetadata(nil, num(0), num(0), Partitioning{Kind: PartitioningBalanced}, count)
	return append(append(body, index...), data...)
}

func indexEntry(first uint32, end uint32, last uint64) []byte {
	entry := binary.LittleEndian.AppendUint32(nil, first)
	entry = binary.LittleEndian.AppendUint32(entry, end)
	return binary.LittleEndian.AppendUint64(entry, last)
}

func rawMessage(payloadBytes int, headersBytes uint32) []byte {
	header := MessageHeader{PayloadLength: uint32(payloadBytes), UserHeadersLength: headersBytes}
	raw := AppendMessageHeader(nil, &header)
	return append(raw, make([]byte, payloadBytes+int(headersBytes))...)
}

// Goal: each SendMessages batch check answers the 0.8 status for it
// (PROTOCOL-0.8.md §7.1).
func TestSendMessagesChecks(t *testing.T) {
	message := rawMessage(5, 0)
	size := uint32(len(message))
	bigHeaders := rawMessage(0, UserHeadersBytesMax+1)
	cases := []struct {
		name string
		body []byte
		want Status
	}{
		{"count zero", sendBody(0, nil, nil), StatusInvalidMessagesCount},
		{"index missing", sendBody(2, indexEntry(0, size, 0), nil), StatusMissingIndex},
		{"non-zero offset word", sendBody(1, indexEntry(1, size, 0), message), StatusNonZeroOffset},
		{"non-zero timestamp word", sendBody(1, indexEntry(0, size, 9), message), StatusNonZeroTimestamp},
		{"end position goes back", sendBody(2, append(indexEntry(0, size, 0), indexEntry(0, size-1, 0)...),
			append(message, message...)), StatusCannotReadIndexPosition},
		{"end beyond data", sendBody(1, indexEntry(0, size+1, 0), message), StatusInvalidMessagesSize},
		{"data longer than index", sendBody(1, indexEntry(0, size, 0), append(message, 0)), StatusInvalidMessagesSize},
		{"span shorter than a header", sendBody(1, indexEntry(0, 10, 0), message[:10]), StatusTooSmallMessage},
		{"lengths disagree with span", sendBody(1, indexEntry(0, size-1, 0), message[:size-1]), StatusInvalidMessagesSize},
		{"user headers too big", sendBody(1, indexEntry(0, uint32(len(bigHeaders)), 0), bigHeaders),
			StatusTooBigUserHeaders},
		{"payload too big", sendBody(1, indexEntry(0, size, 0), payloadLength(message, MessagePayloadBytesMax+1)),
			StatusTooBigMessagePayload},
		{"metadata_length wrong", metadataLength(sendBody(1, indexEntry(0, size, 0), message), 17),
			StatusInvalidCommand},
	}
	for _, c := range cases {
		var req SendMessages
		_, err := req.Decode(c.body)
		if got := StatusOf(err); err == nil || got != c.want {
			t.Errorf("%s: status %v (%v), want %v", c.name, got, err, c.want)
		}
	}
	var req SendMessages
	if _, err := req.Decode(sendBody(1, indexEntry(0, size, 0), message)); err != nil {
		t.Fatalf("the well-formed base case is refused: %v", err)
	}
}

func payloadLength(message []byte, length uint32) []byte {
	out := append([]byte(nil), message...)
	binary.LittleEndian.PutUint32(out[headerPayloadLengthAt:], length)
	return out
}

func metadataLength(body []byte, length uint32) []byte {
	binary.LittleEndian.PutUint32(body, length)
	return body
}

// Goal: shape and validation failures in shared primitives map to 3 and 4.
func TestPrimitiveRejects(t *testing.T) {
	cases := []struct {
		name string
		code Code
		body []byte
		want Status
	}{
		{"numeric id of length 3", CodeGetStream, []byte{1, 3, 0, 0, 0}, StatusInvalidCommand},
		{"identifier kind 3", CodeGetStream, []byte{3, 4, 0, 0, 0, 0}, StatusInvalidCommand},
		{"empty name identifier", CodeGetStream, []byte{2, 0}, StatusInvalidFormat},
		{"invalid UTF-8 name", CodeCreateStream, []byte{2, 0xff, 0xfe}, StatusInvalidFormat},
		{"empty stream name", CodeCreateStream, []byte{0}, StatusInvalidFormat},
		{"consumer kind 3", CodeGetConsumerOffset, append([]byte{3}, goldenOffsetTail()...), StatusInvalidCommand},
		{"flag 2", CodeFlushUnsavedBuffer, []byte{1, 4, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 2}, StatusInvalidCommand},
		{"compression 3", CodeCreateTopic, append([]byte{1, 4, 0, 0, 0, 0, 1, 0, 0, 0, 3}, make([]byte, 18)...),
			StatusInvalidCommand},
		{"user status 3", CodeCreateUser, []byte{3, 'b', 'o', 'b', 0, 3, 0}, StatusInvalidCommand},
		{"snapshot all with others", CodeGetSnapshot, []byte{1, 2, 100, 1}, StatusInvalidFormat},
		{"snapshot no types", CodeGetSnapshot, []byte{1, 0}, StatusInvalidFormat},
		{"permissions length too long", CodeUpdatePermissions,
			append([]byte{1, 4, 1, 0, 0, 0, 1, 12, 0, 0, 0}, make([]byte, 12)...), StatusInvalidFormat},
		{"partitioning kind 2 length 3", CodeSendMessages, []byte{14, 0, 0, 0, 1, 4, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0, 2, 3},
			StatusInvalidCommand},
	}
	for _, c := range cases {
		_, _, err := DecodeRequest(c.code, c.body)
		if got := StatusOf(err); err == nil || got != c.want {
			t.Errorf("%s: status %v (%v), want %v", c.name, got, err, c.want)
		}
	}
}

// goldenOffsetTail is stream 0, topic 0, partition absent after a consumer kind.
func goldenOffsetTail() []byte {
	return []byte{1, 4, 1, 0, 0, 0, 1, 4, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0}
}

// Goal: request encoders refuse values that do not fit the wire instead of
// writing bad bytes, and leave the buffer as it was.
func TestEncodeRejects(t *testing.T) {
	long := bytes.Repeat([]byte{'a'}, NameBytesMax+1)
	cases := map[string]Request{
		"empty stream name":      CreateStream{},
		"long stream name":       CreateStream{Name: long},
		"bad identifier kind":    GetStream{Stream: Identifier{Kind: 9}},
		"long identifier":        GetStream{Stream: Identifier{Kind: IdentifierString, Name: long}},
		"compression 0":          CreateTopic{Stream: num(0), Name: text("t")},
		"user status 0":          CreateUser{Username: text("bob"), Password: text("secret")},
		"long password":          ChangePassword{User: num(1), NewPassword: long},
		"polling kind 0":         PollMessages{Consumer: Consumer{ConsumerSingle, num(1)}, Stream: num(0), Topic: num(0)},
		"absent partition id 4":  GetConsumerOffset{Consumer: Consumer{ConsumerSingle, num(1)}, Stream: num(0), Topic: num(0), Partition: OptionalPartition{ID: 4}},
		"empty messages key":     SendMessages{Stream: num(0), Topic: num(0), Partitioning: Partitioning{Kind: PartitioningMessagesKey}, Count: 1, Index: make([]byte, 16)},
		"snapshot compression 9": GetSnapshot{Compression: 9, Types: []byte{1}},
	}
	for name, req := range cases {
		prefix := []byte{0xaa}
		out, err := AppendRequest(prefix, req)
		if err == nil || !bytes.Equal(out, prefix) {
			t.Errorf("%s: err = %v, buffer %x", name, err, out)
		}
	}
	if _, err := AppendSendMessagesBody(nil, num(0), num(0), Partitioning{Kind: PartitioningBalanced}, nil); err == nil {
		t.Error("an empty batch was encoded")
	}
}

// Goal: the prologue decoders enforce the framing rules of §1.
func TestPrologues(t *testing.T) {
	short := []byte{3, 0, 0, 0, 1, 0, 0, 0}
	if _, err := DecodeRequestHeader(short); StatusOf(err) != StatusInvalidCommand || errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("length 3: %v", err)
	}
	big := binary.LittleEndian.AppendUint32(nil, ControlBodyBytesMax+5)
	big = binary.LittleEndian.AppendUint32(big, uint32(CodeCreateStream))
	if _, err := DecodeRequestHeader(big); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("oversize control body: %v", err)
	}
	big = binary.LittleEndian.AppendUint32(big[:0], ControlBodyBytesMax+5)
	big = binary.LittleEndian.AppendUint32(big, uint32(CodeSendMessages))
	if header, err := DecodeRequestHeader(big); err != nil || header.BodyBytes() != ControlBodyBytesMax+1 {
		t.Errorf("SendMessages above the control cap must pass: %+v %v", header, err)
	}
	if _, err := DecodeReplyHeader([]byte{3, 0, 0, 0, 1, 0, 0, 0}); err == nil {
		t.Error("an error reply with a body was accepted")
	}
	if _, size, err := SplitRequest([]byte{4, 0, 0}); err != nil || size != RequestPrologueBytes {
		t.Errorf("short buffer: size %d, %v", size, err)
	}
	if _, size, err := SplitReply([]byte{0, 0, 0, 0, 16, 0, 0, 0}); err != nil || size != 24 {
		t.Errorf("reply split: size %d, %v", size, err)
	}
}

func TestIdentifierString(t *testing.T) {
	if num(7).String() != "7" || named("orders").String() != `"orders"` {
		t.Fatalf("identifier strings: %s %s", num(7), named("orders"))
	}
}

// Goal: poll replies that do not tile or miscount are refused client-side.
func TestPollReplyRejects(t *testing.T) {
	good := goldenReplyBody(t, "PollMessages")
	miscount := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(miscount[12:], 2)
	cases := map[string][]byte{
		"count disagrees":     miscount,
		"cut inside a header": good[:PollReplyHeaderBytes+40],
		"cut inside a body":   good[:len(good)-1],
		"short head":          good[:10],
	}
	for name, body := range cases {
		var reply PollReply
		if err := reply.Decode(body); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Goal: errors render their position and permissions round-trip bare.
func TestErrorTextAndPermissions(t *testing.T) {
	truncated := &DecodeError{What: "stream_id", Offset: 3, Need: 4, Have: 1, Status: StatusInvalidCommand}
	if got := truncated.Error(); got != "classic: stream_id at offset 3: need 4 bytes, have 1" {
		t.Errorf("truncation text %q", got)
	}
	invalid := &DecodeError{What: "consumer", Offset: 0, Value: 3, Status: StatusInvalidCommand}
	if got := invalid.Error(); got != "classic: consumer at offset 0: invalid value 3 (InvalidCommand)" {
		t.Errorf("value text %q", got)
	}
	if StatusOf(ErrNameLength) != StatusInvalidCommand || Reject.String() != "reject" || NeedMore.String() != "need-more" {
		t.Error("fallback status or verdict names")
	}
	want := alicePermissions()
	raw := AppendPermissions(nil, &want)
	got, err := DecodePermissions(raw)
	if err != nil || len(raw) != want.EncodedSize() || got.Streams[0].Topics[0] != want.Streams[0].Topics[0] {
		t.Fatalf("permissions round trip: %+v, %v", got, err)
	}
	if _, err := DecodePermissions(append(raw, 0)); err == nil {
		t.Error("trailing permission bytes accepted")
	}
	header := AppendRequestHeader(nil, CodeGetStream, 6)
	if parsed, err := DecodeRequestHeader(header); err != nil || parsed.Code != CodeGetStream || parsed.BodyBytes() != 6 {
		t.Errorf("request header round trip: %+v, %v", parsed, err)
	}
}
