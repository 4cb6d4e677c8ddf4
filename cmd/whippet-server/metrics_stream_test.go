package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/whippetio/whippet/wire"
)

// TestMetricsStreamedSendsAndPollsInPlace: on io_uring, 1 MB sends to a
// `written` topic are written while they arrive, and polls of what the
// cache holds go out from it in place; /metrics counts both, no record
// stays pinned once the replies were read, and the cache gauges show the
// batches it holds. Method: one shard (so the
// partition lives on the connection's shard), four 1,000 × 1,000-byte
// batches, a poll of each back with its bytes checked, then a scrape.
func TestMetricsStreamedSendsAndPollsInPlace(t *testing.T) {
	s := startServer(t, "WHIPPET_SYSTEM_SHARDING_CPU_ALLOCATION=1", "WHIPPET_SYSTEM_TOPIC_DURABILITY=written")
	if !strings.Contains(s.logs.String(), "backend=io_uring") {
		t.Skip("streamed sends and sends in place need the io_uring backend")
	}
	a := newAPI(t, s)
	c := s.dial(t)
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, "metrics", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 1, Name: "t"}); err != nil {
		t.Fatal(err)
	}
	const batches, perBatch = 4, 1000
	batch := make([]wire.OutgoingMessage, perBatch)
	for i := range batch {
		batch[i].Payload = bytes.Repeat([]byte{byte(i)}, 1000)
	}
	for range batches {
		if _, err := c.SendMessages(ctx, id(0), id(0), wire.PartitionID(0), batch); err != nil {
			t.Fatal(err)
		}
	}
	for b := range uint64(batches) {
		polled, err := c.PollMessages(ctx, &wire.PollMessages{Consumer: single(1), Stream: id(0), Topic: id(0),
			Partition: wire.PartitionOf(0), Strategy: wire.Strategy{Kind: wire.StrategyOffset, Value: b * perBatch},
			Count: perBatch})
		if err != nil {
			t.Fatal(err)
		}
		iterator, got := polled.Messages(), 0
		for message, ok := iterator.Next(); ok; message, ok = iterator.Next() {
			if message.Offset != b*perBatch+uint64(got) || !bytes.Equal(message.Payload, batch[got].Payload) {
				t.Fatalf("batch %d message %d: offset %d, payload differs %v", b, got, message.Offset,
					!bytes.Equal(message.Payload, batch[got].Payload))
			}
			got++
		}
		if got != perBatch {
			t.Fatalf("batch %d: polled %d messages, want %d", b, got, perBatch)
		}
	}
	label := map[string]string{"shard": "0"}
	families := cachePublished(t, a, label, batches*perBatch*1000)
	if streamed := value(t, families, "whippet_shard_streamed_sends_total", label); streamed < 1 {
		t.Fatalf("streamed sends %v after %d sends of 1 MB", streamed, batches)
	}
	if inPlace := value(t, families, "whippet_shard_poll_bytes_in_place_total", label); inPlace < perBatch*1000 {
		t.Fatalf("poll bytes sent in place %v, want at least one batch's payload", inPlace)
	}
	// The gauge drops when the server handles a reply's send completion
	// (its pins end then), which may come after the client read the reply.
	deadline := time.Now().Add(5 * time.Second)
	for pinned := value(t, families, "whippet_shard_cache_pinned_records", label); pinned != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%v records still pinned 5 s after every reply was read", pinned)
		}
		time.Sleep(10 * time.Millisecond)
		pinned = value(t, scrape(t, a), "whippet_shard_cache_pinned_records", label)
	}
}

// cachePublished scrapes until the shard's cache gauges (published at
// its data tick) show at least bytes, then checks they agree with each
// other, and returns that scrape.
func cachePublished(t *testing.T, a *api, label map[string]string, bytes float64) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		families := scrape(t, a)
		cached := value(t, families, "whippet_shard_cache_bytes", label)
		if cached >= bytes {
			records := value(t, families, "whippet_shard_cache_records", label)
			capacity := value(t, families, "whippet_shard_cache_capacity_bytes", label)
			if records < 1 || capacity < cached {
				t.Fatalf("cache gauges: %v records, %v bytes, capacity %v", records, cached, capacity)
			}
			return families
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache bytes %v after every batch was polled, want at least %v", cached, bytes)
		}
		time.Sleep(20 * time.Millisecond) // the gauges move at the shard's data tick
	}
}
