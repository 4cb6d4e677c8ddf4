package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// TestSoakMixedClients: eight clients mix sends, polls, offsets and group
// membership for a few seconds; then the server restarts (gracefully, or
// killed with SIGKILL) and every acknowledged message is there, once, in
// order (long; skipped in -short).
func TestSoakMixedClients(t *testing.T) {
	if testing.Short() {
		t.Skip("long: a soak of several seconds")
	}
	t.Run("graceful", func(t *testing.T) { soak(t, (*server).restart) })
	t.Run("killed", func(t *testing.T) { soak(t, (*server).crash) })
}

func soak(t *testing.T, restart func(*server)) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	s := startServer(t)
	admin := s.dial(t)
	ctx := ctxTimeout(t)
	const partitions, clients = 4, 8
	must[*wire.StreamInfo](t, "stream")(admin.CreateStream(ctx, "soak", nil))
	must[*wire.TopicDetails](t, "topic")(admin.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: partitions, Name: "t"}))
	must[*wire.ConsumerGroupInfo](t, "group")(admin.CreateConsumerGroup(ctx, id(0), id(0), "g"))
	var mu sync.Mutex
	acknowledged := make([]uint64, partitions)
	deadline := time.Now().Add(4 * time.Second)
	var wg sync.WaitGroup
	for client := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			soakClient(t, s, seed+uint64(client), deadline, &mu, acknowledged)
		}()
	}
	wg.Wait()
	restart(s)
	c := s.dial(t)
	for partition := uint32(0); partition < partitions; partition++ {
		var offset uint64
		for {
			polled, err := c.PollMessages(ctx, &wire.PollMessages{Consumer: single(1), Stream: id(0), Topic: id(0),
				Partition: wire.PartitionOf(partition), Strategy: wire.Strategy{Kind: wire.StrategyOffset, Value: offset},
				Count: 1000})
			check(t, "poll after restart", err)
			iterator := polled.Messages()
			count := 0
			for message, ok := iterator.Next(); ok; message, ok = iterator.Next() {
				if message.Offset != offset {
					t.Fatalf("partition %d: offset %d where %d was due", partition, message.Offset, offset)
				}
				offset++
				count++
			}
			if count == 0 {
				break
			}
		}
		if offset < acknowledged[partition] {
			t.Fatalf("partition %d holds %d messages after the restart, %d were acknowledged", partition, offset,
				acknowledged[partition])
		}
		t.Logf("partition %d: %d messages, %d acknowledged", partition, offset, acknowledged[partition])
	}
}

// soakClient runs one client's random mix until deadline, counting the
// messages the server acknowledged per partition.
func soakClient(t *testing.T, s *server, seed uint64, deadline time.Time, mu *sync.Mutex, acknowledged []uint64) {
	random := rand.New(rand.NewPCG(seed, 1))
	c := s.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	group := wire.GroupTarget{Stream: id(0), Topic: id(0), Group: id(0)}
	for time.Now().Before(deadline) {
		switch random.IntN(6) {
		case 0, 1, 2:
			partition := uint32(random.IntN(len(acknowledged)))
			count := 1 + random.IntN(20)
			if _, err := c.SendMessages(ctx, id(0), id(0), wire.PartitionID(partition),
				messages(fmt.Sprintf("s%d", seed), count)); err != nil {
				t.Errorf("send: %v", err)
				return
			}
			mu.Lock()
			acknowledged[partition] += uint64(count)
			mu.Unlock()
		case 3:
			_, err := c.PollMessages(ctx, &wire.PollMessages{Consumer: single(uint32(seed % 100)), Stream: id(0),
				Topic: id(0), Partition: wire.PartitionOf(uint32(random.IntN(len(acknowledged)))),
				Strategy: wire.Strategy{Kind: wire.StrategyNext}, Count: 50, AutoCommit: true})
			if err != nil {
				t.Errorf("poll: %v", err)
				return
			}
		case 4:
			_ = c.JoinConsumerGroup(ctx, group) // already a member is fine
			if _, err := c.SyncConsumerGroup(ctx, group); err != nil {
				t.Errorf("sync: %v", err)
				return
			}
		case 5:
			_ = c.LeaveConsumerGroup(ctx, group) // not a member is fine
		}
	}
}
