package client

import (
	"context"

	"github.com/whippetio/whippet/wire"
)

// SendMessages sends messages as one batch. Balanced and key partitioning
// are resolved here, as the official Go SDK does (round robin per topic;
// XXH32(key) mod the partition count, read once with GetTopic), unless
// ServerPartitioning passes them to the server. A batch of large messages
// is written from the payloads themselves (see VectoredSendBytesMin);
// otherwise each payload is copied once, into the request frame. Either
// way nothing reads messages once SendMessages has returned.
func (c *Client) SendMessages(ctx context.Context, stream, topic wire.Identifier, partitioning wire.Partitioning,
	messages []wire.OutgoingMessage) (wire.SendConfirmations, error) {
	if err := wire.CheckOutgoing(messages); err != nil {
		return nil, &Error{Command: wire.CodeSendMessages, Status: wire.StatusOf(err)}
	}
	resolved, err := c.resolvePartitioning(ctx, stream, topic, partitioning)
	if err != nil {
		return nil, err
	}
	body := &wire.OutgoingMessages{Stream: stream, Topic: topic, Partitioning: resolved, Messages: messages}
	done, err := c.invoke(ctx, wire.CodeSendMessages, body)
	if err != nil {
		if StatusOf(err) == wire.StatusPartitionNotFound {
			c.topics.forget(topicKey(stream, topic))
		}
		return nil, err
	}
	if len(done.reply.Payload) == 0 {
		return nil, &Error{Command: wire.CodeSendMessages, Status: wire.StatusInvalidCommand} // §12 #8
	}
	var confirmations wire.SendConfirmations
	return confirmations, decodePayload(done, &confirmations)
}

// ServerPartitioning makes SendMessages pass Balanced and key partitioning
// to the server instead of resolving them (the Rust SDK's behaviour).
func (c *Client) ServerPartitioning(enabled bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.serverPartitioning = enabled
}

func (c *Client) resolvePartitioning(ctx context.Context, stream, topic wire.Identifier,
	partitioning wire.Partitioning) (wire.Partitioning, error) {
	c.mu.Lock()
	passThrough := c.serverPartitioning
	c.mu.Unlock()
	if partitioning.Kind == wire.PartitioningPartitionID || passThrough {
		return partitioning, nil
	}
	if partitioning.Kind == wire.PartitioningMessagesKey &&
		(len(partitioning.Key) == 0 || len(partitioning.Key) > wire.NameBytesMax) {
		return wire.Partitioning{}, &Error{Command: wire.CodeSendMessages, Status: wire.StatusInvalidKeyValueLength}
	}
	key := topicKey(stream, topic) // only resolved sends need the cache
	count, ok := c.topics.partitionsCount(key)
	if !ok {
		details, err := c.GetTopic(ctx, stream, topic)
		if err != nil {
			return wire.Partitioning{}, err
		}
		count = details.PartitionsCount
	}
	if count == 0 {
		return wire.Partitioning{}, &Error{Command: wire.CodeSendMessages, Status: wire.StatusNoPartitions}
	}
	return wire.PartitionID(c.topics.choose(key, partitioning, count)), nil
}

// PollMessages polls messages. The returned value's records are views into
// the reply frame, which the caller now owns; iterate with Messages().
func (c *Client) PollMessages(ctx context.Context, request *wire.PollMessages) (*wire.PolledMessages, error) {
	var polled wire.PolledMessages
	return &polled, c.query(ctx, wire.CodePollMessages, request, &polled, wire.StatusEmptyResponse)
}

// PollMessagesInto polls like PollMessages, but receives the reply frame
// into buffer when it is large enough, so a consumer polling in a loop
// reuses one buffer instead of a new one per reply. It returns the buffer
// now holding the reply (buffer itself, or a larger new one to keep for
// the next call) and decodes the reply into polled, whose records are
// views into that buffer: they are valid until the caller reuses it. The
// caller must not touch buffer while the call runs.
func (c *Client) PollMessagesInto(ctx context.Context, request *wire.PollMessages, polled *wire.PolledMessages,
	buffer []byte) ([]byte, error) {
	done, err := c.queryInto(ctx, wire.CodePollMessages, request, polled, wire.StatusEmptyResponse, buffer[:cap(buffer)])
	if done == nil {
		return buffer, err
	}
	return done.buffer, err
}

