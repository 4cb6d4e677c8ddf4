package wire

import (
	"bytes"
	"reflect"
	"testing"
)

// TestGoldenReplies decodes every golden reply frame the way a client does,
// checks header, error channel and typed payload against the vector, and
// encodes the same reply as a server would into the identical frame.
func TestGoldenReplies(t *testing.T) {
	var vectors []replyVector
	loadJSON(t, "responses.json", &vectors)
	if len(vectors) != goldenReplyCount {
		t.Fatalf("responses.json has %d vectors, want %d", len(vectors), goldenReplyCount)
	}
	expected := expectedReplies()
	checked, typed := 0, 0
	for _, vector := range vectors {
		t.Run(vector.Command, func(t *testing.T) {
			if checkGoldenReply(t, vector, expected) {
				typed++
			}
			checked++
		})
	}
	if checked != goldenReplyCount {
		t.Fatalf("checked %d reply vectors, want %d", checked, goldenReplyCount)
	}
	if typed != len(expected)+3 { // + both polls and the snapshot, checked without the table
		t.Fatalf("compared %d typed payloads, want %d", typed, len(expected)+3)
	}
}

// checkGoldenReply reports whether it compared a typed payload.
func checkGoldenReply(t *testing.T, vector replyVector, expected map[string]Decoder) bool {
	frame := unhex(t, vector.Frame)
	reply, consumed, err := DecodeReply(frame)
	if err != nil {
		t.Fatalf("DecodeReply: %v", err)
	}
	if consumed != len(frame) {
		t.Fatalf("consumed %d of %d", consumed, len(frame))
	}
	checkReplyError(t, vector, &reply)
	if reply.Command == CommandEviction {
		checkEviction(t, vector, &reply.Eviction, frame)
		return false
	}
	checkReplyHeader(t, vector, &reply.Header)
	if !bytes.Equal(reply.Body, unhex(t, vector.Body)) || !bytes.Equal(reply.Payload, unhex(t, vector.Payload)) {
		t.Fatalf("body %x payload %x, want %s / %s", reply.Body, reply.Payload, vector.Body, vector.Payload)
	}
	encoded := make([]byte, FrameBytesMax>>10)
	var size int
	var payload Decoder
	switch {
	case reply.Header.Status != StatusOK:
		size = EncodeStatusReply(encoded, reply.Header, reply.Header.Status)
	case reply.Result != StatusOK:
		size = EncodeResultReply(encoded, reply.Header, reply.Result)
	default:
		payload = decodeGoldenPayload(t, vector, reply.Payload, expected)
		var body Body
		if payload != nil {
			body = payload
		}
		size = EncodeReply(encoded, reply.Header, body)
	}
	if !bytes.Equal(encoded[:size], frame) {
		t.Fatalf("encoded reply\n%x\nwant\n%x", encoded[:size], frame)
	}
	return payload != nil
}

func decodeGoldenPayload(t *testing.T, vector replyVector, payload []byte, expected map[string]Decoder) Decoder {
	if len(payload) == 0 {
		if expected[vector.Command] != nil {
			t.Fatalf("empty payload, want %#v", expected[vector.Command])
		}
		return nil
	}
	decoded, ok := NewReplyPayload(Code(vector.Code))
	if !ok {
		t.Fatalf("NewReplyPayload(%d) unknown", vector.Code)
	}
	if err := DecodeAll(decoded, payload); err != nil {
		t.Fatalf("decode payload: %v", err)
	}
	switch Code(vector.Code) {
	case CodePollMessages:
		checkGoldenPoll(t, vector, decoded.(*PolledMessages))
		return decoded
	case CodeGetSnapshot:
		if raw := *decoded.(*Raw); !bytes.Equal(raw, payload) || string(raw[:4]) != "PK\x05\x06" {
			t.Fatalf("snapshot %x is not the empty ZIP", raw)
		}
		return decoded
	}
	want := expected[vector.Command]
	if want == nil {
		t.Fatalf("no expected value for %q", vector.Command)
	}
	if !reflect.DeepEqual(decoded, want) {
		t.Fatalf("decoded payload\n%#v\nwant\n%#v", decoded, want)
	}
	if encoded := make([]byte, want.EncodedSize()); want.Encode(encoded) != len(payload) ||
		!bytes.Equal(encoded, payload) {
		t.Fatalf("encoded expected value\n%x\nwant\n%x", encoded, payload)
	}
	return decoded
}

func checkGoldenPoll(t *testing.T, vector replyVector, polled *PolledMessages) {
	wantCount := uint32(leadingNumber(t, vector.Fields["messages_count"]))
	if polled.PartitionID != 2 || polled.CurrentOffset != 102 || polled.MessagesCount != wantCount {
		t.Fatalf("poll prefix %+v", polled)
	}
	offset := uint64(100)
	if wantCount == 1 {
		offset = 101
	}
	iterator := polled.Messages()
	for range wantCount {
		message, ok := iterator.Next()
		if !ok || message.Offset != offset {
			t.Fatalf("polled offset %d (ok %v), want %d", message.Offset, ok, offset)
		}
		offset++
	}
	if _, ok := iterator.Next(); ok {
		t.Fatal("more polled messages than messages_count")
	}
}

func checkReplyError(t *testing.T, vector replyVector, reply *Reply) {
	err := reply.Err()
	if vector.ExpectedError == "" {
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		return
	}
	if got, want := StatusOf(err), expectedErrorCode(t, vector.ExpectedError); got != want {
		t.Fatalf("error status %d (%v), want %d", got, err, want)
	}
}

func checkReplyHeader(t *testing.T, vector replyVector, header *ReplyHeader) {
	want := vector.Header
	checks := []struct {
		name string
		got  uint64
	}{
		{"size", uint64(header.Size)},
		{"op@176", header.Op},
		{"commit@184", header.Commit},
		{"request@200", header.Request},
		{"operation@208", uint64(header.Operation)},
		{"status@216", uint64(header.Status)},
	}
	for _, check := range checks {
		if check.got != leadingNumber(t, want[check.name]) {
			t.Errorf("%s = %d, want %v", check.name, check.got, want[check.name])
		}
	}
	if header.Client != parseClient(t, want["client@160"].(string)) {
		t.Errorf("client = %+v, want %v", header.Client, want["client@160"])
	}
	if leadingNumber(t, want["command"]) != uint64(CommandReply) {
		t.Errorf("command %v", want["command"])
	}
	if code := Code(vector.Code); header.Status == StatusOK && !code.AcceptsReplyOperation(header.Operation) {
		t.Errorf("operation %d does not answer %s", header.Operation, code)
	}
}

func checkEviction(t *testing.T, vector replyVector, eviction *EvictionHeader, frame []byte) {
	want := vector.Header
	if uint64(eviction.Reason) != leadingNumber(t, want["reason@255"]) ||
		uint64(eviction.VersionMax) != leadingNumber(t, want["server_protocol_version@144"]) ||
		uint64(eviction.VersionMin) != leadingNumber(t, want["server_protocol_version_min@148"]) ||
		eviction.Client != parseClient(t, want["client@128"].(string)) {
		t.Fatalf("eviction %+v, want %v", eviction, want)
	}
	encoded := make([]byte, HeaderBytes)
	eviction.Encode(encoded)
	if !bytes.Equal(encoded, frame) {
		t.Fatalf("encoded eviction\n%x\nwant\n%x", encoded, frame)
	}
}
