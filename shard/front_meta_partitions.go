package shard

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/wire"
)

// afterPartitions makes the data plane follow a logged change of
// partitions: create, delete or purge them on their owners, then rebalance
// the topic's groups and answer.
func (m *metaPlane) afterPartitions(c *call, command *metadata.Command, result metadata.Result, view *frontView) {
	var kind DataKind
	switch command.Kind {
	case metadata.CreateTopic, metadata.CreatePartitions:
		kind = DataCreate
		topic := view.stream(command.StreamID).Topics[result.TopicID]
		first := 0
		if len(result.PartitionIDs) > 0 {
			first = int(result.PartitionIDs[0])
		}
		c.ranges = []topicRange{m.rangeOf(command.StreamID, topic, first, len(result.PartitionIDs))}
	case metadata.DeleteTopic, metadata.DeleteStream, metadata.DeletePartitions:
		kind = DataDelete
	case metadata.UpdateTopic:
		kind = DataRetention
		c.ranges = []topicRange{m.topicRange(command.StreamID, view.stream(command.StreamID).Topics[command.TopicID])}
	default:
		// Every node runs the purge. In cluster mode a partition's purge is
		// an entry of the partition's own log (ordered among its appends)
		// that every node proposes when it applies the command, naming the
		// topic's purge generation; the first to commit purges every
		// replica and the others are duplicates the partitions skip, so the
		// purge survives the loss of the proposing node and runs once.
		kind = DataPurge
	}
	m.rebalanceTopics(command, view)
	if command.Kind == metadata.CreateTopic {
		topic := view.stream(command.StreamID).Topics[result.TopicID]
		c.payload = m.front.topicDetails(command.StreamID, topic)
	}
	var cleanup func()
	switch command.Kind {
	case metadata.DeleteTopic, metadata.DeleteStream:
		cleanup = func() { m.removeDirectories(command, c.ranges) }
	case metadata.CreatePartitions, metadata.DeletePartitions:
		// Each partition's share of max_topic_size follows the count.
		retention := m.topicRange(command.StreamID, view.stream(command.StreamID).Topics[command.TopicID])
		cleanup = func() { m.retune(retention) }
	}
	m.topicOps(c, kind, c.ranges, cleanup)
}

// topicRange covers every partition of topic, with its current config.
func (m *metaPlane) topicRange(streamID uint32, topic *metadata.Topic) topicRange {
	if len(topic.Partitions) == 0 {
		return m.rangeOf(streamID, topic, 0, 0)
	}
	first := topic.Partitions[0].ID
	return m.rangeOf(streamID, topic, int(first), int(topic.Partitions[len(topic.Partitions)-1].ID-first)+1)
}

// retune sets the retention limits of a range of partitions; nothing
// waits for it (a failure leaves the previous limits until a restart).
func (m *metaPlane) retune(r topicRange) {
	if r.count == 0 {
		return
	}
	local := m.front.server.data.Local(m.front.shard)
	op := local.Get()
	op.Key, op.PartitionCount, op.Config = r.key, r.count, r.config
	op.Done = local.Put
	local.Retention(op)
}

// removeDirectories removes the emptied directories of deleted topics
// (and of a deleted stream) once their partitions are gone; a directory a
// new topic already reuses is not empty and stays.
func (m *metaPlane) removeDirectories(command *metadata.Command, ranges []topicRange) {
	root := m.front.server.options.DataPath
	for _, r := range ranges {
		if err := RemoveTopicDirectory(root, r.key.Stream, r.key.Topic); err != nil {
			m.front.server.options.Logger.Warn("remove a topic directory", "err", err.Error())
		}
	}
	if command.Kind == metadata.DeleteTopic {
		return
	}
	stream := filepath.Join(root, "streams", strconv.FormatUint(uint64(command.StreamID), 10))
	for _, path := range []string{filepath.Join(stream, "topics"), stream} {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return // not empty: a new stream reuses the id
		}
	}
}

// rebalanceTopics follows a change of partitions in the groups it touches.
func (m *metaPlane) rebalanceTopics(command *metadata.Command, view *frontView) {
	switch command.Kind {
	case metadata.DeleteStream:
		m.dropGroups(func(key metadata.GroupKey) bool { return key.StreamID == command.StreamID })
	case metadata.DeleteTopic:
		m.dropGroups(func(key metadata.GroupKey) bool {
			return key.StreamID == command.StreamID && key.TopicID == command.TopicID
		})
	case metadata.CreatePartitions, metadata.DeletePartitions:
		topic := view.stream(command.StreamID).Topics[command.TopicID]
		for key := range m.groups.groups {
			if key.StreamID == command.StreamID && key.TopicID == command.TopicID {
				m.groups.repartition(key, partitionIDs(topic))
			}
		}
		m.publish(viewGroupsOnly)
	}
}

