package shard

import (
	"crypto/rand"
	"encoding/binary"
	"math"

	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/wire"
	"github.com/whippetio/whippet/wire/classic"
)

// classicTranslate rewrites a classic request into the 0.9 request it
// stands for (PROTOCOL-0.8.md §12). A classic-only rule decided here (a
// group poll's server-picked partition, a refused shape) comes back as a
// status; StatusOK with a nil body never happens.
func (f *front) classicTranslate(s *session, view *frontView, request classic.DecodableRequest) (
	wire.Code, wire.Body, classic.Status) {
	if status := classicMissing(view, request); status != classic.StatusOK {
		return 0, nil, status
	}
	switch r := request.(type) {
	case *classic.GetStream:
		return wire.CodeGetStream, &wire.GetStream{Stream: wireIdentifier(r.Stream)}, classic.StatusOK
	case *classic.GetStreams:
		return wire.CodeGetStreams, &wire.GetStreams{}, classic.StatusOK
	case *classic.CreateStream:
		return wire.CodeCreateStream, &wire.CreateStream{Name: string(r.Name)}, classic.StatusOK
	case *classic.DeleteStream:
		return wire.CodeDeleteStream, &wire.DeleteStream{Stream: wireIdentifier(r.Stream)}, classic.StatusOK
	case *classic.GetTopic:
		return wire.CodeGetTopic, &wire.GetTopic{Stream: wireIdentifier(r.Stream), Topic: wireIdentifier(r.Topic)},
			classic.StatusOK
	case *classic.GetTopics:
		return wire.CodeGetTopics, &wire.GetTopics{Stream: wireIdentifier(r.Stream)}, classic.StatusOK
	case *classic.CreateTopic:
		return wire.CodeCreateTopic, classicCreateTopic(r), classic.StatusOK
	case *classic.DeleteTopic:
		return wire.CodeDeleteTopic, &wire.DeleteTopic{Stream: wireIdentifier(r.Stream), Topic: wireIdentifier(r.Topic)},
			classic.StatusOK
	case *classic.SendMessages:
		return f.classicSend(s, view, r)
	case *classic.PollMessages:
		return f.classicPoll(s, view, r)
	}
	return classicTranslateOffsetsAndGroups(request)
}

// classicTranslateOffsetsAndGroups covers the consumer-offset and
// consumer-group commands.
func classicTranslateOffsetsAndGroups(request classic.DecodableRequest) (wire.Code, wire.Body, classic.Status) {
	switch r := request.(type) {
	case *classic.StoreConsumerOffset:
		target := offsetTarget(r.Consumer, r.Stream, r.Topic, r.Partition)
		return wire.CodeStoreConsumerOffset, &wire.StoreConsumerOffset{OffsetTarget: target, Offset: r.Offset},
			classic.StatusOK
	case *classic.GetConsumerOffset:
		target := offsetTarget(r.Consumer, r.Stream, r.Topic, r.Partition)
		return wire.CodeGetConsumerOffset, &wire.GetConsumerOffset{OffsetTarget: target}, classic.StatusOK
	case *classic.DeleteConsumerOffset:
		target := offsetTarget(r.Consumer, r.Stream, r.Topic, r.Partition)
		return wire.CodeDeleteConsumerOffset, &wire.DeleteConsumerOffset{OffsetTarget: target}, classic.StatusOK
	case *classic.CreateConsumerGroup:
		return wire.CodeCreateConsumerGroup, &wire.CreateConsumerGroup{Stream: wireIdentifier(r.Stream),
			Topic: wireIdentifier(r.Topic), Name: string(r.Name)}, classic.StatusOK
	case *classic.GetConsumerGroups:
		return wire.CodeGetConsumerGroups, &wire.GetConsumerGroups{Stream: wireIdentifier(r.Stream),
			Topic: wireIdentifier(r.Topic)}, classic.StatusOK
	case *classic.GetConsumerGroup:
		return wire.CodeGetConsumerGroup, groupTarget(r.Stream, r.Topic, r.Group), classic.StatusOK
	case *classic.DeleteConsumerGroup:
		return wire.CodeDeleteConsumerGroup, groupTarget(r.Stream, r.Topic, r.Group), classic.StatusOK
	case *classic.JoinConsumerGroup:
		return wire.CodeJoinConsumerGroup, groupTarget(r.Stream, r.Topic, r.Group), classic.StatusOK
	case *classic.LeaveConsumerGroup:
		return wire.CodeLeaveConsumerGroup, groupTarget(r.Stream, r.Topic, r.Group), classic.StatusOK
	}
	return classicTranslateMore(request)
}

