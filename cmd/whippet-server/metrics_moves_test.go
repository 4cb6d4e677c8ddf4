package main

import (
	"context"
	"strconv"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// TestMetricsConnectionMoves: a TCP connection that keeps sending to
// partitions owned by the other shard moves there, and /metrics counts
// the move once on each side. Method: one connection sends a run of
// batches to each of eight partitions in turn (at least one lives on the
// other shard), then the moved-in and moved-out counters are summed over
// the shards.
func TestMetricsConnectionMoves(t *testing.T) {
	if shardCount(t) < 2 {
		t.Skip("connection moves need two shards (two usable CPUs)")
	}
	s := startServer(t, "WHIPPET_SYSTEM_TOPIC_DURABILITY=memory")
	a := newAPI(t, s)
	c := s.dial(t)
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, "moves", nil); err != nil {
		t.Fatal(err)
	}
	const partitions, sendsPerPartition = 8, 12
	if _, err := c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: partitions, Name: "t"}); err != nil {
		t.Fatal(err)
	}
	movedIn, movedOut := movesOf(t, a)
	if movedIn != 0 || movedOut != 0 {
		t.Fatalf("moves before any send: in %v, out %v", movedIn, movedOut)
	}
	batch := []wire.OutgoingMessage{{Payload: []byte("affinity")}}
	for partition := range uint32(partitions) {
		for range sendsPerPartition {
			if _, err := c.SendMessages(ctx, id(0), id(0), wire.PartitionID(partition), batch); err != nil {
				t.Fatal(err)
			}
		}
	}
	movedIn, movedOut = movesOf(t, a)
	if movedIn < 1 || movedIn != movedOut {
		t.Fatalf("moves after runs of sends on every partition: in %v, out %v", movedIn, movedOut)
	}
}

// movesOf sums the shards' moved-in and moved-out connection counters.
func movesOf(t *testing.T, a *api) (movedIn, movedOut float64) {
	t.Helper()
	families := scrape(t, a)
	for shardID := range shardCount(t) {
		label := map[string]string{"shard": strconv.Itoa(shardID)}
		movedIn += value(t, families, "whippet_shard_connections_moved_in_total", label)
		movedOut += value(t, families, "whippet_shard_connections_moved_out_total", label)
	}
	return movedIn, movedOut
}
