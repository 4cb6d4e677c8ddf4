package shard

import (
	"slices"
	"testing"
	"time"

	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/wire"
)

// TestGroupTableCooperative: a join takes partitions from the member that
// holds them only after that member synced (or the timeout passed), and no
// partition is ever pollable by two members.
func TestGroupTableCooperative(t *testing.T) {
	now := time.Unix(1000, 0)
	table := newGroupTable(30 * time.Second)
	table.now = func() time.Time { return now }
	key := metadata.GroupKey{StreamID: 1, TopicID: 2, GroupID: 3}
	a, b, c := metadata.ClientID{Low: 1}, metadata.ClientID{Low: 2}, metadata.ClientID{Low: 3}
	partitions := []uint32{0, 1, 2, 3, 4}
	owned := func(client metadata.ClientID) []uint32 {
		group := table.groups[key]
		index := group.find(client)
		if index < 0 {
			return nil
		}
		return group.members[index].owned
	}
	checkDisjoint := func(when string) {
		t.Helper()
		seen := map[uint32]bool{}
		for _, member := range table.groups[key].members {
			for _, partition := range member.owned {
				if seen[partition] {
					t.Fatalf("%s: partition %d pollable by two members", when, partition)
				}
				seen[partition] = true
			}
		}
	}
	table.join(key, a, 1, partitions)
	if !slices.Equal(owned(a), partitions) || table.groups[key].generation != 1 {
		t.Fatalf("lone member owns %v (generation %d)", owned(a), table.groups[key].generation)
	}
	table.join(key, b, 2, partitions)
	checkDisjoint("after b joined")
	if len(owned(b)) != 0 || !slices.Equal(owned(a), []uint32{0, 2, 4}) {
		t.Fatalf("before the hand-over: a %v b %v", owned(a), owned(b))
	}
	table.synced(key, a)
	if !slices.Equal(owned(b), []uint32{1, 3}) {
		t.Fatalf("after a synced: b %v", owned(b))
	}
	table.join(key, c, 3, partitions)
	checkDisjoint("after c joined")
	if table.expire() {
		t.Fatal("revocations expired before their deadline")
	}
	now = now.Add(31 * time.Second)
	if !table.expire() {
		t.Fatal("revocations did not expire after the timeout")
	}
	checkDisjoint("after expiry")
	if !slices.Equal(owned(a), []uint32{0, 3}) || !slices.Equal(owned(b), []uint32{1, 4}) ||
		!slices.Equal(owned(c), []uint32{2}) {
		t.Fatalf("after expiry: a %v b %v c %v", owned(a), owned(b), owned(c))
	}
	if !table.leave(key, b) || table.leave(key, b) {
		t.Fatal("leave reports membership wrongly")
	}
	checkDisjoint("after b left")
	// b's partitions are free at once; 2 and 3 wait for their holders.
	if !slices.Equal(owned(a), []uint32{0, 4}) || !slices.Equal(owned(c), []uint32{1}) {
		t.Fatalf("after b left: a %v c %v", owned(a), owned(c))
	}
	table.synced(key, a)
	table.synced(key, c)
	if !slices.Equal(owned(a), []uint32{0, 2, 4}) || !slices.Equal(owned(c), []uint32{1, 3}) {
		t.Fatalf("after both synced: a %v c %v", owned(a), owned(c))
	}
	table.repartition(key, []uint32{0, 1})
	checkDisjoint("after repartition")
	for _, member := range table.groups[key].members {
		for _, partition := range member.owned {
			if partition > 1 {
				t.Fatalf("member owns deleted partition %d", partition)
			}
		}
	}
	table.leaveAll(a)
	table.leaveAll(c)
	if len(table.groups[key].members) != 0 {
		t.Fatal("members left after leaveAll")
	}
}

// TestGroupViewOwnership: the view answers poll and commit rights,
// commits included for a partition being handed over.
func TestGroupViewOwnership(t *testing.T) {
	table := newGroupTable(time.Minute)
	key := metadata.GroupKey{}
	a, b := metadata.ClientID{Low: 1}, metadata.ClientID{Low: 2}
	table.join(key, a, 1, []uint32{0, 1})
	table.join(key, b, 2, []uint32{0, 1})
	views := map[metadata.GroupKey]*viewGroup{}
	table.snapshot(views)
	group := views[key]
	if !group.pollable(a, 0) || group.pollable(a, 1) || !group.committable(a, 1) {
		t.Fatal("a: wrong rights while handing partition 1 over")
	}
	if group.pollable(b, 1) || group.committable(b, 1) {
		t.Fatal("b: rights before the hand-over")
	}
	if group.pollable(metadata.ClientID{Low: 9}, 0) || (*viewGroup)(nil).pollable(a, 0) {
		t.Fatal("a stranger may poll")
	}
}

// TestLaneOf: sends and read-only polls have lanes; a committing poll and
// everything else run alone.
func TestLaneOf(t *testing.T) {
	frame := func(operation wire.Operation, code wire.Code, body wire.Body) []byte {
		out := make([]byte, wire.RequestBytes(body))
		header := wire.RequestHeader{Client: wire.Uint128{Lo: 1}, Operation: operation, Request: 1, Session: 1}
		if operation == wire.OperationNonReplicated {
			header.Code = code
		}
		wire.EncodeRequest(out, header, body)
		return out
	}
	poll := &wire.PollMessages{Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(1)},
		Stream: wire.NumericID(0), Topic: wire.NumericID(0), Strategy: wire.Strategy{Kind: wire.StrategyNext}, Count: 1}
	if got := laneOf(frame(wire.OperationNonReplicated, wire.CodePollMessages, poll)); got != lanePoll {
		t.Fatalf("read-only poll: lane %d", got)
	}
	poll.AutoCommit = true
	if got := laneOf(frame(wire.OperationNonReplicated, wire.CodePollMessages, poll)); got != laneAlone {
		t.Fatalf("committing poll: lane %d", got)
	}
	send := &wire.SendMessages{Stream: wire.NumericID(0), Topic: wire.NumericID(0), Partitioning: wire.PartitionID(0)}
	if got := laneOf(frame(wire.OperationSendMessages, 0, send)); got != laneSend {
		t.Fatalf("send: lane %d", got)
	}
	if got := laneOf(frame(wire.OperationNonReplicated, wire.CodePing, nil)); got != laneAlone {
		t.Fatalf("ping: lane %d", got)
	}
	if got := laneOf(frame(wire.OperationCreateStream, 0, &wire.CreateStream{Name: "s"})); got != laneAlone {
		t.Fatalf("metadata write: lane %d", got)
	}
}