func wireIdentifier(id classic.Identifier) wire.Identifier {
	return wire.Identifier{Kind: wire.IdentifierKind(id.Kind), ID: id.ID, Name: id.Name}
}

func wireConsumer(consumer classic.Consumer) wire.Consumer {
	return wire.Consumer{Kind: wire.ConsumerKind(consumer.Kind), ID: wireIdentifier(consumer.ID)}
}

func offsetTarget(consumer classic.Consumer, stream, topic classic.Identifier,
	partition classic.OptionalPartition) wire.OffsetTarget {
	return wire.OffsetTarget{Consumer: wireConsumer(consumer), Stream: wireIdentifier(stream),
		Topic: wireIdentifier(topic), Partition: wire.OptionalPartition{Present: partition.Present, ID: partition.ID}}
}

func groupTarget(stream, topic, group classic.Identifier) *wire.GroupTarget {
	return &wire.GroupTarget{Stream: wireIdentifier(stream), Topic: wireIdentifier(topic), Group: wireIdentifier(group)}
}

// classicCreateTopic maps the fixed 0.8 topic settings onto the 0.9
// option catalogue; zero means the server default in both.
// replication_factor has no 0.9 counterpart and is not kept (entries
// report 1).
func classicCreateTopic(r *classic.CreateTopic) *wire.CreateTopic {
	create := &wire.CreateTopic{Stream: wireIdentifier(r.Stream), PartitionsCount: r.PartitionsCount, Name: string(r.Name)}
	if r.Settings.Compression == classic.CompressionGzip {
		create.Options = append(create.Options, wire.HeaderEntry{
			Key:   wire.HeaderValue{Kind: wire.HeaderString, Value: []byte(wire.OptionCompressionAlgorithm)},
			Value: wire.HeaderValue{Kind: wire.HeaderString, Value: []byte(wire.CompressionGzip.String())}})
	}
	for _, setting := range [...]struct {
		key   string
		value uint64
	}{{wire.OptionMessageExpiry, r.Settings.MessageExpiry}, {wire.OptionMaxTopicSize, r.Settings.MaxTopicSize}} {
		if setting.value == 0 {
			continue
		}
		create.Options = append(create.Options, wire.HeaderEntry{
			Key:   wire.HeaderValue{Kind: wire.HeaderString, Value: []byte(setting.key)},
			Value: wire.HeaderValue{Kind: wire.HeaderUint64, Value: binary.LittleEndian.AppendUint64(nil, setting.value)}})
	}
	return create
}

