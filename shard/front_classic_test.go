package shard

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/whippetio/whippet/wire"
	"github.com/whippetio/whippet/wire/classic"
)

// TestClassicFrameBytes: a classic frame is sized from its 8-byte
// prologue; a body the server will not read (above the command's cap or
// the frame limit) leaves the prologue alone, which serveClassic answers
// with 3 before closing (PROTOCOL-0.8.md §1).
func TestClassicFrameBytes(t *testing.T) {
	prologue := func(length uint32, code classic.Code) []byte {
		return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, length), uint32(code))
	}
	for _, row := range []struct {
		name string
		head []byte
		want int
	}{
		{"partial prologue", prologue(4, classic.CodePing)[:7], 0},
		{"ping", prologue(4, classic.CodePing), 8},
		{"create stream, name of 4", prologue(4+5, classic.CodeCreateStream), 13},
		{"length below 4 reads the code only", prologue(2, classic.CodePing), 8},
		{"control body above 10 MiB", prologue(4+classic.ControlBodyBytesMax+1, classic.CodeCreateStream), 8},
		{"send above the frame limit", prologue(4+2<<20, classic.CodeSendMessages), 8},
		{"send within the frame limit", prologue(4+1<<20, classic.CodeSendMessages), 8 + 1<<20},
	} {
		if got := classicFrameBytes(row.head, 2<<20); got != row.want {
			t.Errorf("%s: %d bytes, want %d", row.name, got, row.want)
		}
	}
}

// TestClassicErrorMapping: 0.9 refusals become what a 0.8 client expects
// (PROTOCOL-0.8.md §6.3, §8).
func TestClassicErrorMapping(t *testing.T) {
	for _, row := range []struct {
		code   classic.Code
		status classic.Status
		want   []byte
	}{
		{classic.CodeGetStream, classic.StatusStreamIdNotFound, []byte{0, 0, 0, 0, 0, 0, 0, 0}},
		{classic.CodeGetConsumerOffset, classic.StatusPartitionNotFound, []byte{0, 0, 0, 0, 0, 0, 0, 0}},
		{classic.CodeGetClient, classic.StatusClientNotFound, []byte{0, 0, 0, 0, 0, 0, 0, 0}},
		{classic.CodeGetTopics, classic.StatusStreamIdNotFound, []byte{0, 0, 0, 0, 0, 0, 0, 0}},
		{classic.CodeCreateStream, classic.StatusStreamNameAlreadyExists, []byte{0xf4, 0x03, 0, 0, 0, 0, 0, 0}},
		{classic.CodeSendMessages, classic.StatusStreamIdNotFound, []byte{0xf1, 0x03, 0, 0, 0, 0, 0, 0}},
		{classic.CodeSendMessages, classic.Status(37), []byte{1, 0, 0, 0, 0, 0, 0, 0}}, // a code 0.8 lacks
	} {
		if got := classicError(row.code, row.status); !bytes.Equal(got, row.want) {
			t.Errorf("%v with %v: %x, want %x", row.code, row.status, got, row.want)
		}
	}
}

// TestClassicSendTranslation: classic messages become one 0.9 batch with
// the same ids, origin timestamps, payloads and user headers; a zero id
// is drawn as a UUIDv4.
func TestClassicSendTranslation(t *testing.T) {
	headers, err := classic.AppendUserHeader(nil, classic.HeaderEntry{KeyKind: classic.HeaderString, Key: []byte("k"),
		ValueKind: classic.HeaderString, Value: []byte("v")})
	if err != nil {
		t.Fatal(err)
	}
	sent := []classic.OutgoingMessage{
		{ID: classic.MessageID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, OriginTimestamp: 1_000_000,
			Payload: []byte("a"), UserHeaders: headers},
		{OriginTimestamp: 1_000_500, Payload: []byte("bb")},
	}
	body, err := classic.AppendSendMessagesBody(nil, classic.NumericIdentifier(1), classic.NamedIdentifier("t"),
		classic.Partitioning{Kind: classic.PartitioningPartitionID, PartitionID: 3}, sent)
	if err != nil {
		t.Fatal(err)
	}
	request, _, err := classic.DecodeRequest(classic.CodeSendMessages, body)
	if err != nil {
		t.Fatal(err)
	}
	f, s := &front{}, &session{classic: &classicConn{}}
	code, translated, status := f.classicSend(s, nil, request.(*classic.SendMessages))
	send, ok := translated.(*wire.SendMessages)
	if code != wire.CodeSendMessages || status != classic.StatusOK || !ok {
		t.Fatalf("translation: code %v status %v body %T", code, status, translated)
	}
	if len(s.classic.prelude) != 0 {
		t.Fatalf("a batch within u32 µs of origin time is one record, not %d", len(s.classic.prelude)+1)
	}
	if send.Stream.ID != 1 || string(send.Topic.Name) != "t" || send.Partitioning.PartitionID != 3 ||
		send.Partitioning.Kind != wire.PartitioningPartitionID || send.MessagesCount != 2 {
		t.Fatalf("targets: %+v", send)
	}
	if _, err := wire.ValidateBatch(send.Batch); err != nil {
		t.Fatalf("the batch is not a valid 0.9 batch: %v", err)
	}
	messages := wire.Messages(send.Batch)
	for i, want := range sent {
		message, ok := messages.Next()
		if !ok {
			t.Fatalf("batch ends at %d", i)
		}
		id := classicMessageID(message.Header.ID)
		switch {
		case want.ID != (classic.MessageID{}) && id != want.ID:
			t.Errorf("message %d id %x, want %x", i, id, want.ID)
		case want.ID == (classic.MessageID{}) && id[6]>>4 != 4:
			t.Errorf("message %d drawn id %x is not a UUIDv4", i, id)
		}
		if message.OriginTimestamp != want.OriginTimestamp || !bytes.Equal(message.Payload, want.Payload) ||
			!bytes.Equal(message.UserHeaders, want.UserHeaders) {
			t.Errorf("message %d: %+v, want %+v", i, message, want)
		}
	}
}

