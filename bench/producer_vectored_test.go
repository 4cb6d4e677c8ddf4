package bench

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// TestSendPathsAgainstServer sends, through a real whippet-server, batches
// the client writes from a vector of the caller's payloads (large
// messages) and batches it copies into one frame (small ones), with user
// headers and empty payloads among them, then polls everything back and
// compares each message byte for byte: the server admitted every frame
// (checksums included) and stored exactly what the caller passed.
func TestSendPathsAgainstServer(t *testing.T) {
	ctx, server := startTestServer(t, 2*time.Minute)
	producer, err := client.Dial(ctx, client.Options{Address: server.Address, Username: "iggy", Password: "iggy"})
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	stream, topic := wire.NamedID("vectored"), wire.NamedID("sends")
	if _, err := producer.CreateStream(ctx, "vectored", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := producer.CreateTopic(ctx, &wire.CreateTopic{Stream: stream, PartitionsCount: 1, Name: "sends"}); err != nil {
		t.Fatal(err)
	}
	random := rand.New(rand.NewPCG(21, 22))
	var sent []wire.OutgoingMessage
	shapes := []struct{ count, payloadBytes int }{{10, 100_000}, {10, 100}, {1, 1 << 20}, {1000, 1000}, {40, 20_000},
		{3, 0}}
	for _, shape := range shapes {
		messages := vectoredTestBatch(random, uint64(len(sent)), shape.count, shape.payloadBytes)
		if _, err := producer.SendMessages(ctx, stream, topic, wire.PartitionID(0), messages); err != nil {
			t.Fatalf("send %d x %d B: %v", shape.count, shape.payloadBytes, err)
		}
		sent = append(sent, messages...)
	}
	checkPolledBack(t, ctx, producer, stream, topic, sent)
}

// vectoredTestBatch returns count messages of payloadBytes random bytes
// with ids from firstID; every fourth carries user headers and every
// seventh has an empty payload.
func vectoredTestBatch(random *rand.Rand, firstID uint64, count, payloadBytes int) []wire.OutgoingMessage {
	headers := wire.Headers{wire.StringHeader("trace", "abc"), wire.StringHeader("shape", "vectored")}
	encodedHeaders := make([]byte, headers.EncodedSize())
	headers.Encode(encodedHeaders)
	messages := make([]wire.OutgoingMessage, count)
	for i := range messages {
		size := payloadBytes
		if i%7 == 6 {
			size = 0
		}
		payload := make([]byte, size)
		for j := range payload {
			payload[j] = byte(random.Uint32())
		}
		messages[i] = wire.OutgoingMessage{ID: wire.Uint128{Lo: firstID + uint64(i) + 1}, Payload: payload,
			OriginTimestamp: uint64(time.Now().UnixMicro())}
		if i%4 == 0 {
			messages[i].UserHeaders = encodedHeaders
		}
	}
	return messages
}

// checkPolledBack polls partition 0 from offset 0 until every sent
// message came back, and compares offsets, ids, payloads and user headers.
func checkPolledBack(t *testing.T, ctx context.Context, consumer *client.Client, stream, topic wire.Identifier,
	sent []wire.OutgoingMessage) {
	next := uint64(0)
	for next < uint64(len(sent)) {
		polled, err := consumer.PollMessages(ctx, &wire.PollMessages{
			Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(1)}, Stream: stream, Topic: topic,
			Partition: wire.PartitionOf(0), Strategy: wire.Strategy{Kind: wire.StrategyOffset, Value: next},
			Count: uint32(len(sent)) - uint32(next)})
		if err != nil {
			t.Fatalf("poll from %d: %v", next, err)
		}
		if polled.MessagesCount == 0 {
			t.Fatalf("poll from %d of %d returned nothing", next, len(sent))
		}
		iterator := polled.Messages()
		for message, ok := iterator.Next(); ok; message, ok = iterator.Next() {
			if message.Offset != next {
				t.Fatalf("offset %d, want %d", message.Offset, next)
			}
			want := &sent[next]
			if message.Header.ID != want.ID || !bytes.Equal(message.Payload, want.Payload) ||
				!bytes.Equal(message.UserHeaders, want.UserHeaders) {
				t.Fatalf("message %d differs: id %v (want %v), %d payload bytes (want %d), %d header bytes (want %d)",
					next, message.Header.ID, want.ID, len(message.Payload), len(want.Payload), len(message.UserHeaders),
					len(want.UserHeaders))
			}
			next++
		}
	}
}