// classicSend turns classic messages into a 0.9 batch record: the same
// ids (a zero id drawn as a UUIDv4, as the 0.8 server did), origin
// timestamps, payloads and user headers; offsets and the append time are
// stamped by the partition as for any batch. A 0.9 record spans at most
// u32 µs of origin time, so a longer classic batch becomes several records
// in order, all to the partition the first would go to (prelude).
func (f *front) classicSend(s *session, view *frontView, r *classic.SendMessages) (wire.Code, wire.Body, classic.Status) {
	messages := make([]wire.OutgoingMessage, r.Count)
	for i := range messages {
		message := r.Message(i)
		id := message.Header.ID
		if id == (classic.MessageID{}) {
			var random [16]byte
			_, _ = rand.Read(random[:]) // crypto/rand.Read never fails
			id = classic.UUIDv4(random)
		}
		messages[i] = wire.OutgoingMessage{ID: wireMessageID(id), OriginTimestamp: message.Header.OriginTimestamp,
			Payload: message.Payload, UserHeaders: message.UserHeaders}
	}
	partitioning := wire.Partitioning{Kind: wire.PartitioningKind(r.Partitioning.Kind),
		PartitionID: r.Partitioning.PartitionID, Key: r.Partitioning.Key}
	chunks := originChunks(messages)
	if len(chunks) > 1 && partitioning.Kind == wire.PartitioningBalanced {
		stream := view.streamOf(wireIdentifier(r.Stream)) // classicMissing found it and its topic
		partition, _ := f.choosePartition(stream.ID, topicOf(stream, wireIdentifier(r.Topic)), partitioning)
		partitioning = wire.PartitionID(partition)
	}
	var body *wire.SendMessages
	for i, chunk := range chunks {
		if err := wire.CheckOutgoing(chunk); err != nil {
			s.classic.prelude = s.classic.prelude[:0]
			return 0, nil, classic.Status(wire.StatusOf(err))
		}
		batch := make([]byte, wire.BatchBytes(chunk))
		wire.EncodeBatch(batch, chunk)
		body = &wire.SendMessages{Stream: wireIdentifier(r.Stream), Topic: wireIdentifier(r.Topic),
			Partitioning: partitioning, MessagesCount: uint32(len(chunk)), Batch: batch}
		if i < len(chunks)-1 {
			s.classic.prelude = append(s.classic.prelude, classicPrelude{code: wire.CodeSendMessages, body: body})
		}
	}
	return wire.CodeSendMessages, body, classic.StatusOK
}

// originChunks splits messages, in order, into runs whose origin
// timestamps span at most u32 µs (one 0.9 record each).
func originChunks(messages []wire.OutgoingMessage) [][]wire.OutgoingMessage {
	var chunks [][]wire.OutgoingMessage
	start := 0
	low, high := messages[0].OriginTimestamp, messages[0].OriginTimestamp
	for i := 1; i < len(messages); i++ {
		origin := messages[i].OriginTimestamp
		if max(high, origin)-min(low, origin) > math.MaxUint32 {
			chunks = append(chunks, messages[start:i])
			start, low, high = i, origin, origin
			continue
		}
		low, high = min(low, origin), max(high, origin)
	}
	return append(chunks, messages[start:])
}

// wireMessageID reads the 16 id bytes as the 0.9 frame stores them.
func wireMessageID(id classic.MessageID) wire.Uint128 {
	return wire.Uint128{Lo: binary.LittleEndian.Uint64(id[0:8]), Hi: binary.LittleEndian.Uint64(id[8:16])}
}

// classicMessageID is wireMessageID's inverse.
func classicMessageID(id wire.Uint128) classic.MessageID {
	var out classic.MessageID
	binary.LittleEndian.PutUint64(out[0:8], id.Lo)
	binary.LittleEndian.PutUint64(out[8:16], id.Hi)
	return out
}

