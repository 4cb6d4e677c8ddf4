package main

import (
	"testing"

	"github.com/whippetio/whippet/wire"
	"github.com/whippetio/whippet/wire/classic"
)

// TestClassicStaleMember: a classic group member silent for 1.2 heartbeat
// intervals leaves its group (its partitions go to a 0.9 member), and its
// next request gets 30 StaleClient and a closed connection, as from a 0.8
// server (PROTOCOL-0.8.md §9 step 7) — never a 0.9 eviction frame.
func TestClassicStaleMember(t *testing.T) {
	s := startServer(t, "WHIPPET_HEARTBEAT_INTERVAL=1 s")
	modern := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "stream")(modern.CreateStream(ctx, "s", nil))
	must[*wire.TopicDetails](t, "topic")(modern.CreateTopic(ctx,
		&wire.CreateTopic{Stream: id(0), PartitionsCount: 2, Name: "t"}))
	must[*wire.ConsumerGroupInfo](t, "group")(modern.CreateConsumerGroup(ctx, id(0), id(0), "g"))
	silent := s.dialClassic(t)
	classicLogin(t, silent)
	check(t, "classic joins", silent.JoinGroup(ctx, cid(0), cid(0), cid(0)))
	target := wire.GroupTarget{Stream: id(0), Topic: id(0), Group: id(0)}
	check(t, "0.9 joins", modern.JoinConsumerGroup(ctx, target))
	waitAssignment(t, modern, target, []uint32{0, 1})
	wantClassicStatus(t, "the stale member's next request", silent.Ping(ctx), classic.StatusStaleClient)
	if err := silent.Ping(ctx); err == nil {
		t.Fatal("the stale connection still answers")
	}
}
