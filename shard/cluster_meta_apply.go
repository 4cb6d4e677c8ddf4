package shard

import (
	"fmt"

	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/wire"
)

// rangesOf captures, before command applies, the partitions it makes the
// data plane delete or purge, from the store's state: the same on every
// node, whatever the proposer's view was. A command the store will reject
// gets none.
func (m *metaPlane) rangesOf(command *metadata.Command) []topicRange {
	state := m.store.State()
	stream := state.Stream(command.StreamID)
	if stream == nil {
		return nil
	}
	var ranges []topicRange
	switch command.Kind {
	case metadata.DeleteStream, metadata.PurgeStream:
		for _, topic := range stream.Topics {
			if topic != nil {
				ranges = append(ranges, m.purgeRangeOf(stream.ID, topic))
			}
		}
	case metadata.DeleteTopic, metadata.PurgeTopic:
		if topic := state.Topic(command.StreamID, command.TopicID); topic != nil {
			ranges = append(ranges, m.purgeRangeOf(stream.ID, topic))
		}
	case metadata.DeletePartitions:
		topic := state.Topic(command.StreamID, command.TopicID)
		if topic != nil && int(command.Count) <= len(topic.Partitions) {
			first := len(topic.Partitions) - int(command.Count)
			ranges = append(ranges, m.rangeOf(stream.ID, topic, first, int(command.Count)))
		}
	}
	return ranges
}

// purgeRangeOf covers every partition of topic, naming the purge
// generation a purge of it reaches (the store counts purges per topic, the
// same on every node): the partitions' logs take one purge per generation.
func (m *metaPlane) purgeRangeOf(streamID uint32, topic *metadata.Topic) topicRange {
	r := m.rangeOf(streamID, topic, 0, len(topic.Partitions))
	r.purge = topic.PurgeGeneration + 1
	return r
}

// Restore installs a state transfer taken at op, then makes the data
// plane and the group table follow the new state before done runs.
func (a *MetaApplication) Restore(_ *ClusterGroup, snapshot []byte, op uint64, done func(error)) {
	m := a.plane
	before := m.store.State() // install replaces the state; this one stays as it was
	execution := &metadata.Execution{Snapshot: append([]byte(nil), snapshot...), Command: metadata.Command{Op: op}}
	execution.Done = func(e *metadata.Execution) {
		if e.Err != nil {
			// The transfer was checksummed end to end: a payload that does not
			// install, or a store that cannot write it, leaves no safe state.
			done(fmt.Errorf("shard: install the metadata state at op %d: %w", op, e.Err))
			return
		}
		after := m.store.State()
		m.publish(viewEverything)
		m.dropGroups(func(key metadata.GroupKey) bool {
			topic := after.Topic(key.StreamID, key.TopicID)
			return topic == nil || topic.Group(key.GroupID) == nil
		})
		deletes, creates := reconcileRanges(m, before, after)
		m.topicOps(&call{code: wire.CodeDeleteTopic}, DataDelete, deletes, func() {
			m.topicOps(&call{code: wire.CodeCreateTopic}, DataCreate, creates, func() { done(nil) })
		})
	}
	m.store.Execute(execution)
}

// reconcileRanges lists the partitions to delete (gone or recreated
// topics, removed tail partitions) and to create (new or recreated
// topics, added tail partitions) to go from before to after. A topic is
// recreated when its id was reused: its creation time differs.
func reconcileRanges(m *metaPlane, before, after *metadata.State) (deletes, creates []topicRange) {
	for _, stream := range before.Streams {
		for _, topic := range topicsOf(stream) {
			now := after.Topic(stream.ID, topic.ID)
			switch {
			case now == nil || now.CreatedAt != topic.CreatedAt:
				deletes = append(deletes, m.rangeOf(stream.ID, topic, 0, len(topic.Partitions)))
			case len(now.Partitions) < len(topic.Partitions):
				deletes = append(deletes, m.rangeOf(stream.ID, topic, len(now.Partitions),
					len(topic.Partitions)-len(now.Partitions)))
			}
		}
	}
	for _, stream := range after.Streams {
		for _, topic := range topicsOf(stream) {
			was := before.Topic(stream.ID, topic.ID)
			switch {
			case was == nil || was.CreatedAt != topic.CreatedAt:
				creates = append(creates, m.rangeOf(stream.ID, topic, 0, len(topic.Partitions)))
			case len(was.Partitions) < len(topic.Partitions):
				creates = append(creates, m.rangeOf(stream.ID, topic, len(was.Partitions),
					len(topic.Partitions)-len(was.Partitions)))
			}
		}
	}
	return deletes, creates
}

func topicsOf(stream *metadata.Stream) []*metadata.Topic {
	if stream == nil {
		return nil
	}
	var topics []*metadata.Topic
	for _, topic := range stream.Topics {
		if topic != nil {
			topics = append(topics, topic)
		}
	}
	return topics
}

// answerFromState answers c with what the state shows of its command: a
// create whose result the state holds (matched by creation time where the
// state keeps one), a delete whose target is gone. false when the state
// does not show the command's outcome.
func (m *metaPlane) answerFromState(c *call, command *metadata.Command) bool {
	state, view := m.store.State(), m.front.server.view.Load()
	switch command.Kind {
	case metadata.CreateStream:
		stream := state.StreamByName(command.Name)
		if stream == nil || stream.CreatedAt != command.CreatedAt {
			return false
		}
		info := m.front.streamInfo(view.stream(stream.ID))
		c.payload = &info
	case metadata.CreateTopic:
		var topic *metadata.Topic
		if stream := view.stream(command.StreamID); stream != nil {
			topic = stream.TopicByName(command.Name)
		}
		if topic == nil || topic.CreatedAt != command.CreatedAt {
			return false
		}
		c.payload = m.front.topicDetails(command.StreamID, topic)
	case metadata.CreateUser:
		user := state.UserByName(command.Name)
		if user == nil || user.CreatedAt != command.CreatedAt {
			return false
		}
		c.payload = userDetails(view.user(user.ID))
	case metadata.CreatePersonalAccessToken:
		c.payload = &wire.RawToken{Token: c.secret}
	case metadata.CreateConsumerGroup:
		topic := state.Topic(command.StreamID, command.TopicID)
		if topic == nil || topic.GroupByName(command.Name) == nil {
			return false
		}
		info := groupInfo(topic, topic.GroupByName(command.Name), nil)
		c.payload = &info
	default:
		if !deleted(state, command) {
			return false
		}
	}
	m.reply(c)
	return true
}

// deleted reports whether command is a delete whose target the state no
// longer holds.
func deleted(state *metadata.State, command *metadata.Command) bool {
	switch command.Kind {
	case metadata.DeleteStream:
		return state.Stream(command.StreamID) == nil
	case metadata.DeleteTopic:
		return state.Topic(command.StreamID, command.TopicID) == nil
	case metadata.DeleteUser:
		return state.User(command.UserID) == nil
	case metadata.DeleteConsumerGroup:
		topic := state.Topic(command.StreamID, command.TopicID)
		return topic == nil || topic.Group(command.GroupID) == nil
	case metadata.DeletePersonalAccessToken:
		user := state.User(command.UserID)
		return user == nil || !user.HasToken(command.Name)
	}
	return false
}
