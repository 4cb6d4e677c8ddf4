package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// TestSendPollEndToEnd: log in, create a stream and a topic, send
// batches to every partition and poll them back with each strategy.
func TestSendPollEndToEnd(t *testing.T) {
	s := startServer(t)
	sendPollScenario(t, s)
}

// TestEpollBackend runs the core scenarios on the epoll backend (the
// other tests run on the default, io_uring where the kernel offers it).
func TestEpollBackend(t *testing.T) {
	s := startServer(t, "WHIPPET_SYSTEM_SHARDING_BACKEND=epoll")
	if !strings.Contains(s.logs.String(), "backend=epoll") {
		t.Fatalf("the startup line does not name epoll:\n%s", s.logs)
	}
	sendPollScenario(t, s)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	check(t, "store offset", c.StoreConsumerOffset(ctx, wire.OffsetTarget{Consumer: single(1), Stream: id(0),
		Topic: id(0), Partition: wire.PartitionOf(2)}, 7))
	s.restart()
	c = s.dial(t)
	info, found, err := c.GetConsumerOffset(ctx, wire.OffsetTarget{Consumer: single(1), Stream: id(0), Topic: id(0),
		Partition: wire.PartitionOf(2)})
	if err != nil || !found || info.StoredOffset != 7 || info.CurrentOffset != 9 {
		t.Fatalf("offset after restart on epoll: %+v found %v err %v", info, found, err)
	}
}

func sendPollScenario(t *testing.T, s *server) {
	c := s.dial(t)
	ctx := ctxTimeout(t)
	stream := must[*wire.StreamInfo](t, "create stream")(c.CreateStream(ctx, "orders", nil))
	if stream.ID != 0 || stream.Name != "orders" {
		t.Fatalf("stream %+v, want id 0 named orders", stream)
	}
	topic := must[*wire.TopicDetails](t, "create topic")(c.CreateTopic(ctx,
		&wire.CreateTopic{Stream: id(0), PartitionsCount: 3, Name: "events"}))
	if topic.ID != 0 || len(topic.Partitions) != 3 {
		t.Fatalf("topic %+v, want id 0 with 3 partitions", topic.TopicInfo)
	}
	for partition := uint32(0); partition < 3; partition++ {
		for batch := 0; batch < 2; batch++ {
			confirmations := must[wire.SendConfirmations](t, "send")(c.SendMessages(ctx, id(0), id(0),
				wire.PartitionID(partition), messages(fmt.Sprintf("p%d-b%d", partition, batch), 5)))
			if len(confirmations) != 1 || confirmations[0].BaseOffset != uint64(batch*5) ||
				confirmations[0].PartitionID != partition {
				t.Fatalf("confirmation %+v, want partition %d base %d", confirmations, partition, batch*5)
			}
		}
	}
	poll := func(partition uint32, strategy wire.Strategy, count uint32) []string {
		polled := must[*wire.PolledMessages](t, "poll")(c.PollMessages(ctx, &wire.PollMessages{
			Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: id(7)}, Stream: id(0), Topic: id(0),
			Partition: wire.PartitionOf(partition), Strategy: strategy, Count: count}))
		if polled.CurrentOffset != 9 {
			t.Fatalf("current offset %d, want 9", polled.CurrentOffset)
		}
		return payloads(t, polled)
	}
	got := poll(1, wire.Strategy{Kind: wire.StrategyOffset, Value: 3}, 4)
	want := []string{"p1-b0-3", "p1-b0-4", "p1-b1-0", "p1-b1-1"}
	if !slices.Equal(got, want) {
		t.Fatalf("poll by offset: %q, want %q", got, want)
	}
	if got := poll(2, wire.Strategy{Kind: wire.StrategyFirst}, 1); !slices.Equal(got, []string{"p2-b0-0"}) {
		t.Fatalf("poll first: %q", got)
	}
	if got := poll(0, wire.Strategy{Kind: wire.StrategyLast}, 2); !slices.Equal(got, []string{"p0-b1-3", "p0-b1-4"}) {
		t.Fatalf("poll last: %q", got)
	}
}

