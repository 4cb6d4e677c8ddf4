package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// TestIdleLogGivesBackSpaceAhead: a 1 MB send allocates its segment's
// space ahead (several MB past the batch, counted by /metrics as file ops
// of kind allocate), and once the partition is idle for two maintenance
// passes (every 20 ms here) the log on disk is cut back to its batch; the
// batch still reads back whole (from the cache: the engine's
// TestActiveLogReadsAfterTrim reads a cut log from disk).
func TestIdleLogGivesBackSpaceAhead(t *testing.T) {
	_, a, c, batch, logPath := sendLargeBatch(t, "WHIPPET_DATA_MAINTENANCE_MESSAGES_INTERVAL=20 ms")
	ctx := context.Background()
	// The allocation runs beside the batch's writes and may complete after
	// the send was acknowledged; once counted, the file is long.
	for start := time.Now(); value(t, scrape(t, a), "whippet_file_op_duration_seconds",
		map[string]string{"op": "allocate"}) < 1; {
		if time.Since(start) > 5*time.Second {
			t.Fatal("no allocation completed 5 s after a 1 MB send")
		}
		time.Sleep(10 * time.Millisecond)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := os.Stat(logPath)
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() < 2<<20 {
			break // the batch alone: ~1 MB
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle log still holds %d bytes 10 s after a 1 MB send", info.Size())
		}
		time.Sleep(20 * time.Millisecond) // the server's maintenance timer, not ours to drive
	}
	polled := must[*wire.PolledMessages](t, "poll")(c.PollMessages(ctx, &wire.PollMessages{Consumer: single(1),
		Stream: id(0), Topic: id(0), Partition: wire.PartitionOf(0), Strategy: wire.Strategy{Kind: wire.StrategyOffset},
		Count: 1000}))
	iterator, got := polled.Messages(), 0
	for message, ok := iterator.Next(); ok; message, ok = iterator.Next() {
		if !bytes.Equal(message.Payload, batch[got].Payload) {
			t.Fatalf("message %d differs", got)
		}
		got++
	}
	if got != len(batch) {
		t.Fatalf("polled %d messages, want %d", got, len(batch))
	}
}

// TestAllocateAheadOff: with system.partition.allocate_ahead = false a
// 1 MB send allocates nothing, and its log holds the batch alone while
// an allocation would have completed (maintenance runs once a minute
// here, so no pass cuts a file meanwhile).
func TestAllocateAheadOff(t *testing.T) {
	_, a, _, _, logPath := sendLargeBatch(t, "WHIPPET_SYSTEM_PARTITION_ALLOCATE_AHEAD=false")
	time.Sleep(300 * time.Millisecond) // an allocation completes within ms of its batch
	allocations := value(t, scrape(t, a), "whippet_file_op_duration_seconds", map[string]string{"op": "allocate"})
	info, err := os.Stat(logPath)
	if err != nil || allocations != 0 || info.Size() >= 2<<20 {
		t.Fatalf("allocate_ahead = false: %v allocations, the log holds %d bytes: %v", allocations, info.Size(), err)
	}
}

// sendLargeBatch starts a one-shard server with extra settings, skips
// without io_uring (large batches are written in pieces, into space
// allocated ahead, on that backend), creates a topic and sends one batch
// of 1,000 × 1,000 bytes to it; it returns the batch and its log's path.
func sendLargeBatch(t *testing.T, extra ...string) (*server, *api, *client.Client, []wire.OutgoingMessage, string) {
	t.Helper()
	s := startServer(t, append([]string{"WHIPPET_SYSTEM_SHARDING_CPU_ALLOCATION=1"}, extra...)...)
	if !strings.Contains(s.logs.String(), "backend=io_uring") {
		t.Skip("large batches are written in pieces, into space allocated ahead, on the io_uring backend")
	}
	a := newAPI(t, s)
	c := s.dial(t)
	ctx := context.Background()
	must[*wire.StreamInfo](t, "create stream")(c.CreateStream(ctx, "space", nil))
	must[*wire.TopicDetails](t, "create topic")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 1,
		Name: "t"}))
	batch := make([]wire.OutgoingMessage, 1000)
	for i := range batch {
		batch[i].Payload = bytes.Repeat([]byte{byte(i)}, 1000)
	}
	must[wire.SendConfirmations](t, "send")(c.SendMessages(ctx, id(0), id(0), wire.PartitionID(0), batch))
	logs, err := filepath.Glob(filepath.Join(s.dataDir, "streams", "*", "topics", "*", "partitions", "*", "*.log"))
	if err != nil || len(logs) != 1 {
		t.Fatalf("logs %v: %v", logs, err)
	}
	return s, a, c, batch, logs[0]
}
