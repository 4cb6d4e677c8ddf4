package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

func single(n uint32) wire.Consumer { return wire.Consumer{Kind: wire.ConsumerSingle, ID: id(n)} }

func groupConsumer(n uint32) wire.Consumer { return wire.Consumer{Kind: wire.ConsumerGroup, ID: id(n)} }

// TestConsumerOffsets: store, get and delete offsets of single consumers
// (numeric and named), Next polling and auto-commit.
func TestConsumerOffsets(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "stream")(c.CreateStream(ctx, "s", nil))
	must[*wire.TopicDetails](t, "topic")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 1, Name: "t"}))
	target := wire.OffsetTarget{Consumer: single(5), Stream: id(0), Topic: id(0), Partition: wire.PartitionOf(0)}
	wantStatus(t, "store in an empty partition", c.StoreConsumerOffset(ctx, target, 0), wire.StatusInvalidOffset)
	must[wire.SendConfirmations](t, "send")(c.SendMessages(ctx, id(0), id(0), wire.PartitionID(0), messages("m", 10)))
	if _, found, err := c.GetConsumerOffset(ctx, target); err != nil || found {
		t.Fatalf("offset before store: found %v err %v", found, err)
	}
	check(t, "store", c.StoreConsumerOffset(ctx, target, 4))
	wantStatus(t, "store past the end", c.StoreConsumerOffset(ctx, target, 10), wire.StatusInvalidOffset)
	info, found, err := c.GetConsumerOffset(ctx, target)
	if err != nil || !found || info.StoredOffset != 4 || info.CurrentOffset != 9 {
		t.Fatalf("offset %+v found %v err %v", info, found, err)
	}
	next := &wire.PollMessages{Consumer: single(5), Stream: id(0), Topic: id(0), Partition: wire.PartitionOf(0),
		Strategy: wire.Strategy{Kind: wire.StrategyNext}, Count: 3, AutoCommit: true}
	if got := payloads(t, must[*wire.PolledMessages](t, "next")(c.PollMessages(ctx, next))); !slices.Equal(got,
		[]string{"m-5", "m-6", "m-7"}) {
		t.Fatalf("next: %q", got)
	}
	if got := payloads(t, must[*wire.PolledMessages](t, "next again")(c.PollMessages(ctx, next))); !slices.Equal(got,
		[]string{"m-8", "m-9"}) {
		t.Fatalf("next again: %q", got)
	}
	named := target
	named.Consumer = wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NamedID("worker")}
	check(t, "store named", c.StoreConsumerOffset(ctx, named, 2))
	if info, found, _ := c.GetConsumerOffset(ctx, named); !found || info.StoredOffset != 2 {
		t.Fatalf("named offset %+v found %v", info, found)
	}
	check(t, "delete", c.DeleteConsumerOffset(ctx, target))
	wantStatus(t, "delete again", c.DeleteConsumerOffset(ctx, target), wire.StatusConsumerOffsetNotFound)
	missing := target
	missing.Partition = wire.PartitionOf(9)
	_, _, err = c.GetConsumerOffset(ctx, missing)
	wantStatus(t, "offset of a missing partition", err, wire.StatusPartitionNotFound)
	wantStatus(t, "store in a missing partition", c.StoreConsumerOffset(ctx, missing, 0), wire.StatusResourceNotFound)
	_, err = c.PollMessages(ctx, &wire.PollMessages{Consumer: single(1), Stream: id(3), Topic: id(0),
		Strategy: wire.Strategy{Kind: wire.StrategyFirst}, Count: 1})
	wantStatus(t, "poll a missing stream", err, wire.StatusStreamIDNotFound)
	_, err = c.PollMessages(ctx, &wire.PollMessages{Consumer: single(1), Stream: id(0), Topic: id(0),
		Partition: wire.PartitionOf(4), Strategy: wire.Strategy{Kind: wire.StrategyFirst}, Count: 1})
	wantStatus(t, "poll a missing partition", err, wire.StatusPartitionNotFound)
}

