package client

import (
	"context"

	"github.com/whippetio/whippet/wire"
)

// GetStream returns a stream and its topics; a missing stream is
// StatusStreamIDNotFound (§4.4).
func (c *Client) GetStream(ctx context.Context, stream wire.Identifier) (*wire.StreamDetails, error) {
	var details wire.StreamDetails
	return &details, c.query(ctx, wire.CodeGetStream, &wire.StreamTarget{Stream: stream}, &details,
		wire.StatusStreamIDNotFound)
}

// GetStreams lists the streams.
func (c *Client) GetStreams(ctx context.Context) (wire.StreamList, error) {
	var streams wire.StreamList
	return streams, c.query(ctx, wire.CodeGetStreams, nil, &streams, wire.StatusOK)
}

// CreateStream creates a stream; the server assigns and returns its id.
func (c *Client) CreateStream(ctx context.Context, name string, options wire.Headers) (*wire.StreamInfo, error) {
	var info wire.StreamInfo
	return &info, c.query(ctx, wire.CodeCreateStream, &wire.CreateStream{Name: name, Options: options}, &info,
		wire.StatusEmptyResponse)
}

// UpdateStream renames a stream.
func (c *Client) UpdateStream(ctx context.Context, stream wire.Identifier, name string, options wire.Headers) error {
	return c.command(ctx, wire.CodeUpdateStream, &wire.UpdateStream{Stream: stream, Name: name, Options: options})
}

// DeleteStream deletes a stream and everything in it.
func (c *Client) DeleteStream(ctx context.Context, stream wire.Identifier) error {
	c.topics.forgetAll()
	return c.command(ctx, wire.CodeDeleteStream, &wire.StreamTarget{Stream: stream})
}

// PurgeStream deletes every message of every topic of a stream.
func (c *Client) PurgeStream(ctx context.Context, stream wire.Identifier) error {
	return c.command(ctx, wire.CodePurgeStream, &wire.StreamTarget{Stream: stream})
}

// GetTopic returns a topic and its partitions; a missing topic is
// StatusTopicIDNotFound (§4.4).
func (c *Client) GetTopic(ctx context.Context, stream, topic wire.Identifier) (*wire.TopicDetails, error) {
	var details wire.TopicDetails
	err := c.query(ctx, wire.CodeGetTopic, &wire.TopicTarget{Stream: stream, Topic: topic}, &details,
		wire.StatusTopicIDNotFound)
	if err == nil {
		c.topics.setPartitionsCount(topicKey(stream, topic), details.PartitionsCount)
	}
	return &details, err
}

// GetTopics lists a stream's topics.
func (c *Client) GetTopics(ctx context.Context, stream wire.Identifier) (wire.TopicList, error) {
	var topics wire.TopicList
	return topics, c.query(ctx, wire.CodeGetTopics, &wire.StreamTarget{Stream: stream}, &topics, wire.StatusOK)
}

// CreateTopic creates a topic; settings travel as options (wire.Topic
// option keys). The server assigns and returns its id.
func (c *Client) CreateTopic(ctx context.Context, request *wire.CreateTopic) (*wire.TopicDetails, error) {
	var details wire.TopicDetails
	return &details, c.query(ctx, wire.CodeCreateTopic, request, &details, wire.StatusEmptyResponse)
}

// UpdateTopic renames a topic and updates its options.
func (c *Client) UpdateTopic(ctx context.Context, request *wire.UpdateTopic) error {
	return c.command(ctx, wire.CodeUpdateTopic, request)
}

// DeleteTopic deletes a topic.
func (c *Client) DeleteTopic(ctx context.Context, stream, topic wire.Identifier) error {
	c.topics.forget(topicKey(stream, topic))
	return c.command(ctx, wire.CodeDeleteTopic, &wire.TopicTarget{Stream: stream, Topic: topic})
}

// PurgeTopic deletes every message of a topic.
func (c *Client) PurgeTopic(ctx context.Context, stream, topic wire.Identifier) error {
	return c.command(ctx, wire.CodePurgeTopic, &wire.TopicTarget{Stream: stream, Topic: topic})
}

// CreatePartitions appends count partitions to a topic.
func (c *Client) CreatePartitions(ctx context.Context, stream, topic wire.Identifier, count uint32) error {
	c.topics.forget(topicKey(stream, topic))
	return c.command(ctx, wire.CodeCreatePartitions,
		&wire.PartitionsChange{Stream: stream, Topic: topic, PartitionsCount: count})
}

// DeletePartitions removes the last count partitions of a topic.
func (c *Client) DeletePartitions(ctx context.Context, stream, topic wire.Identifier, count uint32) error {
	c.topics.forget(topicKey(stream, topic))
	return c.command(ctx, wire.CodeDeletePartitions,
		&wire.PartitionsChange{Stream: stream, Topic: topic, PartitionsCount: count})
}

// DeleteSegments deletes the oldest sealed segments of a partition.
func (c *Client) DeleteSegments(ctx context.Context, request *wire.DeleteSegments) error {
	return c.command(ctx, wire.CodeDeleteSegments, request)
}
