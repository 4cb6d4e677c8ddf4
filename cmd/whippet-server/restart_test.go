package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// TestRestartKeepsEverything: streams, topics with options, messages,
// consumer offsets, group offsets, users, tokens and groups survive a
// graceful restart; memberships (per session) do not. No index is
// rebuilt: each was written whole before the stop.
func TestRestartKeepsEverything(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "stream")(c.CreateStream(ctx, "keep", nil))
	must[*wire.TopicDetails](t, "topic")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 2, Name: "t",
		Options: wire.Headers{wire.Uint64Header(wire.OptionMessageExpiry, 7_000_000)}}))
	must[wire.SendConfirmations](t, "send")(c.SendMessages(ctx, id(0), id(0), wire.PartitionID(1), messages("k", 6)))
	check(t, "store offset", c.StoreConsumerOffset(ctx, wire.OffsetTarget{Consumer: single(3), Stream: id(0),
		Topic: id(0), Partition: wire.PartitionOf(1)}, 4))
	must[*wire.ConsumerGroupInfo](t, "group")(c.CreateConsumerGroup(ctx, id(0), id(0), "readers"))
	groupTarget := wire.GroupTarget{Stream: id(0), Topic: id(0), Group: id(0)}
	check(t, "join", c.JoinConsumerGroup(ctx, groupTarget))
	groupOffset := wire.OffsetTarget{Consumer: groupConsumer(0), Stream: id(0), Topic: id(0), Partition: wire.PartitionOf(1)}
	check(t, "group offset", c.StoreConsumerOffset(ctx, groupOffset, 2))
	createUser(t, c, "carol", "carol-pass", &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true}})
	token := must[string](t, "token")(c.CreatePersonalAccessToken(ctx, "deploy", 0))
	check(t, "close", c.Close())

	s.restart()
	c = s.dial(t)
	topic := must[*wire.TopicDetails](t, "topic after restart")(c.GetTopic(ctx, wire.NamedID("keep"), wire.NamedID("t")))
	if topic.MessageExpiry != 7_000_000 || len(topic.Partitions) != 2 || topic.Partitions[1].CurrentOffset != 5 {
		t.Fatalf("topic after restart %+v %+v", topic.TopicInfo, topic.Partitions)
	}
	polled := must[*wire.PolledMessages](t, "poll")(c.PollMessages(ctx, &wire.PollMessages{Consumer: single(3),
		Stream: id(0), Topic: id(0), Partition: wire.PartitionOf(1), Strategy: wire.Strategy{Kind: wire.StrategyNext}, Count: 10}))
	if got := payloads(t, polled); !slices.Equal(got, []string{"k-5"}) {
		t.Fatalf("next after restart %q, want k-5", got)
	}
	if info, found, _ := c.GetConsumerOffset(ctx, groupOffset); !found || info.StoredOffset != 2 {
		t.Fatalf("group offset after restart %+v found %v", info, found)
	}
	groups := must[wire.ConsumerGroupList](t, "groups")(c.GetConsumerGroups(ctx, id(0), id(0)))
	if len(groups) != 1 || groups[0].Name != "readers" || groups[0].MembersCount != 0 {
		t.Fatalf("groups after restart %+v", groups)
	}
	carol := s.dialAs(t, "carol", "carol-pass")
	if streams := must[wire.StreamList](t, "carol streams")(carol.GetStreams(ctx)); len(streams) != 1 {
		t.Fatalf("carol sees %+v", streams)
	}
	tokens := must[wire.TokenList](t, "tokens")(c.GetPersonalAccessTokens(ctx))
	if len(tokens) != 1 || tokens[0].Name != "deploy" {
		t.Fatalf("tokens after restart %+v", tokens)
	}
	withToken := s.dialToken(t, token)
	check(t, "token ping", withToken.Ping(ctx))
	must[wire.SendConfirmations](t, "send after restart")(c.SendMessages(ctx, id(0), id(0), wire.PartitionID(1), messages("n", 1)))
	// Partitions open after the started line; every one has served a
	// request by now, so its recovery has logged what it did.
	if strings.Contains(s.logs.String(), "rebuilding index") {
		t.Fatalf("a graceful restart rebuilt an index:\n%s", s.logs)
	}
}
