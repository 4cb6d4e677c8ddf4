package classic

import (
	"context"
	"fmt"

	codec "github.com/whippetio/whippet/wire/classic"
)

// Ping checks the connection; it works before login.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.Do(ctx, codec.Ping{})
	return err
}

// Login logs the connection in as username (LoginUser, 38) and returns the
// user id.
func (c *Client) Login(ctx context.Context, username, password string) (uint32, error) {
	var reply codec.LoginReply
	found, err := c.Call(ctx, codec.LoginUser{Username: []byte(username), Password: []byte(password),
		Version: []byte(ClientVersion)}, &reply)
	if err == nil && !found {
		err = fmt.Errorf("classic client: empty login reply")
	}
	return reply.UserID, err
}

// LoginWithToken logs in with a personal access token (44).
func (c *Client) LoginWithToken(ctx context.Context, token string) (uint32, error) {
	var reply codec.LoginReply
	found, err := c.Call(ctx, codec.LoginWithPersonalAccessToken{Token: []byte(token)}, &reply)
	if err == nil && !found {
		err = fmt.Errorf("classic client: empty login reply")
	}
	return reply.UserID, err
}

// Logout ends the login; the connection stays open.
func (c *Client) Logout(ctx context.Context) error {
	_, err := c.Do(ctx, codec.LogoutUser{})
	return err
}

// CreateStream creates a stream; the server picks its id.
func (c *Client) CreateStream(ctx context.Context, name string) (codec.StreamEntry, error) {
	var entry codec.StreamEntry
	_, err := c.Call(ctx, codec.CreateStream{Name: []byte(name)}, &entry)
	return entry, err
}

// GetStream returns a stream with its topics; found is false when it does
// not exist (the 0.8 empty reply).
func (c *Client) GetStream(ctx context.Context, stream codec.Identifier) (codec.StreamDetails, bool, error) {
	var details codec.StreamDetails
	found, err := c.Call(ctx, codec.GetStream{Stream: stream}, &details)
	return details, found, err
}

// GetStreams lists the streams.
func (c *Client) GetStreams(ctx context.Context) ([]codec.StreamEntry, error) {
	var list codec.StreamList
	_, err := c.Call(ctx, codec.GetStreams{}, &list)
	return list.Streams, err
}

// DeleteStream deletes a stream with its topics.
func (c *Client) DeleteStream(ctx context.Context, stream codec.Identifier) error {
	_, err := c.Do(ctx, codec.DeleteStream{Stream: stream})
	return err
}

// CreateTopic creates a topic of partitions partitions (ids 0..n-1).
func (c *Client) CreateTopic(ctx context.Context, stream codec.Identifier, name string, partitions uint32,
	settings codec.TopicSettings) (codec.TopicDetails, error) {
	var details codec.TopicDetails
	_, err := c.Call(ctx, codec.CreateTopic{Stream: stream, PartitionsCount: partitions, Settings: settings,
		Name: []byte(name)}, &details)
	return details, err
}

// GetTopic returns a topic with its partitions; found is false when it
// does not exist.
func (c *Client) GetTopic(ctx context.Context, stream, topic codec.Identifier) (codec.TopicDetails, bool, error) {
	var details codec.TopicDetails
	found, err := c.Call(ctx, codec.GetTopic{Stream: stream, Topic: topic}, &details)
	return details, found, err
}

// DeleteTopic deletes a topic.
func (c *Client) DeleteTopic(ctx context.Context, stream, topic codec.Identifier) error {
	_, err := c.Do(ctx, codec.DeleteTopic{Stream: stream, Topic: topic})
	return err
}

// sendMetadataBytesMax bounds the SendMessages metadata: its length word,
// two identifiers of up to 257 bytes, a partitioning of up to 257 bytes
// and the count.
const sendMetadataBytesMax = 4 + 2*257 + 257 + 4

