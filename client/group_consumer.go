package client

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/whippetio/whippet/wire"
)

// GroupAssignmentTTL is how long a group consumer trusts its assignment
// before syncing again (the Go SDK's 5 s).
const GroupAssignmentTTL = 5 * time.Second

// GroupConsumer polls as a member of a consumer group the way the official
// Go SDK does (§9.1): it syncs to learn its partitions (joining once when
// it is not a member), polls them round robin with the partition named
// explicitly, and syncs again on 5006, 5009 or the resync sentinel.
type GroupConsumer struct {
	client *Client
	group  wire.GroupTarget

	mu         sync.Mutex
	partitions []uint32
	generation uint64
	syncedAt   time.Time
	next       int
	joined     bool
	left       bool
}

// GroupConsumer returns a consumer of group; it joins on first poll.
func (c *Client) GroupConsumer(group wire.GroupTarget) *GroupConsumer {
	return &GroupConsumer{client: c, group: group}
}

// Poll polls the next assigned partition. With no partition assigned it
// returns an empty result and no error.
func (g *GroupConsumer) Poll(ctx context.Context, strategy wire.Strategy, count uint32, autoCommit bool) (
	*wire.PolledMessages, error) {
	partition, ok, err := g.nextPartition(ctx)
	if err != nil || !ok {
		return &wire.PolledMessages{}, err
	}
	polled, err := g.client.PollMessages(ctx, &wire.PollMessages{
		Consumer: wire.Consumer{Kind: wire.ConsumerGroup, ID: g.group.Group}, Stream: g.group.Stream,
		Topic: g.group.Topic, Partition: wire.PartitionOf(partition), Strategy: strategy, Count: count,
		AutoCommit: autoCommit,
	})
	if g.stale(err) || (err == nil && polled.PartitionID == wire.PollPartitionResync) {
		g.forget()
	}
	return polled, err
}

// StoreOffset stores the group's offset of a partition it owns.
func (g *GroupConsumer) StoreOffset(ctx context.Context, partition uint32, offset uint64) error {
	err := g.client.StoreConsumerOffset(ctx, wire.OffsetTarget{
		Consumer: wire.Consumer{Kind: wire.ConsumerGroup, ID: g.group.Group}, Stream: g.group.Stream,
		Topic: g.group.Topic, Partition: wire.PartitionOf(partition)}, offset)
	if g.stale(err) {
		g.forget()
	}
	return err
}

// Leave leaves the group; the consumer will not join again by itself.
func (g *GroupConsumer) Leave(ctx context.Context) error {
	g.mu.Lock()
	g.left = true
	g.mu.Unlock()
	g.forget()
	return g.client.LeaveConsumerGroup(ctx, g.group)
}

// Assignment returns the cached partitions and generation.
func (g *GroupConsumer) Assignment() ([]uint32, uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]uint32(nil), g.partitions...), g.generation
}

func (g *GroupConsumer) nextPartition(ctx context.Context) (uint32, bool, error) {
	g.mu.Lock()
	fresh := !g.syncedAt.IsZero() && time.Since(g.syncedAt) < GroupAssignmentTTL
	g.mu.Unlock()
	if !fresh {
		if err := g.sync(ctx); err != nil {
			return 0, false, err
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.partitions) == 0 {
		return 0, false, nil
	}
	partition := g.partitions[g.next%len(g.partitions)]
	g.next++
	return partition, true, nil
}

// sync refreshes the assignment, joining once if not a member.
func (g *GroupConsumer) sync(ctx context.Context) error {
	assignment, err := g.client.SyncConsumerGroup(ctx, g.group)
	if errors.Is(err, wire.StatusConsumerGroupMemberNotFound) && g.mayJoin() {
		if err := g.client.JoinConsumerGroup(ctx, g.group); err != nil {
			return err
		}
		assignment, err = g.client.SyncConsumerGroup(ctx, g.group)
	}
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.partitions, g.generation, g.syncedAt = assignment.Partitions, assignment.Generation, time.Now()
	return nil
}

func (g *GroupConsumer) mayJoin() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.left || g.joined {
		return false
	}
	g.joined = true
	return true
}

func (g *GroupConsumer) forget() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.syncedAt = time.Time{}
}

func (g *GroupConsumer) stale(err error) bool {
	status := StatusOf(err)
	return status == wire.StatusConsumerGroupMemberNotFound || status == wire.StatusConsumerGroupPartitionNotOwned
}
