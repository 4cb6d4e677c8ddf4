package shard

import (
	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/wire"
)

// topicRange is the partitions of one topic a follow-up data op covers.
type topicRange struct {
	key    PartitionKey // the first partition
	count  int
	config PartitionConfig
	purge  uint64 // a purge's topic purge generation, after it (cluster mode)
}

// command builds the metadata command of a call on shard 0: it resolves
// identifiers (a miss is a committed result, §4.1) and checks rights (a
// denial is status 41). ok is false when the call is answered already.
func (m *metaPlane) command(c *call, view *frontView) (metadata.Command, bool) {
	command := metadata.Command{CreatedAt: nowMicros()}
	access := view.access(c.userID)
	switch c.code {
	case wire.CodeCreateStream, wire.CodeUpdateStream, wire.CodeDeleteStream, wire.CodePurgeStream:
		return m.streamCommand(c, view, access, command)
	case wire.CodeCreateTopic, wire.CodeUpdateTopic, wire.CodeDeleteTopic, wire.CodePurgeTopic,
		wire.CodeCreatePartitions, wire.CodeDeletePartitions:
		return m.topicCommand(c, view, access, command)
	case wire.CodeCreateConsumerGroup, wire.CodeDeleteConsumerGroup:
		return m.groupCommand(c, view, access, command)
	case wire.CodeCreatePersonalAccessToken, wire.CodeDeletePersonalAccessToken:
		return m.tokenCommand(c, view, command)
	}
	return m.userCommand(c, view, access, command)
}

func (m *metaPlane) streamCommand(c *call, view *frontView, access access, command metadata.Command) (
	metadata.Command, bool) {
	if c.code == wire.CodeCreateStream {
		request := c.body.(*wire.CreateStream)
		if !access.manageStreams() {
			c.status = wire.StatusUnauthorized
			return command, false
		}
		command.Kind, command.Name = metadata.CreateStream, request.Name
		return command, true
	}
	var target wire.Identifier
	switch request := c.body.(type) {
	case *wire.UpdateStream:
		target, command.Kind, command.Name = request.Stream, metadata.UpdateStream, request.Name
	case *wire.StreamTarget:
		target, command.Kind = request.Stream, metadata.DeleteStream
		if c.code == wire.CodePurgeStream {
			command.Kind = metadata.PurgeStream
		}
	}
	stream := view.streamOf(target)
	if stream == nil {
		c.result = wire.StatusStreamIDNotFound
		return command, false
	}
	if !access.manageStream(stream.ID) {
		c.status = wire.StatusUnauthorized
		return command, false
	}
	command.StreamID = stream.ID
	if command.Kind == metadata.DeleteStream || command.Kind == metadata.PurgeStream {
		for _, topic := range stream.Topics {
			if topic != nil {
				c.ranges = append(c.ranges, m.rangeOf(stream.ID, topic, 0, len(topic.Partitions)))
			}
		}
	}
	return command, true
}

// rangeOf covers count partitions of topic from first.
func (m *metaPlane) rangeOf(streamID uint32, topic *metadata.Topic, first, count int) topicRange {
	return topicRange{key: PartitionKey{Stream: streamID, Topic: topic.ID, Partition: uint32(first)}, count: count,
		config: PartitionConfigOf(topic.Config, len(topic.Partitions))}
}

func (m *metaPlane) topicCommand(c *call, view *frontView, access access, command metadata.Command) (
	metadata.Command, bool) {
	if request, ok := c.body.(*wire.CreateTopic); ok {
		return m.createTopic(c, view, access, command, request)
	}
	var streamID, topicID wire.Identifier
	switch request := c.body.(type) {
	case *wire.UpdateTopic:
		streamID, topicID = request.Stream, request.Topic
	case *wire.TopicTarget:
		streamID, topicID = request.Stream, request.Topic
	case *wire.PartitionsChange:
		streamID, topicID = request.Stream, request.Topic
		command.Count = request.PartitionsCount
	}
	stream, topic, ok := resolveTopic(c, view, streamID, topicID, access.manageTopic)
	if !ok {
		return command, false
	}
	command.StreamID, command.TopicID = stream.ID, topic.ID
	return m.topicKind(c, stream, topic, command)
}