// FlushUnsavedBuffer asks the server to flush a partition's buffer.
func (c *Client) FlushUnsavedBuffer(ctx context.Context, request *wire.FlushUnsavedBuffer) error {
	return c.command(ctx, wire.CodeFlushUnsavedBuffer, request)
}

// GetConsumerOffset returns a stored offset; found is false when none is
// stored (§4.4).
func (c *Client) GetConsumerOffset(ctx context.Context, target wire.OffsetTarget) (
	info wire.ConsumerOffsetInfo, found bool, err error) {
	done, err := c.invoke(ctx, wire.CodeGetConsumerOffset, &wire.GetConsumerOffset{OffsetTarget: target})
	if err != nil || len(done.reply.Payload) == 0 {
		return wire.ConsumerOffsetInfo{}, false, err
	}
	if err := decodePayload(done, &info); err != nil {
		return wire.ConsumerOffsetInfo{}, false, err
	}
	return info, true, nil
}

// StoreConsumerOffset stores an offset, waiting for replication.
func (c *Client) StoreConsumerOffset(ctx context.Context, target wire.OffsetTarget, offset uint64) error {
	return c.command(ctx, wire.CodeStoreConsumerOffset,
		&wire.StoreConsumerOffset{OffsetTarget: target, Offset: offset, Ack: wire.AckQuorum})
}

// DeleteConsumerOffset deletes a stored offset.
func (c *Client) DeleteConsumerOffset(ctx context.Context, target wire.OffsetTarget) error {
	return c.command(ctx, wire.CodeDeleteConsumerOffset,
		&wire.DeleteConsumerOffset{OffsetTarget: target, Ack: wire.AckQuorum})
}

// GetConsumerGroup returns a group with its members; a missing group is
// StatusConsumerGroupIDNotFound.
func (c *Client) GetConsumerGroup(ctx context.Context, target wire.GroupTarget) (*wire.ConsumerGroupDetails, error) {
	var details wire.ConsumerGroupDetails
	return &details, c.query(ctx, wire.CodeGetConsumerGroup, &target, &details, wire.StatusConsumerGroupIDNotFound)
}

// GetConsumerGroups lists a topic's groups.
func (c *Client) GetConsumerGroups(ctx context.Context, stream, topic wire.Identifier) (wire.ConsumerGroupList, error) {
	var groups wire.ConsumerGroupList
	return groups, c.query(ctx, wire.CodeGetConsumerGroups, &wire.TopicTarget{Stream: stream, Topic: topic},
		&groups, wire.StatusOK)
}

// CreateConsumerGroup creates a group; the server assigns its id.
func (c *Client) CreateConsumerGroup(ctx context.Context, stream, topic wire.Identifier, name string) (
	*wire.ConsumerGroupInfo, error) {
	var info wire.ConsumerGroupInfo
	return &info, c.query(ctx, wire.CodeCreateConsumerGroup,
		&wire.CreateConsumerGroup{Stream: stream, Topic: topic, Name: name}, &info, wire.StatusEmptyResponse)
}

// DeleteConsumerGroup deletes a group.
func (c *Client) DeleteConsumerGroup(ctx context.Context, target wire.GroupTarget) error {
	return c.command(ctx, wire.CodeDeleteConsumerGroup, &target)
}

// JoinConsumerGroup makes this connection a member of a group.
func (c *Client) JoinConsumerGroup(ctx context.Context, target wire.GroupTarget) error {
	return c.command(ctx, wire.CodeJoinConsumerGroup, &target)
}

// LeaveConsumerGroup leaves a group.
func (c *Client) LeaveConsumerGroup(ctx context.Context, target wire.GroupTarget) error {
	return c.command(ctx, wire.CodeLeaveConsumerGroup, &target)
}

// SyncConsumerGroup returns this member's partitions and the generation;
// a non-member gets StatusConsumerGroupMemberNotFound (§4.4).
func (c *Client) SyncConsumerGroup(ctx context.Context, target wire.GroupTarget) (*wire.GroupAssignment, error) {
	var assignment wire.GroupAssignment
	return &assignment, c.query(ctx, wire.CodeSyncConsumerGroup, &target, &assignment,
		wire.StatusConsumerGroupMemberNotFound)
}