// TestPipelinedSends: concurrent producers on one connection pipeline
// their sends (they run together on the server); every batch lands once,
// the confirmations tile the partition, and a read after them sees all.
func TestPipelinedSends(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "stream")(c.CreateStream(ctx, "p", nil))
	must[*wire.TopicDetails](t, "topic")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 2, Name: "t"}))
	const producers, batches, batchMessages = 8, 40, 10
	var mu sync.Mutex
	bases := map[uint64]bool{}
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	for producer := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range batches {
				partition := uint32(producer % 2)
				confirmations, err := c.SendMessages(ctx, id(0), id(0), wire.PartitionID(partition),
					messages(fmt.Sprintf("%d-%d", producer, batch), batchMessages))
				if err != nil {
					errs <- err
					return
				}
				if partition == 0 {
					mu.Lock()
					bases[confirmations[0].BaseOffset] = true
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for base := uint64(0); base < producers/2*batches*batchMessages; base += batchMessages {
		if !bases[base] {
			t.Fatalf("no batch landed at offset %d (%d batches confirmed)", base, len(bases))
		}
	}
	topic := must[*wire.TopicDetails](t, "topic after")(c.GetTopic(ctx, id(0), id(0)))
	if topic.MessagesCount != producers*batches*batchMessages {
		t.Fatalf("topic holds %d messages, want %d", topic.MessagesCount, producers*batches*batchMessages)
	}
	polled := must[*wire.PolledMessages](t, "poll")(c.PollMessages(ctx, &wire.PollMessages{Consumer: single(1),
		Stream: id(0), Topic: id(0), Partition: wire.PartitionOf(0), Strategy: wire.Strategy{Kind: wire.StrategyFirst},
		Count: 5000}))
	iterator := polled.Messages()
	for want := uint64(0); ; want++ {
		message, ok := iterator.Next()
		if !ok {
			if want != producers/2*batches*batchMessages {
				t.Fatalf("polled %d messages", want)
			}
			break
		}
		if message.Offset != want {
			t.Fatalf("offset %d at position %d", message.Offset, want)
		}
	}
}

// TestServerSidePartitioning: Balanced and MessagesKey partitioning sent
// as such (as the Rust SDK does) are resolved by the server: round robin,
// and XXH32(key) modulo the partition count (§1.5).
func TestServerSidePartitioning(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	c.ServerPartitioning(true)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "stream")(c.CreateStream(ctx, "sp", nil))
	must[*wire.TopicDetails](t, "topic")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 3, Name: "t"}))
	landed := map[uint32]int{}
	for range 6 {
		confirmations := must[wire.SendConfirmations](t, "balanced")(c.SendMessages(ctx, id(0), id(0), wire.Balanced(),
			messages("b", 1)))
		landed[confirmations[0].PartitionID]++
	}
	if landed[0] != 2 || landed[1] != 2 || landed[2] != 2 {
		t.Fatalf("balanced sends landed %v, want 2 on each of 3", landed)
	}
	key := []byte("order-key-1")
	want := wire.XXH32(key, 0) % 3
	for range 3 {
		confirmations := must[wire.SendConfirmations](t, "keyed")(c.SendMessages(ctx, id(0), id(0), wire.MessagesKey(key),
			messages("k", 1)))
		if confirmations[0].PartitionID != want {
			t.Fatalf("keyed send landed on %d, want %d", confirmations[0].PartitionID, want)
		}
	}
	_, err := c.SendMessages(ctx, id(0), id(0), wire.PartitionID(7), messages("x", 1))
	wantStatus(t, "send to a missing partition", err, wire.StatusResourceNotFound)
}

// TestPipelinedPolls: concurrent read-only polls on one connection run
// together and each gets its own partition's messages.
func TestPipelinedPolls(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "stream")(c.CreateStream(ctx, "pp", nil))
	must[*wire.TopicDetails](t, "topic")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 4, Name: "t"}))
	for partition := uint32(0); partition < 4; partition++ {
		must[wire.SendConfirmations](t, "send")(c.SendMessages(ctx, id(0), id(0), wire.PartitionID(partition),
			messages(fmt.Sprintf("p%d", partition), 20)))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for reader := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			partition := uint32(reader % 4)
			for round := range 20 {
				polled, err := c.PollMessages(ctx, &wire.PollMessages{Consumer: single(uint32(reader)), Stream: id(0),
					Topic: id(0), Partition: wire.PartitionOf(partition),
					Strategy: wire.Strategy{Kind: wire.StrategyOffset, Value: uint64(round)}, Count: 1})
				if err != nil {
					errs <- err
					return
				}
				iterator := polled.Messages()
				message, ok := iterator.Next()
				if want := fmt.Sprintf("p%d-%d", partition, round); !ok || string(message.Payload) != want {
					errs <- fmt.Errorf("partition %d offset %d: got %q, want %q", partition, round, message.Payload, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestPollLargeMessages pins a stuck-consumer bug: a poll whose reply
// buffer (sized from its count) could not hold the first message due
// returned no messages, so a consumer polling Next with count 10 never got
// past a 70 KB message, and a message over the 8 MiB poll cap could never
// be read back. Every accepted message must come back, one poll at a time.
func TestPollLargeMessages(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "create stream")(c.CreateStream(ctx, "big", nil))
	must[*wire.TopicDetails](t, "create topic")(c.CreateTopic(ctx,
		&wire.CreateTopic{Stream: id(0), PartitionsCount: 1, Name: "blobs"}))
	sizes := []int{10, 70_000, 9 << 20, 10, 70_000}
	for index, size := range sizes {
		payload := []byte(strings.Repeat(string(rune('a'+index)), size))
		must[wire.SendConfirmations](t, "send")(c.SendMessages(ctx, id(0), id(0), wire.PartitionID(0),
			[]wire.OutgoingMessage{{ID: wire.Uint128{Lo: uint64(index + 1)}, Payload: payload}}))
	}
	for _, count := range []uint32{1, 10} {
		consumer := wire.Consumer{Kind: wire.ConsumerSingle, ID: id(100 + count)}
		for index := 0; index < len(sizes); {
			polled := must[*wire.PolledMessages](t, "poll")(c.PollMessages(ctx, &wire.PollMessages{
				Consumer: consumer, Stream: id(0), Topic: id(0), Partition: wire.PartitionOf(0),
				Strategy: wire.Strategy{Kind: wire.StrategyNext}, Count: count, AutoCommit: true}))
			got := payloads(t, polled)
			if len(got) == 0 {
				t.Fatalf("count %d: poll at message %d (%d bytes) returned nothing", count, index, sizes[index])
			}
			for _, payload := range got {
				if len(payload) != sizes[index] || payload[0] != byte('a'+index) {
					t.Fatalf("count %d: message %d has %d bytes, want %d", count, index, len(payload), sizes[index])
				}
				index++
			}
		}
	}
}