func partitionIDs(topic *metadata.Topic) []uint32 {
	ids := make([]uint32, len(topic.Partitions))
	for i, partition := range topic.Partitions {
		ids[i] = partition.ID
	}
	return ids
}

// topicOps runs one data op per range and answers c when all are done.
func (m *metaPlane) topicOps(c *call, kind DataKind, ranges []topicRange, cleanup func()) {
	pending := 0
	for _, r := range ranges {
		if r.count > 0 {
			pending++
		}
	}
	if pending == 0 {
		if cleanup != nil {
			cleanup()
		}
		m.reply(c)
		return
	}
	local := m.front.server.data.Local(m.front.shard)
	for _, r := range ranges {
		if r.count == 0 {
			continue
		}
		op := local.Get()
		op.Key, op.PartitionCount, op.Config, op.PurgeGeneration = r.key, r.count, r.config, r.purge
		op.Done = func(op *DataOp) {
			m.topicOpDone(c, op.Err)
			local.Put(op)
			pending--
			if pending == 0 {
				if cleanup != nil {
					cleanup()
				}
				m.reply(c)
			}
		}
		switch kind {
		case DataCreate:
			local.Create(op)
		case DataDelete:
			local.Delete(op)
		case DataRetention:
			local.Retention(op)
		default:
			local.Purge(op)
		}
	}
}

// topicOpDone records a failed data op: the metadata change is logged, so
// the reply is an error the client sees while the state stays consistent
// with the log (a restart opens what the log names).
func (m *metaPlane) topicOpDone(c *call, err error) {
	if err == nil {
		return
	}
	if engine.IsFatal(err) {
		m.front.server.fatal(err)
	}
	m.front.server.options.Logger.Error("partition change failed", "code", c.code.String(), "err", err.Error())
	if c.status == wire.StatusOK {
		c.status = wire.StatusError
		c.payload = nil
	}
}

// runGroupMembership runs Join, Leave and Sync (§9.1) on the group table.
func (m *metaPlane) runGroupMembership(c *call, view *frontView) {
	request := c.body.(*wire.GroupTarget)
	stream := view.streamOf(request.Stream)
	topic := topicOf(stream, request.Topic)
	group := groupOf(topic, request.Group)
	if c.code == wire.CodeSyncConsumerGroup {
		if group != nil {
			m.sync(c, metadata.GroupKey{StreamID: stream.ID, TopicID: topic.ID, GroupID: group.ID})
		}
		return // not found or not a member: status 0, empty body (§4.4)
	}
	switch {
	case stream == nil:
		c.result = wire.StatusStreamIDNotFound
		return
	case topic == nil:
		c.result = wire.StatusTopicIDNotFound
		return
	case group == nil:
		c.result = wire.StatusConsumerGroupIDNotFound
		return
	case !view.access(c.userID).readTopic(stream.ID, topic.ID):
		c.status = wire.StatusUnauthorized
		return
	}
	key := metadata.GroupKey{StreamID: stream.ID, TopicID: topic.ID, GroupID: group.ID}
	entry := wire.ClientGroup{StreamID: key.StreamID, TopicID: key.TopicID, GroupID: key.GroupID}
	if c.code == wire.CodeJoinConsumerGroup {
		m.groups.join(key, c.client, c.session.id, partitionIDs(topic))
		m.front.server.clients.setGroup(c.session.id, entry, true)
		c.joined = true
	} else {
		if !m.groups.leave(key, c.client) {
			c.result = wire.StatusConsumerGroupMemberNotFound
			return
		}
		m.front.server.clients.setGroup(c.session.id, entry, false)
	}
	m.publish(viewGroupsOnly)
}

// sync answers the caller's pollable partitions and completes its
// pending hand-overs.
func (m *metaPlane) sync(c *call, key metadata.GroupKey) {
	group := m.groups.groups[key]
	if group == nil {
		return
	}
	index := group.find(c.client)
	if index < 0 {
		return
	}
	m.groups.synced(key, c.client)
	m.publish(viewGroupsOnly)
	member := group.members[index]
	c.payload = &wire.GroupAssignment{Generation: group.generation, Partitions: append([]uint32(nil), member.owned...)}
}
