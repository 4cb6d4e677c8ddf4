package bench

import (
	"context"
	"fmt"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// topicOptions are the topic settings of a run: iggy-bench's (expiry, max
// size, fsync) and our durability, each sent only when set.
func topicOptions(config *Config) wire.Headers {
	var options wire.Headers
	if config.MessageExpiry > 0 {
		options = append(options, wire.Uint64Header(wire.OptionMessageExpiry, uint64(config.MessageExpiry.Microseconds())))
	}
	if config.MaxTopicSize > 0 {
		options = append(options, wire.Uint64Header(wire.OptionMaxTopicSize, config.MaxTopicSize))
	}
	if config.EnforceFsync {
		options = append(options, wire.BoolHeader(wire.OptionEnforceFsync, true))
	}
	if config.Durability != "" {
		options = append(options, wire.StringHeader(wire.OptionDurability, config.Durability))
	}
	return options
}

// prepareStreams makes the bench streams ready: producer kinds delete and
// recreate them (unless ReuseStreams); consumer-only kinds require them.
func prepareStreams(ctx context.Context, admin *client.Client, config *Config) ([]target, error) {
	targets := make([]target, config.Streams)
	for index := range targets {
		var err error
		switch {
		case config.Kind.ConsumerOnly():
			targets[index], err = existingTarget(ctx, admin, index)
		case config.ReuseStreams:
			targets[index], err = existingTarget(ctx, admin, index)
			if client.StatusOf(err) == wire.StatusStreamIDNotFound || client.StatusOf(err) == wire.StatusTopicIDNotFound {
				targets[index], err = createTarget(ctx, admin, config, index)
			}
		default:
			targets[index], err = createTarget(ctx, admin, config, index)
		}
		if err != nil {
			return nil, err
		}
	}
	return targets, nil
}

// existingTarget resolves a bench stream and its topic by name.
func existingTarget(ctx context.Context, admin *client.Client, index int) (target, error) {
	stream, err := admin.GetStream(ctx, wire.NamedID(StreamName(index)))
	if err != nil {
		return target{}, fmt.Errorf("bench: stream %s: %w", StreamName(index), err)
	}
	topic, err := admin.GetTopic(ctx, wire.NumericID(stream.ID), wire.NamedID(TopicName))
	if err != nil {
		return target{}, fmt.Errorf("bench: topic %s of %s: %w", TopicName, StreamName(index), err)
	}
	return target{stream: wire.NumericID(stream.ID), topic: wire.NumericID(topic.ID)}, nil
}

// createTarget deletes a bench stream if it exists and creates it afresh
// with its topic.
func createTarget(ctx context.Context, admin *client.Client, config *Config, index int) (target, error) {
	name := StreamName(index)
	stream, err := freshStream(ctx, admin, name)
	if err != nil {
		return target{}, err
	}
	topic, err := admin.CreateTopic(ctx, &wire.CreateTopic{Stream: wire.NumericID(stream.ID),
		PartitionsCount: uint32(config.Partitions), Name: TopicName, Options: topicOptions(config)})
	if err != nil {
		return target{}, fmt.Errorf("bench: create topic of %s: %w", name, err)
	}
	return target{stream: wire.NumericID(stream.ID), topic: wire.NumericID(topic.ID)}, nil
}

// freshStream deletes the stream named name if it exists and creates it
// anew, empty.
func freshStream(ctx context.Context, admin *client.Client, name string) (*wire.StreamInfo, error) {
	err := admin.DeleteStream(ctx, wire.NamedID(name))
	if err != nil && client.StatusOf(err) != wire.StatusStreamIDNotFound && client.StatusOf(err) != wire.StatusResourceNotFound {
		return nil, fmt.Errorf("bench: delete stream %s: %w", name, err)
	}
	stream, err := admin.CreateStream(ctx, name, nil)
	if err != nil {
		return nil, fmt.Errorf("bench: create stream %s: %w", name, err)
	}
	return stream, nil
}

// prepareGroups finds or creates each consumer group by name.
func prepareGroups(ctx context.Context, admin *client.Client, plan *Plan, targets []target) ([]*groupState, error) {
	groups := make([]*groupState, len(plan.Groups))
	for index, group := range plan.Groups {
		name := GroupName(index)
		stream := targets[group.Stream]
		existing, err := admin.GetConsumerGroups(ctx, stream.stream, stream.topic)
		if err != nil {
			return nil, fmt.Errorf("bench: list groups of %s: %w", StreamName(group.Stream), err)
		}
		state := &groupState{next: map[uint32]uint64{}}
		found := false
		for _, info := range existing {
			if info.Name == name {
				state.id, found = info.ID, true
			}
		}
		if !found {
			info, err := admin.CreateConsumerGroup(ctx, stream.stream, stream.topic, name)
			if err != nil {
				return nil, fmt.Errorf("bench: create group %s: %w", name, err)
			}
			state.id = info.ID
		}
		groups[index] = state
	}
	return groups, nil
}

// consumerBudgetMessages is what one consumer of a consumer-only kind may
// read: its batches at the largest batch size, or its share of the data.
func consumerBudgetMessages(config *Config, actors int) uint64 {
	if config.TotalData != 0 {
		return config.TotalData / uint64(actors) / uint64(config.MessageSize.Min)
	}
	return config.MessageBatches * uint64(config.MessagesPerBatch.Max)
}

// readTargets sets, for consumer-only kinds, what each offset consumer of
// a stream and each group must read: the budget, capped by what is there
// (a group resumes after its stored offsets).
func readTargets(ctx context.Context, admin *client.Client, state *runState) error {
	config := state.config
	budget := consumerBudgetMessages(config, config.Consumers)
	state.readerTarget = make([]uint64, len(state.targets))
	for index, stream := range state.targets {
		topic, err := admin.GetTopic(ctx, stream.stream, stream.topic)
		if err != nil {
			return fmt.Errorf("bench: topic of %s: %w", StreamName(index), err)
		}
		state.readerTarget[index] = min(budget, topic.MessagesCount)
		for groupIndex, group := range state.plan.Groups {
			if group.Stream == index {
				if err := groupTarget(ctx, admin, state, groupIndex, topic, budget); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// groupTarget sets a group's resume offsets and what it must read.
func groupTarget(ctx context.Context, admin *client.Client, state *runState, index int, topic *wire.TopicDetails,
	budget uint64) error {
	group := state.groups[index]
	stream := state.targets[state.plan.Groups[index].Stream]
	var unread uint64
	for _, partition := range topic.Partitions {
		offset := wire.OffsetTarget{Consumer: wire.Consumer{Kind: wire.ConsumerGroup, ID: wire.NumericID(group.id)},
			Stream: stream.stream, Topic: stream.topic, Partition: wire.PartitionOf(partition.ID)}
		stored, found, err := admin.GetConsumerOffset(ctx, offset)
		if err != nil {
			return fmt.Errorf("bench: offset of group %d: %w", group.id, err)
		}
		if found {
			group.next[partition.ID] = stored.StoredOffset + 1
		}
		unread += partition.MessagesCount - min(partition.MessagesCount, group.next[partition.ID])
	}
	group.target = min(unread, budget*uint64(state.plan.Groups[index].Members))
	return nil
}
