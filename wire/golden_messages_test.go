package wire

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"testing"
)

type batchMessageVector struct {
	Checksum        string `json:"checksum@0"`
	Frame           string `json:"frame_hex"`
	ID              string `json:"id_as_u128_le"`
	OffsetDelta     uint32 `json:"offset_delta@24"`
	TimestampDelta  uint32 `json:"timestamp_delta@28"`
	Offset          uint64 `json:"absolute_offset"`
	OriginTimestamp uint64 `json:"absolute_origin_timestamp"`
	Payload         string `json:"payload_utf8"`
	UserHeaders     string `json:"user_headers_hex"`
}

type batchVectors struct {
	Hashes struct {
		Keys []struct {
			Key     string `json:"key_utf8"`
			Of3     uint32 `json:"partition_of_3"`
			Of10    uint32 `json:"partition_of_10"`
			XXH32   string `json:"xxh32_seed0"`
			Ignored any    `json:"-"`
		} `json:"message_key_partitioning"`
		XXH3 []struct {
			Input string `json:"input_utf8"`
			Hash  string `json:"xxh3_64_seed0"`
		} `json:"xxh3_64"`
	} `json:"hash_reference"`
	Send struct {
		Frame       string `json:"frame_hex"`
		Payload     string `json:"payload_hex"`
		Metadata    string `json:"metadata_hex"`
		ReplyBody   string `json:"reply_body_hex"`
		ReplyFrame  string `json:"reply_frame_hex"`
		BatchHeader struct {
			Checksum        string `json:"batch_checksum@40"`
			Length          uint64 `json:"batch_length@32"`
			OriginTimestamp uint64 `json:"origin_timestamp@24"`
			MessageCount    uint32 `json:"message_count@48"`
		} `json:"batch_header"`
		BatchOffset int                  `json:"batch_offset_in_payload"`
		Messages    []batchMessageVector `json:"messages"`
	} `json:"send_messages"`
	Poll struct {
		Payload       string `json:"payload_hex"`
		ReplyFrame    string `json:"reply_frame_hex"`
		RequestFrame  string `json:"request_frame_hex"`
		SlicedPayload string `json:"sliced_payload_hex"`
		Record        struct {
			BaseOffset    uint64 `json:"base_offset@8"`
			BaseTimestamp uint64 `json:"base_timestamp@16"`
			Checksum      string `json:"batch_checksum@40"`
			PartitionID   uint64 `json:"partition_id@0"`
		} `json:"record_header"`
		Messages []batchMessageVector `json:"messages"`
	} `json:"poll_messages"`
}

func parseHex64(t testing.TB, text string) uint64 {
	t.Helper()
	value, err := strconv.ParseUint(text, 0, 64)
	if err != nil {
		t.Fatal(err)
	}
	return value
}

func outgoingFromVectors(t testing.TB, messages []batchMessageVector) []OutgoingMessage {
	t.Helper()
	outgoing := make([]OutgoingMessage, len(messages))
	for i, message := range messages {
		id, err := strconv.ParseUint(message.ID, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		outgoing[i] = OutgoingMessage{ID: Uint128{Lo: id}, OriginTimestamp: message.OriginTimestamp,
			Payload: []byte(message.Payload), UserHeaders: unhex(t, message.UserHeaders)}
	}
	return outgoing
}

// expectedSendMessages builds the golden SendMessages body with the
// producer-side encoder, from the dissected fields of messages_batch.json.
func expectedSendMessages(t testing.TB) *SendMessages {
	var vectors batchVectors
	loadJSON(t, "messages_batch.json", &vectors)
	outgoing := &OutgoingMessages{Stream: stream1, Topic: topicOrders, Partitioning: PartitionID(2),
		Messages: outgoingFromVectors(t, vectors.Send.Messages)}
	if err := CheckOutgoing(outgoing.Messages); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, outgoing.EncodedSize())
	outgoing.Encode(body)
	return &SendMessages{Stream: stream1, Topic: topicOrders, Partitioning: PartitionID(2), MessagesCount: 3,
		Batch: body[len(body)-BatchBytes(outgoing.Messages):]}
}