// SendMessages appends messages; a zero id is drawn by the server.
func (c *Client) SendMessages(ctx context.Context, stream, topic codec.Identifier, partitioning codec.Partitioning,
	messages []codec.OutgoingMessage) error {
	capacity := codec.RequestPrologueBytes + sendMetadataBytesMax
	for i := range messages {
		capacity += codec.IndexEntryBytes + codec.MessageHeaderBytes + len(messages[i].Payload) +
			len(messages[i].UserHeaders)
	}
	// The body is encoded once, behind room for its prologue.
	frame, err := codec.AppendSendMessagesBody(make([]byte, codec.RequestPrologueBytes, capacity), stream, topic,
		partitioning, messages)
	if err != nil {
		return fmt.Errorf("classic client: encode send: %w", err)
	}
	codec.AppendRequestHeader(frame[:0], codec.CodeSendMessages, len(frame)-codec.RequestPrologueBytes)
	_, err = c.DoRaw(ctx, codec.CodeSendMessages, frame)
	return err
}

// PollMessages polls; the messages are copies the caller keeps.
func (c *Client) PollMessages(ctx context.Context, poll codec.PollMessages) (codec.PollReply, []codec.Message, error) {
	var reply codec.PollReply
	if _, err := c.Call(ctx, poll, &reply); err != nil {
		return reply, nil, err
	}
	reply.Data = append([]byte(nil), reply.Data...)
	var messages []codec.Message
	iterator := reply.Messages()
	for {
		message, ok := iterator.Next()
		if !ok {
			break
		}
		messages = append(messages, message)
	}
	if len(messages) != int(reply.Count) {
		return reply, nil, fmt.Errorf("classic client: poll reply counts %d messages, holds %d", reply.Count,
			len(messages))
	}
	return reply, messages, nil
}

// StoreOffset stores a consumer offset.
func (c *Client) StoreOffset(ctx context.Context, store codec.StoreConsumerOffset) error {
	_, err := c.Do(ctx, store)
	return err
}

// GetOffset returns a stored consumer offset; found is false when none is
// stored.
func (c *Client) GetOffset(ctx context.Context, get codec.GetConsumerOffset) (codec.ConsumerOffsetReply, bool, error) {
	var reply codec.ConsumerOffsetReply
	found, err := c.Call(ctx, get, &reply)
	return reply, found, err
}

// DeleteOffset deletes a stored consumer offset.
func (c *Client) DeleteOffset(ctx context.Context, del codec.DeleteConsumerOffset) error {
	_, err := c.Do(ctx, del)
	return err
}

// CreateGroup creates a consumer group on a topic.
func (c *Client) CreateGroup(ctx context.Context, stream, topic codec.Identifier, name string) (codec.GroupEntry, error) {
	var entry codec.GroupEntry
	_, err := c.Call(ctx, codec.CreateConsumerGroup{Stream: stream, Topic: topic, Name: []byte(name)}, &entry)
	return entry, err
}

// GetGroup returns a group with its members; found is false when it does
// not exist.
func (c *Client) GetGroup(ctx context.Context, stream, topic, group codec.Identifier) (codec.GroupDetails, bool, error) {
	var details codec.GroupDetails
	found, err := c.Call(ctx, codec.GetConsumerGroup{Stream: stream, Topic: topic, Group: group}, &details)
	return details, found, err
}

// JoinGroup makes this connection a member of a group.
func (c *Client) JoinGroup(ctx context.Context, stream, topic, group codec.Identifier) error {
	_, err := c.Do(ctx, codec.JoinConsumerGroup{Stream: stream, Topic: topic, Group: group})
	return err
}

// LeaveGroup ends this connection's membership.
func (c *Client) LeaveGroup(ctx context.Context, stream, topic, group codec.Identifier) error {
	_, err := c.Do(ctx, codec.LeaveConsumerGroup{Stream: stream, Topic: topic, Group: group})
	return err
}

// DeleteGroup deletes a group.
func (c *Client) DeleteGroup(ctx context.Context, stream, topic, group codec.Identifier) error {
	_, err := c.Do(ctx, codec.DeleteConsumerGroup{Stream: stream, Topic: topic, Group: group})
	return err
}
