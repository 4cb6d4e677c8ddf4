package classic

import (
	"testing"
)

// Goal: the hot paths decode without allocating (house rule: 0 allocations
// on the steady path). Method: testing.AllocsPerRun over the golden frames,
// including walking every message view, and over encoding into a buffer
// that already has room.
func TestDecodeAllocations(t *testing.T) {
	send := goldenBody(t, "SendMessages (partition id 2, 3 messages with user headers)")
	poll := goldenBody(t, "PollMessages (consumer group, no partition, next, auto-commit)")
	named := goldenBody(t, "SendMessages (messages key, named stream/topic)")
	reply := goldenReplyBody(t, "PollMessages")
	var sink uint64
	cases := map[string]func(){
		"SendMessages": func() {
			var req SendMessages
			if _, err := req.Decode(send); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < int(req.Count); i++ {
				message := req.Message(i)
				sink += uint64(len(message.Payload)) + message.Header.OriginTimestamp
			}
		},
		"SendMessages named": func() {
			var req SendMessages
			if _, err := req.Decode(named); err != nil {
				t.Fatal(err)
			}
			sink += uint64(len(req.Stream.Name))
		},
		"PollMessages": func() {
			var req PollMessages
			if _, err := req.Decode(poll); err != nil {
				t.Fatal(err)
			}
			sink += uint64(req.Count)
		},
		"PollReply": func() {
			var decoded PollReply
			if err := decoded.Decode(reply); err != nil {
				t.Fatal(err)
			}
			iterator := decoded.Messages()
			for message, ok := iterator.Next(); ok; message, ok = iterator.Next() {
				sink += message.Header.Offset + uint64(len(message.UserHeaders))
				headers := UserHeaderEntries(message.UserHeaders)
				for entry, ok := headers.Next(); ok; entry, ok = headers.Next() {
					sink += uint64(len(entry.Value))
				}
			}
		},
	}
	for name, run := range cases {
		if allocs := testing.AllocsPerRun(100, run); allocs != 0 {
			t.Errorf("%s decode: %v allocations per run, want 0", name, allocs)
		}
	}
	if sink == 0 {
		t.Fatal("decoders produced nothing")
	}
}

// Goal: building a poll reply and stamping received messages allocate
// nothing when the buffer has room.
func TestEncodeAllocations(t *testing.T) {
	stored := storedOrders()
	buffer := make([]byte, 0, 4096)
	send := append([]byte(nil), goldenBody(t, "SendMessages (partition id 2, 3 messages with user headers)")...)
	var req SendMessages
	if _, err := req.Decode(send); err != nil {
		t.Fatal(err)
	}
	id := UUIDv4([16]byte{1, 2, 3})
	allocs := testing.AllocsPerRun(100, func() {
		out, start := BeginReply(buffer[:0])
		out = AppendPollReplyHeader(out, 2, 102, uint32(len(stored)))
		for i := range stored {
			out = AppendMessage(out, &stored[i])
		}
		FinishReply(out, start)
		for i := 0; i < int(req.Count); i++ {
			Stamp(req.MessageRaw(i), uint64(100+i), serverAppend, id)
		}
	})
	if allocs != 0 {
		t.Fatalf("encode: %v allocations per run, want 0", allocs)
	}
}

func goldenBody(t testing.TB, command string) []byte {
	t.Helper()
	for _, v := range loadVectors[requestVector](t, "requests.json", 63) {
		if v.Command == command {
			return unhex(t, v.PayloadHex)
		}
	}
	t.Fatalf("no request vector %q", command)
	return nil
}

func goldenReplyBody(t testing.TB, command string) []byte {
	t.Helper()
	for _, v := range loadVectors[responseVector](t, "responses.json", 64) {
		if v.Command == command {
			return unhex(t, v.PayloadHex)
		}
	}
	t.Fatalf("no reply vector %q", command)
	return nil
}

func BenchmarkDecodeSendMessages(b *testing.B) {
	body := goldenBody(b, "SendMessages (partition id 2, 3 messages with user headers)")
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var req SendMessages
		if _, err := req.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodePollReply(b *testing.B) {
	body := goldenReplyBody(b, "PollMessages")
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var reply PollReply
		if err := reply.Decode(body); err != nil {
			b.Fatal(err)
		}
		iterator := reply.Messages()
		for _, ok := iterator.Next(); ok; _, ok = iterator.Next() {
		}
	}
}

// BenchmarkAppendPollReply measures serving 100 stored 1 KiB messages:
// header rebuild plus one XXH3-64 per message.
func BenchmarkAppendPollReply(b *testing.B) {
	payload := make([]byte, 1024)
	stored := make([]MessageFields, 100)
	for i := range stored {
		stored[i] = MessageFields{ID: UUIDv4([16]byte{byte(i)}), Offset: uint64(i), Timestamp: serverAppend,
			OriginTimestamp: producerOrigin, Payload: payload}
	}
	buffer := make([]byte, 0, 128*1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(stored) * (MessageHeaderBytes + len(payload))))
	for b.Loop() {
		out, start := BeginReply(buffer[:0])
		out = AppendPollReplyHeader(out, 0, 99, uint32(len(stored)))
		for i := range stored {
			out = AppendMessage(out, &stored[i])
		}
		buffer = FinishReply(out, start)
	}
}

func BenchmarkDetect(b *testing.B) {
	prologue := []byte{0x22, 0, 0, 0, 0x26, 0, 0, 0}
	b.ReportAllocs()
	for b.Loop() {
		if Detect(prologue).Verdict != Classic {
			b.Fatal("LoginUser prologue not classic")
		}
	}
}

// bigSendBody is 1000 messages of 1 KiB with a small user-header block.
func bigSendBody(b *testing.B) []byte {
	messages := make([]OutgoingMessage, 1000)
	payload := make([]byte, 1024)
	headers := tlv(2, text("k"), 2, text("v"))
	for i := range messages {
		messages[i] = OutgoingMessage{OriginTimestamp: producerOrigin + uint64(i), Payload: payload, UserHeaders: headers}
	}
	body, err := AppendSendMessagesBody(nil, num(0), num(0), Partitioning{Kind: PartitioningBalanced}, messages)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// BenchmarkDecodeSendMessages1000 validates a 1000-message batch (index walk
// and every span) without touching payload bytes.
func BenchmarkDecodeSendMessages1000(b *testing.B) {
	body := bigSendBody(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var req SendMessages
		if _, err := req.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStampSendMessages1000 is the server's admission work per batch:
// stamp id, offset and timestamp in place and checksum every message.
func BenchmarkStampSendMessages1000(b *testing.B) {
	body := bigSendBody(b)
	var req SendMessages
	if _, err := req.Decode(body); err != nil {
		b.Fatal(err)
	}
	id := UUIDv4([16]byte{7})
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		for i := 0; i < int(req.Count); i++ {
			Stamp(req.MessageRaw(i), uint64(i), serverAppend, id)
		}
	}
}