// TestConsumerGroups: group commands, the cooperative assignment over two
// members, rebalances on join, leave and disconnect, and group offsets.
func TestConsumerGroups(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "stream")(c.CreateStream(ctx, "s", nil))
	must[*wire.TopicDetails](t, "topic")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 4, Name: "t"}))
	group := must[*wire.ConsumerGroupInfo](t, "group")(c.CreateConsumerGroup(ctx, id(0), id(0), "g"))
	if group.ID != 0 || group.PartitionsCount != 4 || group.MembersCount != 0 {
		t.Fatalf("group %+v", group)
	}
	_, err := c.CreateConsumerGroup(ctx, id(0), id(0), "g")
	wantStatus(t, "duplicate group", err, wire.StatusConsumerGroupNameAlreadyExists)
	target := wire.GroupTarget{Stream: id(0), Topic: id(0), Group: wire.NamedID("g")}
	wantStatus(t, "leave before join", c.LeaveConsumerGroup(ctx, target), wire.StatusConsumerGroupMemberNotFound)
	missing := wire.GroupTarget{Stream: id(0), Topic: id(0), Group: id(7)}
	wantStatus(t, "join a missing group", c.JoinConsumerGroup(ctx, missing), wire.StatusConsumerGroupIDNotFound)
	check(t, "join", c.JoinConsumerGroup(ctx, target))
	first := must[*wire.GroupAssignment](t, "sync")(c.SyncConsumerGroup(ctx, target))
	if !slices.Equal(first.Partitions, []uint32{0, 1, 2, 3}) || first.Generation == 0 {
		t.Fatalf("lone member assignment %+v", first)
	}
	other := s.dial(t)
	check(t, "second join", other.JoinConsumerGroup(ctx, target))
	// The second member gets nothing until the first has synced and so
	// handed its surplus over (cooperative rebalance).
	pending := must[*wire.GroupAssignment](t, "second sync")(other.SyncConsumerGroup(ctx, target))
	if len(pending.Partitions) != 0 {
		t.Fatalf("second member polls %v before the hand-over", pending.Partitions)
	}
	kept := must[*wire.GroupAssignment](t, "first resync")(c.SyncConsumerGroup(ctx, target))
	handed := must[*wire.GroupAssignment](t, "second resync")(other.SyncConsumerGroup(ctx, target))
	if !slices.Equal(kept.Partitions, []uint32{0, 2}) || !slices.Equal(handed.Partitions, []uint32{1, 3}) {
		t.Fatalf("after the hand-over: first %v second %v", kept.Partitions, handed.Partitions)
	}
	details := must[*wire.ConsumerGroupDetails](t, "get group")(c.GetConsumerGroup(ctx, target))
	if details.MembersCount != 2 || len(details.Members) != 2 {
		t.Fatalf("group details %+v", details)
	}
	for partition := uint32(0); partition < 4; partition++ {
		must[wire.SendConfirmations](t, "send")(c.SendMessages(ctx, id(0), id(0), wire.PartitionID(partition),
			messages("g", 2)))
	}
	poll := &wire.PollMessages{Consumer: groupConsumer(0), Stream: id(0), Topic: id(0), Partition: wire.PartitionOf(1),
		Strategy: wire.Strategy{Kind: wire.StrategyNext}, Count: 10, AutoCommit: true}
	fenced := must[*wire.PolledMessages](t, "poll a partition owned by the other")(c.PollMessages(ctx, poll))
	if fenced.PartitionID != 0xFFFFFFFF || fenced.MessagesCount != 0 {
		t.Fatalf("fenced poll %+v", fenced)
	}
	owned := must[*wire.PolledMessages](t, "poll an owned partition")(other.PollMessages(ctx, poll))
	if owned.MessagesCount != 2 {
		t.Fatalf("owned poll %+v", owned)
	}
	offset := wire.OffsetTarget{Consumer: groupConsumer(0), Stream: id(0), Topic: id(0), Partition: wire.PartitionOf(1)}
	if info, found, _ := c.GetConsumerOffset(ctx, offset); !found || info.StoredOffset != 1 {
		t.Fatalf("group offset after auto-commit %+v found %v", info, found)
	}
	wantStatus(t, "commit a partition not owned", c.StoreConsumerOffset(ctx, offset, 0),
		wire.StatusConsumerGroupPartitionNotOwned)
	check(t, "commit an owned partition", other.StoreConsumerOffset(ctx, offset, 0))
	check(t, "other disconnects", other.Close())
	waitAssignment(t, c, target, []uint32{0, 1, 2, 3})
	check(t, "leave", c.LeaveConsumerGroup(ctx, target))
	if left, err := c.SyncConsumerGroup(ctx, target); err == nil && left != nil && len(left.Partitions) != 0 {
		t.Fatalf("sync after leave %+v", left)
	}
	groups := must[wire.ConsumerGroupList](t, "groups")(c.GetConsumerGroups(ctx, id(0), id(0)))
	if len(groups) != 1 || groups[0].Name != "g" {
		t.Fatalf("groups %+v", groups)
	}
	_, err = c.GetConsumerGroups(ctx, id(0), id(5))
	wantStatus(t, "groups of a missing topic", err, wire.StatusTopicIDNotFound)
	check(t, "delete group", c.DeleteConsumerGroup(ctx, target))
	wantStatus(t, "delete missing group", c.DeleteConsumerGroup(ctx, target), wire.StatusConsumerGroupIDNotFound)
	again := must[*wire.ConsumerGroupInfo](t, "new group")(c.CreateConsumerGroup(ctx, id(0), id(0), "g"))
	if again.ID != 1 {
		t.Fatalf("group id %d reused, want 1", again.ID)
	}
}

// waitAssignment syncs until the caller's partitions are want: a
// disconnect reaches shard 0 asynchronously.
func waitAssignment(t *testing.T, c interface {
	SyncConsumerGroup(context.Context, wire.GroupTarget) (*wire.GroupAssignment, error)
}, target wire.GroupTarget, want []uint32) {
	t.Helper()
	ctx := ctxTimeout(t)
	var got []uint32
	for range 500 {
		assignment, err := c.SyncConsumerGroup(ctx, target)
		check(t, "sync", err)
		got = assignment.Partitions
		if slices.Equal(got, want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("assignment %v, want %v", got, want)
}

// TestStaleMemberEvicted: a group member silent for 1.2 heartbeat
// intervals is evicted (reason 13) and its partitions go to the others.
func TestStaleMemberEvicted(t *testing.T) {
	s := startServer(t, "WHIPPET_HEARTBEAT_INTERVAL=1 s")
	c := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "stream")(c.CreateStream(ctx, "s", nil))
	must[*wire.TopicDetails](t, "topic")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 2, Name: "t"}))
	must[*wire.ConsumerGroupInfo](t, "group")(c.CreateConsumerGroup(ctx, id(0), id(0), "g"))
	target := wire.GroupTarget{Stream: id(0), Topic: id(0), Group: id(0)}
	silent := s.dial(t)
	check(t, "silent joins", silent.JoinConsumerGroup(ctx, target))
	check(t, "active joins", c.JoinConsumerGroup(ctx, target))
	waitAssignment(t, c, target, []uint32{0, 1})
	// The eviction ended the silent session: its client reconnects with a
	// new session, which is no member.
	if assignment, err := silent.SyncConsumerGroup(ctx, target); err == nil && len(assignment.Partitions) != 0 {
		t.Fatalf("the evicted member still owns %v", assignment.Partitions)
	}
}
