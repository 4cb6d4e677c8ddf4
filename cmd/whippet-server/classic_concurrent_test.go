package main

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/whippetio/whippet/client"
	classicclient "github.com/whippetio/whippet/client/classic"
	"github.com/whippetio/whippet/wire"
	"github.com/whippetio/whippet/wire/classic"
)

// TestClassicConcurrentProducers: two classic and two 0.9 producers send
// at once to the same topic (balanced partitioning, so the server or the
// client spreads them); then a classic and a 0.9 consumer read every
// partition, and the two readings agree message for message: id, offset,
// timestamp, origin timestamp, user headers and payload. Every message
// sent is read exactly once per consumer.
func TestClassicConcurrentProducers(t *testing.T) {
	s := startServer(t)
	modern := s.dial(t)
	legacy := s.dialClassic(t)
	classicLogin(t, legacy)
	ctx := ctxTimeout(t)
	const partitions, batches, perBatch = 3, 10, 5
	must[classic.StreamEntry](t, "create stream")(legacy.CreateStream(ctx, "c"))
	must[classic.TopicDetails](t, "create topic")(legacy.CreateTopic(ctx, cid(0), "t", partitions,
		classic.TopicSettings{Compression: classic.CompressionNone}))
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for producer := range 2 {
		c := s.dialClassic(t)
		classicLogin(t, c)
		wg.Go(func() {
			for batch := range batches {
				var out []classic.OutgoingMessage
				for i := range perBatch {
					out = append(out, classic.OutgoingMessage{OriginTimestamp: uint64(1_700_000_000_000_000 + i),
						Payload:     []byte(fmt.Sprintf("classic%d-%d-%d", producer, batch, i)),
						UserHeaders: classicHeaders(t, "producer", fmt.Sprint(producer))})
				}
				if err := c.SendMessages(ctx, cid(0), cid(0), classic.Partitioning{Kind: classic.PartitioningBalanced},
					out); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for producer := range 2 {
		c := s.dial(t)
		wg.Go(func() {
			for batch := range batches {
				out := messages(fmt.Sprintf("modern%d-%d", producer, batch), perBatch)
				if _, err := c.SendMessages(ctx, id(0), id(0), wire.Partitioning{Kind: wire.PartitioningBalanced},
					out); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("producer: %v", err)
	}
	seen := map[string]bool{}
	for partition := uint32(0); partition < partitions; partition++ {
		for _, payload := range compareGenerations(t, modern, legacy, partition) {
			if seen[payload] {
				t.Fatalf("%s read twice", payload)
			}
			seen[payload] = true
		}
	}
	if len(seen) != 4*batches*perBatch {
		t.Fatalf("read %d messages, want %d", len(seen), 4*batches*perBatch)
	}
}

// compareGenerations reads one whole partition with both clients and
// compares the readings; it returns the payloads read.
func compareGenerations(t *testing.T, modern *client.Client, legacy *classicclient.Client, partition uint32) []string {
	t.Helper()
	fromModern := pollModern(t, modern, partition, 0, 1000)
	reply, fromLegacy, err := legacy.PollMessages(ctxTimeout(t), classic.PollMessages{
		Consumer: classic.Consumer{Kind: classic.ConsumerSingle, ID: cid(2)}, Stream: cid(0), Topic: cid(0),
		Partition: classic.PartitionOf(partition), Strategy: classic.PollingStrategy{Kind: classic.PollingFirst},
		Count: 1000})
	check(t, "classic poll", err)
	if len(fromModern) != len(fromLegacy) || reply.PartitionID != partition {
		t.Fatalf("partition %d: 0.9 reads %d messages, classic %d (reply partition %d)", partition, len(fromModern),
			len(fromLegacy), reply.PartitionID)
	}
	var payloads []string
	for i, message := range fromLegacy {
		payloads = append(payloads, string(message.Payload))
		header, same := message.Header, fromModern[i]
		if !classic.ChecksumValid(message.Raw) || header.Offset != uint64(i) || header.Offset != same.Offset ||
			header.ID != classicID(same.Header.ID) || header.Timestamp != same.Timestamp ||
			header.OriginTimestamp != same.OriginTimestamp || !bytes.Equal(message.Payload, same.Payload) ||
			!bytes.Equal(message.UserHeaders, same.UserHeaders) {
			t.Fatalf("partition %d message %d: classic %+v %q, 0.9 %+v", partition, i, header, message.Payload, same)
		}
	}
	return payloads
}
