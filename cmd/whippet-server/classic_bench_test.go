package main

import (
	"context"
	"testing"

	classicclient "github.com/whippetio/whippet/client/classic"
	"github.com/whippetio/whippet/wire/classic"
)

// BenchmarkClassicSendMessages measures end-to-end classic sends through
// the real binary: one lockstep 0.8 connection sending batches of 100
// messages of 100 bytes to one partition (each batch is rewritten into a
// 0.9 batch on the server).
func BenchmarkClassicSendMessages(b *testing.B) {
	c := classicBenchTopic(b)
	ctx := context.Background()
	const batchMessages, payloadBytes = 100, 100
	batch := make([]classic.OutgoingMessage, batchMessages)
	for i := range batch {
		batch[i] = classic.OutgoingMessage{ID: classic.MessageID{byte(i + 1)}, Payload: make([]byte, payloadBytes)}
	}
	partitioning := classic.Partitioning{Kind: classic.PartitioningPartitionID}
	b.SetBytes(batchMessages * payloadBytes)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.SendMessages(ctx, classic.NumericIdentifier(0), classic.NumericIdentifier(0), partitioning,
			batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batchMessages)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkClassicPollMessages measures classic polls of 100 messages of
// 100 bytes (each rebuilt into 64-byte headers with fresh checksums).
func BenchmarkClassicPollMessages(b *testing.B) {
	c := classicBenchTopic(b)
	ctx := context.Background()
	const batchMessages, payloadBytes = 100, 100
	batch := make([]classic.OutgoingMessage, batchMessages)
	for i := range batch {
		batch[i] = classic.OutgoingMessage{Payload: make([]byte, payloadBytes)}
	}
	for range 10 {
		if err := c.SendMessages(ctx, classic.NumericIdentifier(0), classic.NumericIdentifier(0),
			classic.Partitioning{Kind: classic.PartitioningPartitionID}, batch); err != nil {
			b.Fatal(err)
		}
	}
	poll := classic.PollMessages{Consumer: classic.Consumer{Kind: classic.ConsumerSingle, ID: classic.NumericIdentifier(1)},
		Stream: classic.NumericIdentifier(0), Topic: classic.NumericIdentifier(0), Partition: classic.PartitionOf(0),
		Strategy: classic.PollingStrategy{Kind: classic.PollingFirst}, Count: batchMessages}
	b.SetBytes(batchMessages * payloadBytes)
	b.ReportAllocs()
	for b.Loop() {
		if _, messages, err := c.PollMessages(ctx, poll); err != nil || len(messages) != batchMessages {
			b.Fatalf("poll: %d messages, %v", len(messages), err)
		}
	}
	b.ReportMetric(float64(b.N*batchMessages)/b.Elapsed().Seconds(), "msgs/s")
}

// classicBenchTopic starts a server and returns a logged-in 0.8 client
// with stream 0 holding topic 0 of one partition.
func classicBenchTopic(b *testing.B) *classicclient.Client {
	b.Helper()
	s := startServer(b, "WHIPPET_SYSTEM_TOPIC_DURABILITY=written")
	c, err := classicclient.Dial(context.Background(), s.address)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if _, err := c.Login(ctx, "iggy", "iggy"); err != nil {
		b.Fatal(err)
	}
	if _, err := c.CreateStream(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, classic.NumericIdentifier(0), "t", 1,
		classic.TopicSettings{Compression: classic.CompressionNone}); err != nil {
		b.Fatal(err)
	}
	return c
}