func (m *metaPlane) topicKind(c *call, stream *metadata.Stream, topic *metadata.Topic, command metadata.Command) (
	metadata.Command, bool) {
	partitions := len(topic.Partitions)
	switch c.code {
	case wire.CodeUpdateTopic:
		request := c.body.(*wire.UpdateTopic)
		settings, explicit := m.front.server.topicSettings(topic)
		if err := settings.Apply(request.Options, true); err != nil {
			c.status = decodeStatus(err)
			return command, false
		}
		merged := mergeOptions(explicit, withoutDefaultZeros(request.Options))
		command.Kind, command.Name = metadata.UpdateTopic, request.Name
		command.Config = topicConfig(&settings, settings.Explicit(merged), topic.Config)
	case wire.CodeDeleteTopic:
		command.Kind = metadata.DeleteTopic
		c.ranges = append(c.ranges, m.rangeOf(stream.ID, topic, 0, partitions))
	case wire.CodePurgeTopic:
		command.Kind = metadata.PurgeTopic
		c.ranges = append(c.ranges, m.rangeOf(stream.ID, topic, 0, partitions))
	case wire.CodeCreatePartitions:
		command.Kind = metadata.CreatePartitions
	case wire.CodeDeletePartitions:
		command.Kind = metadata.DeletePartitions
		if int(command.Count) > partitions {
			c.result = wire.StatusInvalidPartitionsCount
			return command, false
		}
		c.ranges = append(c.ranges, m.rangeOf(stream.ID, topic, partitions-int(command.Count), int(command.Count)))
	}
	return command, true
}

func (m *metaPlane) createTopic(c *call, view *frontView, access access, command metadata.Command,
	request *wire.CreateTopic) (metadata.Command, bool) {
	stream := view.streamOf(request.Stream)
	if stream == nil {
		c.result = wire.StatusStreamIDNotFound
		return command, false
	}
	if !access.manageTopics(stream.ID) {
		c.status = wire.StatusUnauthorized
		return command, false
	}
	settings := m.front.server.topicDefaults()
	if err := settings.Apply(request.Options, false); err != nil {
		c.status = decodeStatus(err)
		return command, false
	}
	command.Kind, command.StreamID, command.Name = metadata.CreateTopic, stream.ID, request.Name
	command.Count = request.PartitionsCount
	explicit := settings.Explicit(withoutDefaultZeros(request.Options))
	command.Config = topicConfig(&settings, explicit, metadata.TopicConfig{ReplicationFactor: 1})
	return command, true
}

// topicConfig stores resolved settings and the explicit options.
func topicConfig(settings *wire.TopicSettings, explicit wire.Headers, base metadata.TopicConfig) metadata.TopicConfig {
	durability, err := engine.ParseDurability(settings.Durability)
	switch {
	case settings.Durability == wire.DurabilityReplicated:
		// Acknowledged once a quorum wrote it, without a storage barrier:
		// on a single node (a quorum of one) that is a completed write.
		durability = engine.DurabilityWritten
	case err != nil:
		durability = engine.DurabilityPersisted
	}
	config := base
	config.MessageExpiryMicros = settings.MessageExpiry
	config.MaxTopicSizeBytes = settings.MaxTopicSize
	config.SegmentBytes = settings.SegmentSize
	config.Compression = uint8(settings.Compression)
	config.Durability = uint8(durability)
	config.Options = config.Options[:0:0]
	for _, entry := range explicit {
		config.Options = append(config.Options, metadata.Option{Key: string(entry.Key.Value),
			Kind: uint8(entry.Value.Kind), Value: append([]byte(nil), entry.Value.Value...)})
	}
	return config
}