// TestClassicPolledTranslation: a stored 0.9 batch comes back as 64-byte
// header messages with offset = base + delta, the batch's append time, the
// origin time, and a valid classic checksum (PROTOCOL-0.8.md §12.3).
func TestClassicPolledTranslation(t *testing.T) {
	outgoing := []wire.OutgoingMessage{
		{ID: wire.Uint128{Lo: 7, Hi: 9}, OriginTimestamp: 500, Payload: []byte("x")},
		{ID: wire.Uint128{Lo: 8}, OriginTimestamp: 700, Payload: []byte("yy"), UserHeaders: []byte{}},
	}
	batch := make([]byte, wire.BatchBytes(outgoing))
	wire.EncodeBatch(batch, outgoing)
	wire.StampBatch(batch, 4, 40, 123_456)
	reply := classicPolled(&wire.PolledMessages{PartitionID: 4, CurrentOffset: 41, MessagesCount: 2, Records: batch})
	polled := reply.(*classic.PollReply)
	encoded := polled.AppendBody(nil)
	var decoded classic.PollReply
	if err := decoded.Decode(encoded); err != nil || decoded.Count != 2 || decoded.PartitionID != 4 ||
		decoded.CurrentOffset != 41 {
		t.Fatalf("poll reply %+v: %v", decoded, err)
	}
	iterator := decoded.Messages()
	for i, want := range outgoing {
		message, ok := iterator.Next()
		if !ok {
			t.Fatalf("reply ends at %d", i)
		}
		header := message.Header
		if !classic.ChecksumValid(message.Raw) || header.ID != classicMessageID(want.ID) ||
			header.Offset != 40+uint64(i) || header.Timestamp != 123_456 || header.OriginTimestamp != want.OriginTimestamp ||
			!bytes.Equal(message.Payload, want.Payload) {
			t.Errorf("message %d: %+v", i, header)
		}
	}
	fence := classicPolled(&wire.PolledMessages{PartitionID: pollNoPartition, CurrentOffset: 9}).(*classic.PollReply)
	if fence.PartitionID != 0 || fence.CurrentOffset != 0 || fence.Count != 0 {
		t.Fatalf("the 0.9 group fence must read as the 0.8 empty poll: %+v", fence)
	}
}

// TestClassicStatsSemver: 0.9 packs the version in 10-bit fields, 0.8
// writes it in decimal.
func TestClassicStatsSemver(t *testing.T) {
	stats := classicStats(&wire.Stats{ServerSemver: wire.PackVersion(0, 9, 12), ServerVersion: "0.9.12",
		CacheMetrics: []wire.CacheMetric{{StreamID: 1, Hits: 3}}})
	if stats.ServerSemver != 9012 || stats.ServerVersion != "0.9.12" || len(stats.CacheMetrics) != 1 ||
		stats.CacheMetrics[0].Hits != 3 {
		t.Fatalf("stats %+v", stats)
	}
}

// TestClassicSendSplit: a classic batch whose origin timestamps span more
// than a 0.9 record can (u32 µs) becomes several records, in order, to one
// partition; the leading ones run as preludes.
func TestClassicSendSplit(t *testing.T) {
	const hour = 3_600_000_000
	sent := []classic.OutgoingMessage{
		{ID: classic.MessageID{1}, OriginTimestamp: 10 * hour, Payload: []byte("a")},
		{ID: classic.MessageID{2}, OriginTimestamp: 10*hour + 1, Payload: []byte("b")},
		{ID: classic.MessageID{3}, OriginTimestamp: 12 * hour, Payload: []byte("c")},
		{ID: classic.MessageID{4}, OriginTimestamp: 11 * hour, Payload: []byte("d")},
		{ID: classic.MessageID{5}, OriginTimestamp: 1, Payload: []byte("e")},
	}
	body, err := classic.AppendSendMessagesBody(nil, classic.NumericIdentifier(0), classic.NumericIdentifier(0),
		classic.Partitioning{Kind: classic.PartitioningPartitionID, PartitionID: 1}, sent)
	if err != nil {
		t.Fatal(err)
	}
	request, _, err := classic.DecodeRequest(classic.CodeSendMessages, body)
	if err != nil {
		t.Fatal(err)
	}
	f, s := &front{}, &session{classic: &classicConn{}}
	_, last, status := f.classicSend(s, nil, request.(*classic.SendMessages))
	if status != classic.StatusOK {
		t.Fatalf("status %v", status)
	}
	var records []*wire.SendMessages
	for _, prelude := range s.classic.prelude {
		records = append(records, prelude.body.(*wire.SendMessages))
	}
	records = append(records, last.(*wire.SendMessages))
	var payloads string
	var counts []uint32
	for _, record := range records {
		if record.Partitioning.PartitionID != 1 {
			t.Fatalf("a record goes to partition %d", record.Partitioning.PartitionID)
		}
		if _, err := wire.ValidateBatch(record.Batch); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, record.MessagesCount)
		messages := wire.Messages(record.Batch)
		for {
			message, ok := messages.Next()
			if !ok {
				break
			}
			payloads += string(message.Payload)
		}
	}
	if payloads != "abcde" || len(counts) != 3 || counts[0] != 2 || counts[1] != 2 || counts[2] != 1 {
		t.Fatalf("records %v carry %q; want [2 2 1] carrying abcde (2 h exceeds u32 µs, 1 h does not)", counts, payloads)
	}
}
