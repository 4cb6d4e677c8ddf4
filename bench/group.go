package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// groupTarget names the actor's group for membership calls.
func (a *actor) groupTarget() wire.GroupTarget {
	target := a.run.targets[a.reader.stream]
	return wire.GroupTarget{Stream: target.stream, Topic: target.topic, Group: wire.NumericID(a.reader.group.id)}
}

// join makes the actor's connection a member of its group.
func (a *actor) join(ctx context.Context) error {
	target := a.groupTarget()
	if err := a.client.JoinConsumerGroup(ctx, target); err != nil {
		return fmt.Errorf("bench: consumer %d: join group %d: %w", a.plan.ID, a.reader.group.id, err)
	}
	return nil
}

// sync reads the actor's assignment: the partitions it may poll now.
func (a *actor) sync(ctx context.Context) error {
	target := a.groupTarget()
	assignment, err := a.client.SyncConsumerGroup(ctx, target)
	if err != nil && client.StatusOf(err) == wire.StatusConsumerGroupMemberNotFound {
		if err = a.join(ctx); err == nil {
			assignment, err = a.client.SyncConsumerGroup(ctx, target)
		}
	}
	if err != nil {
		return fmt.Errorf("bench: consumer %d: sync group %d: %w", a.plan.ID, a.reader.group.id, err)
	}
	a.reader.assigned = append(a.reader.assigned[:0], assignment.Partitions...)
	a.reader.generation = assignment.Generation
	a.reader.refreshedAt = time.Now()
	return nil
}

// pollGroup polls the next assigned partition with the Next strategy and
// auto-commit, as iggy-bench's group consumers do, and checks that the
// group is served each partition's offsets exactly once, in order.
func (a *actor) pollGroup(ctx context.Context, count uint32) (polled, error) {
	r := &a.reader
	if len(r.assigned) == 0 || time.Since(r.refreshedAt) > GroupAssignmentRefresh {
		if err := a.sync(ctx); err != nil {
			return polled{}, err
		}
		if len(r.assigned) == 0 {
			return polled{}, nil
		}
	}
	partition := r.assigned[r.turn%uint32(len(r.assigned))]
	r.turn++
	target := a.run.targets[r.stream]
	request := wire.PollMessages{
		Consumer: wire.Consumer{Kind: wire.ConsumerGroup, ID: wire.NumericID(r.group.id)},
		Stream:   target.stream, Topic: target.topic, Partition: wire.PartitionOf(partition),
		Strategy: wire.Strategy{Kind: wire.StrategyNext}, Count: count, AutoCommit: true,
	}
	reply, err := a.pollReply(ctx, &request)
	if err != nil {
		if status := client.StatusOf(err); status == wire.StatusConsumerGroupMemberNotFound {
			r.assigned = r.assigned[:0]
			return polled{}, nil
		}
		return polled{}, fmt.Errorf("bench: consumer %d: group poll: %w", a.plan.ID, err)
	}
	if reply.PartitionID == wire.PollPartitionResync {
		r.assigned = r.assigned[:0]
		return polled{}, nil
	}
	result, err := readPoll(reply)
	if err != nil || result.count == 0 {
		return result, err
	}
	return result, r.group.check(result.partition, result.first, result.count)
}
