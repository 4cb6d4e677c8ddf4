package classic

import (
	"bytes"
	"testing"

	"github.com/zeebo/xxh3"
)

// Goal: the checksum is XXH3-64 with the reference values of §7.3.
func TestChecksumReference(t *testing.T) {
	if got := xxh3.Hash(nil); got != 0x2d06800538d394c2 {
		t.Fatalf(`XXH3-64("") = %#x`, got)
	}
	if got := xxh3.Hash([]byte("iggy")); got != 0xb421037ed388f177 {
		t.Fatalf(`XXH3-64("iggy") = %#x`, got)
	}
	raw := AppendMessage(nil, &MessageFields{Payload: text("iggy")})
	if !ChecksumValid(raw) || Checksum(raw) != xxh3.Hash(raw[8:]) {
		t.Fatal("AppendMessage does not seal its message")
	}
	raw[66] ^= 1
	if ChecksumValid(raw) {
		t.Fatal("a flipped payload bit kept the checksum valid")
	}
}

// Goal: stamping what a producer sent gives, byte for byte, what the server
// serves on poll. Method: stamp the captured partition-2 SendMessages
// messages with offsets 100..102 and the append time, and compare them with
// the captured PollMessages reply, which holds the same three messages.
func TestStampMatchesPollVector(t *testing.T) {
	body := append([]byte(nil), goldenBody(t, "SendMessages (partition id 2, 3 messages with user headers)")...)
	var req SendMessages
	if _, err := req.Decode(body); err != nil {
		t.Fatal(err)
	}
	var stamped []byte
	for i := 0; i < int(req.Count); i++ {
		raw := req.MessageRaw(i)
		Stamp(raw, 100+uint64(i), serverAppend, UUIDv4([16]byte{0xee}))
		stamped = append(stamped, raw...)
	}
	reply := goldenReplyBody(t, "PollMessages")
	if !bytes.Equal(stamped, reply[PollReplyHeaderBytes:]) {
		t.Fatalf("stamped messages\n %x\npoll reply messages\n %x", stamped, reply[PollReplyHeaderBytes:])
	}
}

// Goal: a zero id is replaced by the server's UUIDv4, a producer id is kept.
func TestStampIDs(t *testing.T) {
	body := append([]byte(nil), goldenBody(t, "SendMessages (balanced, 1 message, id 0)")...)
	var req SendMessages
	if _, err := req.Decode(body); err != nil {
		t.Fatal(err)
	}
	fresh := UUIDv4([16]byte{0x5f, 0x0e, 0x1c, 0x2a, 0x9b, 0x3d, 0xfe, 0x8f, 0xff})
	if fresh[6]>>4 != 4 || fresh[8]>>6 != 2 {
		t.Fatalf("UUIDv4 version/variant bits wrong: %x", fresh)
	}
	Stamp(req.MessageRaw(0), 0, serverAppend, fresh)
	if got := req.Message(0).Header; got.ID != fresh || got.Timestamp != serverAppend || !ChecksumValid(req.MessageRaw(0)) {
		t.Fatalf("stamped header = %+v", got)
	}
	Stamp(req.MessageRaw(0), 1, serverAppend, UUIDv4([16]byte{9}))
	if req.Message(0).Header.ID != fresh {
		t.Fatal("a non-zero id was replaced")
	}
}

// Goal: classic messages survive the trip through 0.9 frame values and back
// with id, offset, timestamps, payload and user headers intact.
func TestConvertRoundTrip(t *testing.T) {
	body := append([]byte(nil), goldenBody(t, "SendMessages (partition id 2, 3 messages with user headers)")...)
	var req SendMessages
	if _, err := req.Decode(body); err != nil {
		t.Fatal(err)
	}
	origin := req.BatchOrigin()
	if origin != producerOrigin {
		t.Fatalf("batch origin %d", origin)
	}
	batch := BatchFields{BaseOffset: 100, BaseTimestamp: serverAppend, OriginTimestamp: origin}
	for i := 0; i < int(req.Count); i++ {
		message := req.Message(i)
		fields := message.Fields()
		frame, err := ToFrame(&fields, uint32(i), origin)
		if err != nil || frame.OffsetDelta != uint32(i) || frame.TimestampDelta != uint32(1000*i) {
			t.Fatalf("message %d frame = %+v, %v", i, frame, err)
		}
		back := FromFrame(frame, batch, fields.Payload, fields.UserHeaders)
		if back.ID != fields.ID || back.Offset != 100+uint64(i) || back.Timestamp != serverAppend ||
			back.OriginTimestamp != fields.OriginTimestamp || !bytes.Equal(back.Payload, fields.Payload) ||
			!bytes.Equal(back.UserHeaders, fields.UserHeaders) {
			t.Fatalf("message %d came back as %+v", i, back)
		}
	}
	late := MessageFields{OriginTimestamp: origin + 1<<32}
	if _, err := ToFrame(&late, 0, origin); err == nil {
		t.Fatal("a timestamp delta beyond u32 was accepted")
	}
	early := MessageFields{OriginTimestamp: origin - 1}
	if _, err := ToFrame(&early, 0, origin); err == nil {
		t.Fatal("an origin before the batch origin was accepted")
	}
}