// withoutDefaultZeros drops the keys whose zero means "the default"
// (§6.5: segment_size, size_of_messages_required_to_save): such a key
// stays derived, as if the client had not set it.
func withoutDefaultZeros(options wire.Headers) wire.Headers {
	kept := options[:0:0]
	for _, entry := range options {
		key := string(entry.Key.Value)
		if key == wire.OptionSegmentSize || key == wire.OptionSizeOfMessagesRequiredToSave {
			if value, ok := entry.Value.Uint64(); ok && value == 0 {
				continue
			}
		}
		kept = append(kept, entry)
	}
	return kept
}

// mergeOptions lays update over base: keys in update replace base's.
func mergeOptions(base, update wire.Headers) wire.Headers {
	merged := make(wire.Headers, 0, len(base)+len(update))
	for _, entry := range base {
		if _, replaced := update.Lookup(string(entry.Key.Value)); !replaced {
			merged = append(merged, entry)
		}
	}
	return append(merged, update...)
}

func (m *metaPlane) groupCommand(c *call, view *frontView, access access, command metadata.Command) (
	metadata.Command, bool) {
	var streamID, topicID wire.Identifier
	switch request := c.body.(type) {
	case *wire.CreateConsumerGroup:
		streamID, topicID = request.Stream, request.Topic
		command.Kind, command.Name = metadata.CreateConsumerGroup, request.Name
	case *wire.GroupTarget:
		streamID, topicID = request.Stream, request.Topic
		command.Kind = metadata.DeleteConsumerGroup
	}
	stream, topic, ok := resolveTopic(c, view, streamID, topicID, access.readTopic)
	if !ok {
		return command, false
	}
	command.StreamID, command.TopicID = stream.ID, topic.ID
	if request, ok := c.body.(*wire.GroupTarget); ok {
		group := groupOf(topic, request.Group)
		if group == nil {
			c.result = wire.StatusConsumerGroupIDNotFound
			return command, false
		}
		command.GroupID = group.ID
	}
	return command, true
}

func (m *metaPlane) tokenCommand(c *call, view *frontView, command metadata.Command) (metadata.Command, bool) {
	command.UserID = c.userID
	if request, ok := c.body.(*wire.DeletePersonalAccessToken); ok {
		command.Kind, command.Name = metadata.DeletePersonalAccessToken, request.Name
		return command, true
	}
	request := c.body.(*wire.CreatePersonalAccessToken)
	if user := view.user(c.userID); user != nil && len(user.Tokens) >= m.front.server.options.TokensPerUserMax {
		c.status = wire.StatusPersonalAccessTokensLimitReached
		return command, false
	}
	command.Kind, command.Name, command.Secret = metadata.CreatePersonalAccessToken, request.Name, hashToken(c.secret)
	if request.Expiry != 0 && request.Expiry != wire.ExpiryNever {
		command.ExpiryAt = command.CreatedAt + request.Expiry
		if command.ExpiryAt < command.CreatedAt {
			command.ExpiryAt = 0 // beyond the end of time: never
		}
	}
	return command, true
}

// resolveTopic finds the stream and topic a metadata command names and
// checks the right allowed grants on them; a miss sets c's answer.
func resolveTopic(c *call, view *frontView, streamID, topicID wire.Identifier,
	allowed func(streamID, topicID uint32) bool) (*metadata.Stream, *metadata.Topic, bool) {
	stream := view.streamOf(streamID)
	if stream == nil {
		c.result = wire.StatusStreamIDNotFound
		return nil, nil, false
	}
	topic := topicOf(stream, topicID)
	if topic == nil {
		c.result = wire.StatusTopicIDNotFound
		return nil, nil, false
	}
	if !allowed(stream.ID, topic.ID) {
		c.status = wire.StatusUnauthorized
		return nil, nil, false
	}
	return stream, topic, true
}