// TestGoldenMessageBatch checks the batch vectors end to end: the producer
// encoding, admission, per-frame fields and checksums, server stamping,
// the poll reply built from stored bytes, the sliced record, and the hash
// reference values.
func TestGoldenMessageBatch(t *testing.T) {
	var vectors batchVectors
	loadJSON(t, "messages_batch.json", &vectors)
	sendPayload := unhex(t, vectors.Send.Payload)
	outgoing := &OutgoingMessages{Stream: stream1, Topic: topicOrders, Partitioning: PartitionID(2),
		Messages: outgoingFromVectors(t, vectors.Send.Messages)}
	frame := make([]byte, RequestBytes(outgoing))
	header := RequestHeader{Client: Uint128{Lo: 0x0807060504030201, Hi: 0x100f0e0d0c0b0a09}, Request: 11,
		Operation: OperationSendMessages, Session: 1}
	EncodeRequest(frame, header, outgoing)
	if !bytes.Equal(frame, unhex(t, vectors.Send.Frame)) {
		t.Fatalf("producer frame\n%x\nwant\n%s", frame, vectors.Send.Frame)
	}
	var send SendMessages
	if err := DecodeAll(&send, sendPayload); err != nil {
		t.Fatal(err)
	}
	batch := sendPayload[vectors.Send.BatchOffset:]
	if !bytes.Equal(send.Batch, batch) || &send.Batch[0] != &batch[0] {
		t.Fatal("decoded batch is not a view of the request bytes")
	}
	checkAdmission(t, batch, &vectors)
	stored := append([]byte(nil), batch...)
	StampBatch(stored, vectors.Poll.Record.PartitionID, vectors.Poll.Record.BaseOffset,
		vectors.Poll.Record.BaseTimestamp)
	pollPayload := unhex(t, vectors.Poll.Payload)
	if !bytes.Equal(stored, pollPayload[PollPrefixBytes:]) {
		t.Fatalf("stamped batch\n%x\nwant\n%x", stored, pollPayload[PollPrefixBytes:])
	}
	if got := BatchChecksum(stored); got != parseHex64(t, vectors.Poll.Record.Checksum) {
		t.Fatalf("stamped checksum %#x, want %s", got, vectors.Poll.Record.Checksum)
	}
	checkPollReplies(t, stored, &vectors)
	checkHashReferences(t, &vectors)
	checkBatchFrames(t, &vectors)
}

// checkBatchFrames covers the remaining hex of messages_batch.json: each
// message frame, the metadata section, the poll request and both reply
// frames, built by the encoders a client and a server use.
func checkBatchFrames(t *testing.T, vectors *batchVectors) {
	if len(vectors.Send.Messages) != 3 || len(vectors.Poll.Messages) != 3 ||
		len(vectors.Hashes.Keys) != 3 || len(vectors.Hashes.XXH3) != 3 {
		t.Fatal("messages_batch.json changed shape: update the test")
	}
	batch := expectedSendMessages(t).Batch
	position := BatchHeaderBytes
	for i, message := range vectors.Send.Messages {
		frame := unhex(t, message.Frame)
		if !bytes.Equal(batch[position:position+len(frame)], frame) ||
			!bytes.Equal(frame, unhex(t, vectors.Poll.Messages[i].Frame)) {
			t.Fatalf("message frame %d differs", i)
		}
		position += len(frame)
	}
	payload := unhex(t, vectors.Send.Payload)
	if !bytes.Equal(payload[4:4+binary.LittleEndian.Uint32(payload)], unhex(t, vectors.Send.Metadata)) {
		t.Fatal("metadata section differs")
	}
	client := Uint128{Lo: 0x0807060504030201, Hi: 0x100f0e0d0c0b0a09}
	poll := PollMessages{Consumer: Consumer{Kind: ConsumerSingle, ID: NumericID(7)}, Stream: stream1,
		Topic: topicOrders, Partition: PartitionOf(2), Strategy: Strategy{Kind: StrategyOffset, Value: 100}, Count: 10}
	request := make([]byte, RequestBytes(&poll))
	EncodeRequest(request, RequestHeader{Client: client, Request: 11, Session: 1,
		Operation: OperationNonReplicated, Code: CodePollMessages}, &poll)
	if !bytes.Equal(request, unhex(t, vectors.Poll.RequestFrame)) {
		t.Fatalf("poll request\n%x\nwant\n%s", request, vectors.Poll.RequestFrame)
	}
	header := ReplyHeader{Client: client, Request: 11, Op: 1, Commit: 1, Operation: OperationSendMessages}
	confirmations := SendConfirmations{{StreamID: 1, TopicID: 0, PartitionID: 2, BaseOffset: 100}}
	sendReply := make([]byte, ReplyBytes(header.Operation, confirmations))
	EncodeReply(sendReply, header, confirmations)
	if !bytes.Equal(sendReply, unhex(t, vectors.Send.ReplyFrame)) ||
		!bytes.Equal(sendReply[HeaderBytes:], unhex(t, vectors.Send.ReplyBody)) {
		t.Fatalf("send reply\n%x\nwant\n%s", sendReply, vectors.Send.ReplyFrame)
	}
	header.Operation = OperationNonReplicated
	var polled PolledMessages
	if err := DecodeAll(&polled, unhex(t, vectors.Poll.Payload)); err != nil {
		t.Fatal(err)
	}
	pollReply := make([]byte, ReplyBytes(header.Operation, &polled))
	EncodeReply(pollReply, header, &polled)
	if !bytes.Equal(pollReply, unhex(t, vectors.Poll.ReplyFrame)) {
		t.Fatalf("poll reply\n%x\nwant\n%s", pollReply, vectors.Poll.ReplyFrame)
	}
}