// classicPoll maps a poll. A group poll follows 0.8 (§6.5): not a member
// ⇒ 5006; without a partition the server picks the next one of the
// member's assignment, round-robin per member; no assignment ⇒ an empty
// poll (StatusOK with a nil body: classicForward answers it here).
func (f *front) classicPoll(s *session, view *frontView, r *classic.PollMessages) (wire.Code, wire.Body, classic.Status) {
	poll := &wire.PollMessages{Consumer: wireConsumer(r.Consumer), Stream: wireIdentifier(r.Stream),
		Topic: wireIdentifier(r.Topic), Partition: wire.OptionalPartition{Present: r.Partition.Present, ID: r.Partition.ID},
		Strategy: wire.Strategy{Kind: wire.StrategyKind(r.Strategy.Kind), Value: r.Strategy.Value},
		Count:    r.Count, AutoCommit: r.AutoCommit}
	if r.Consumer.Kind != classic.ConsumerGroup {
		return wire.CodePollMessages, poll, classic.StatusOK
	}
	stream := view.streamOf(poll.Stream)
	if stream == nil {
		return 0, nil, classic.StatusStreamIdNotFound
	}
	topic := topicOf(stream, poll.Topic)
	if topic == nil {
		return 0, nil, classic.StatusTopicIdNotFound
	}
	group := groupOf(topic, poll.Consumer.ID)
	if group == nil {
		return 0, nil, classic.StatusConsumerGroupIdNotFound
	}
	key := metadata.GroupKey{StreamID: stream.ID, TopicID: topic.ID, GroupID: group.ID}
	member := view.groups[key].member(clientKey(s.client))
	if member == nil {
		return 0, nil, classic.StatusConsumerGroupMemberNotFound
	}
	if view.groups[key].revokingFrom(clientKey(s.client)) {
		// A classic member cannot sync (0.8 has no SyncConsumerGroup) and
		// polls only what the server picks from its current assignment, so
		// it is in sync at every poll: the server syncs for it, and what
		// it lost goes to its new owner now rather than at the timeout.
		s.classic.prelude = append(s.classic.prelude, classicPrelude{code: wire.CodeSyncConsumerGroup,
			body: groupTarget(r.Stream, r.Topic, r.Consumer.ID)})
	}
	if !r.Partition.Present {
		if len(member.Partitions) == 0 {
			return 0, nil, classic.StatusOK
		}
		cc := s.classic
		if cc.cursor == nil {
			cc.cursor = make(map[classicGroupKey]uint32)
		}
		cursorKey := classicGroupKey{stream: stream.ID, topic: topic.ID, group: group.ID}
		next := cc.cursor[cursorKey]
		cc.cursor[cursorKey] = next + 1
		poll.Partition = wire.PartitionOf(member.Partitions[next%uint32(len(member.Partitions))])
	}
	return wire.CodePollMessages, poll, classic.StatusOK
}

// classicMissing is the 0.8 status of a partition command on a missing
// entity (PROTOCOL-0.8.md §6.3: 1009, 2010, 3007), where 0.9 answers 20
// for some of them; StatusOK when the entities exist.
func classicMissing(view *frontView, request classic.DecodableRequest) classic.Status {
	var stream, topic classic.Identifier
	var partition classic.OptionalPartition
	switch r := request.(type) {
	case *classic.SendMessages:
		stream, topic = r.Stream, r.Topic
		if r.Partitioning.Kind == classic.PartitioningPartitionID {
			partition = classic.PartitionOf(r.Partitioning.PartitionID)
		}
	case *classic.PollMessages:
		stream, topic, partition = r.Stream, r.Topic, r.Partition
	case *classic.StoreConsumerOffset:
		stream, topic, partition = r.Stream, r.Topic, r.Partition
	case *classic.GetConsumerOffset:
		stream, topic, partition = r.Stream, r.Topic, r.Partition
	case *classic.DeleteConsumerOffset:
		stream, topic, partition = r.Stream, r.Topic, r.Partition
	default:
		return classic.StatusOK
	}
	if view == nil {
		return classic.StatusOK // not open yet: the 0.9 path waits for it
	}
	foundStream := view.streamOf(wireIdentifier(stream))
	if foundStream == nil {
		return classic.StatusStreamIdNotFound
	}
	foundTopic := topicOf(foundStream, wireIdentifier(topic))
	switch {
	case foundTopic == nil:
		return classic.StatusTopicIdNotFound
	case partition.Present && int(partition.ID) >= len(foundTopic.Partitions):
		return classic.StatusPartitionNotFound
	}
	return classic.StatusOK
}

// revokingFrom reports whether client still hands over a partition.
func (g *viewGroup) revokingFrom(client metadata.ClientID) bool {
	for _, r := range g.revoking {
		if r.client == client {
			return true
		}
	}
	return false
}