func checkAdmission(t *testing.T, batch []byte, vectors *batchVectors) {
	header, err := ValidateBatch(batch)
	if err != nil {
		t.Fatalf("ValidateBatch: %v", err)
	}
	want := vectors.Send.BatchHeader
	if header.BatchChecksum != parseHex64(t, want.Checksum) || header.BatchLength != want.Length ||
		header.OriginTimestamp != want.OriginTimestamp || header.MessageCount != want.MessageCount {
		t.Fatalf("batch header %+v, want %+v", header, want)
	}
	iterator := Messages(batch)
	for i, wantMessage := range vectors.Send.Messages {
		message, ok := iterator.Next()
		if !ok {
			t.Fatalf("iterator ended at %d", i)
		}
		if message.Header.Checksum != parseHex64(t, wantMessage.Checksum) ||
			message.Header.OffsetDelta != wantMessage.OffsetDelta ||
			message.Header.TimestampDelta != wantMessage.TimestampDelta ||
			string(message.Payload) != wantMessage.Payload ||
			!bytes.Equal(message.UserHeaders, unhex(t, wantMessage.UserHeaders)) ||
			message.OriginTimestamp != wantMessage.OriginTimestamp || message.Offset != wantMessage.Offset {
			t.Fatalf("message %d = %+v, want %+v", i, message, wantMessage)
		}
		var headers Headers
		if err := DecodeAll(&headers, message.UserHeaders); err != nil || headers.EncodedSize() != len(message.UserHeaders) {
			t.Fatalf("user headers of message %d: %v", i, err)
		}
	}
	if _, ok := iterator.Next(); ok {
		t.Fatal("iterator yields more than 3 messages")
	}
}

func checkPollReplies(t *testing.T, stored []byte, vectors *batchVectors) {
	pollPayload := unhex(t, vectors.Poll.Payload)
	var polled PolledMessages
	if err := DecodeAll(&polled, pollPayload); err != nil {
		t.Fatal(err)
	}
	iterator := polled.Messages()
	for i, want := range vectors.Poll.Messages {
		message, ok := iterator.Next()
		if !ok || message.Offset != want.Offset || message.OriginTimestamp != want.OriginTimestamp ||
			message.Timestamp != vectors.Poll.Record.BaseTimestamp || string(message.Payload) != want.Payload {
			t.Fatalf("polled message %d = %+v (ok %v), want %+v", i, message, ok, want)
		}
	}
	whole, ok := SliceBatch(stored, 100, 10)
	built := assemblePoll(&polled, []BatchSlice{whole}, ok)
	if !bytes.Equal(built, pollPayload) {
		t.Fatalf("poll reply from stored bytes\n%x\nwant\n%x", built, pollPayload)
	}
	sliced, ok := SliceBatch(stored, 101, 1)
	if !ok || sliced.OffsetFirst != 101 || sliced.OffsetLast != 101 {
		t.Fatalf("slice at 101: %+v, %v", sliced, ok)
	}
	slicedPoll := PolledMessages{PartitionID: polled.PartitionID, CurrentOffset: polled.CurrentOffset, MessagesCount: 1}
	built = assemblePoll(&slicedPoll, []BatchSlice{sliced}, ok)
	if !bytes.Equal(built, unhex(t, vectors.Poll.SlicedPayload)) {
		t.Fatalf("sliced poll reply\n%x\nwant\n%s", built, vectors.Poll.SlicedPayload)
	}
	if _, err := VerifyRecord(built[PollPrefixBytes:]); err != nil {
		t.Fatalf("sliced record does not validate: %v", err)
	}
	if _, ok := SliceBatch(stored, 103, 10); ok {
		t.Fatal("slice past the batch end is not empty")
	}
}

// assemblePoll builds a poll payload the way a server does from stored
// bytes: the prefix, then each slice's header and frames, nothing decoded.
func assemblePoll(prefix *PolledMessages, slices []BatchSlice, ok bool) []byte {
	if !ok {
		return nil
	}
	built := make([]byte, PollPrefixBytes)
	EncodePollPrefix(built, prefix.PartitionID, prefix.CurrentOffset, prefix.MessagesCount)
	for i := range slices {
		built = append(built, slices[i].Header[:]...)
		built = append(built, slices[i].Frames...)
	}
	return built
}

func checkHashReferences(t *testing.T, vectors *batchVectors) {
	for _, key := range vectors.Hashes.Keys {
		if got := XXH32([]byte(key.Key), 0); uint64(got) != parseHex64(t, key.XXH32) {
			t.Errorf("XXH32(%q) = %#x, want %s", key.Key, got, key.XXH32)
		}
		if got := MessagesKey([]byte(key.Key)).Select(3, 0); got != key.Of3 {
			t.Errorf("partition of %q in 3 = %d, want %d", key.Key, got, key.Of3)
		}
		if got := MessagesKey([]byte(key.Key)).Select(10, 0); got != key.Of10 {
			t.Errorf("partition of %q in 10 = %d, want %d", key.Key, got, key.Of10)
		}
	}
	for _, reference := range vectors.Hashes.XXH3 {
		if got := Checksum([]byte(reference.Input)); got != parseHex64(t, reference.Hash) {
			t.Errorf("XXH3(%q) = %#x, want %s", reference.Input, got, reference.Hash)
		}
	}
	if len(vectors.Hashes.Keys) == 0 || len(vectors.Hashes.XXH3) == 0 {
		t.Fatal("hash references missing")
	}
}
