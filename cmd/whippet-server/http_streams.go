package main

import (
	"context"
	"net/http"
	"strconv"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// Streams, topics and partitions in Iggy's JSON shapes.

func streamJSON(s *wire.StreamInfo) map[string]any {
	return map[string]any{"id": s.ID, "created_at": s.CreatedAt, "name": s.Name, "size": s.SizeBytes,
		"messages_count": s.MessagesCount, "topics_count": s.TopicsCount}
}

func topicJSON(t *wire.TopicInfo) map[string]any {
	return map[string]any{"id": t.ID, "created_at": t.CreatedAt, "name": t.Name, "size": t.SizeBytes,
		"message_expiry": t.MessageExpiry, "compression_algorithm": t.Compression.String(),
		"max_topic_size": t.MaxTopicSize, "replication_factor": 1, "messages_count": t.MessagesCount,
		"partitions_count": t.PartitionsCount}
}

func topicDetailsJSON(t *wire.TopicDetails) map[string]any {
	out := topicJSON(&t.TopicInfo)
	partitions := make([]map[string]any, 0, len(t.Partitions))
	for _, p := range t.Partitions {
		partitions = append(partitions, map[string]any{"id": p.ID, "created_at": p.CreatedAt,
			"segments_count": p.SegmentsCount, "current_offset": p.CurrentOffset, "size": p.SizeBytes,
			"messages_count": p.MessagesCount})
	}
	out["partitions"] = partitions
	return out
}

type call = func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error)

func (g *gateway) streamRoutes(mux *http.ServeMux) {
	g.handle(mux, "GET /streams", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		streams, err := c.GetStreams(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, 0, len(streams))
		for i := range streams {
			out = append(out, streamJSON(&streams[i]))
		}
		return out, nil
	})
	g.handle(mux, "POST /streams", g.createStream)
	g.handle(mux, "GET /streams/{stream_id}", g.getStream)
	g.handle(mux, "PUT /streams/{stream_id}", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		var body struct {
			Name string `json:"name"`
		}
		if err := decode(w, r, &body); err != nil {
			return nil, err
		}
		return nil, c.UpdateStream(ctx, identifier(r.PathValue("stream_id")), body.Name, nil)
	})
	g.handle(mux, "DELETE /streams/{stream_id}", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		return nil, c.DeleteStream(ctx, identifier(r.PathValue("stream_id")))
	})
	g.handle(mux, "DELETE /streams/{stream_id}/purge", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		return nil, c.PurgeStream(ctx, identifier(r.PathValue("stream_id")))
	})
	g.topicRoutes(mux)
}

func (g *gateway) createStream(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
	var body struct {
		Name string `json:"name"`
	}
	if err := decode(w, r, &body); err != nil {
		return nil, err
	}
	stream, err := c.CreateStream(ctx, body.Name, nil)
	if err != nil {
		return nil, err
	}
	return streamJSON(stream), nil
}

func (g *gateway) getStream(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
	stream, err := c.GetStream(ctx, identifier(r.PathValue("stream_id")))
	if err != nil {
		return nil, err
	}
	out := streamJSON(&stream.StreamInfo)
	topics := make([]map[string]any, 0, len(stream.Topics))
	for i := range stream.Topics {
		topics = append(topics, topicJSON(&stream.Topics[i]))
	}
	out["topics"] = topics
	return out, nil
}

func (g *gateway) topicRoutes(mux *http.ServeMux) {
	const topic = "/streams/{stream_id}/topics/{topic_id}"
	g.handle(mux, "GET /streams/{stream_id}/topics", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		topics, err := c.GetTopics(ctx, identifier(r.PathValue("stream_id")))
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, 0, len(topics))
		for i := range topics {
			out = append(out, topicJSON(&topics[i]))
		}
		return out, nil
	})
	g.handle(mux, "POST /streams/{stream_id}/topics", g.createTopic)
	g.handle(mux, "GET "+topic, func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		stream, topic := streamTopic(r)
		details, err := c.GetTopic(ctx, stream, topic)
		if err != nil {
			return nil, err
		}
		return topicDetailsJSON(details), nil
	})
	g.handle(mux, "PUT "+topic, func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		var body topicBody
		if err := decode(w, r, &body); err != nil {
			return nil, err
		}
		stream, topic := streamTopic(r)
		return nil, c.UpdateTopic(ctx, &wire.UpdateTopic{Stream: stream, Topic: topic, Name: body.Name,
			Options: body.options()})
	})
	g.handle(mux, "DELETE "+topic, func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		stream, topic := streamTopic(r)
		return nil, c.DeleteTopic(ctx, stream, topic)
	})
	g.handle(mux, "DELETE "+topic+"/purge", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		stream, topic := streamTopic(r)
		return nil, c.PurgeTopic(ctx, stream, topic)
	})
	g.handle(mux, "POST "+topic+"/partitions", g.createPartitions)
	g.handle(mux, "DELETE "+topic+"/partitions", g.deletePartitions)
}

func streamTopic(r *http.Request) (wire.Identifier, wire.Identifier) {
	return identifier(r.PathValue("stream_id")), identifier(r.PathValue("topic_id"))
}

// topicBody is a create or update topic body: Iggy's settings, which
// travel to the server as topic options (0 or absent: the default).
type topicBody struct {
	Name            string  `json:"name"`
	PartitionsCount uint32  `json:"partitions_count"`
	Compression     *string `json:"compression_algorithm"`
	MessageExpiry   *uint64 `json:"message_expiry"`
	MaxTopicSize    *uint64 `json:"max_topic_size"`
}

func (b *topicBody) options() wire.Headers {
	var options wire.Headers
	if b.Compression != nil {
		options = append(options, wire.StringHeader(wire.OptionCompressionAlgorithm, *b.Compression))
	}
	if b.MessageExpiry != nil && *b.MessageExpiry != 0 {
		options = append(options, wire.Uint64Header(wire.OptionMessageExpiry, *b.MessageExpiry))
	}
	if b.MaxTopicSize != nil && *b.MaxTopicSize != 0 {
		options = append(options, wire.Uint64Header(wire.OptionMaxTopicSize, *b.MaxTopicSize))
	}
	return options
}

func (g *gateway) createTopic(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
	var body topicBody
	if err := decode(w, r, &body); err != nil {
		return nil, err
	}
	details, err := c.CreateTopic(ctx, &wire.CreateTopic{Stream: identifier(r.PathValue("stream_id")),
		PartitionsCount: body.PartitionsCount, Name: body.Name, Options: body.options()})
	if err != nil {
		return nil, err
	}
	return topicDetailsJSON(details), nil
}

func (g *gateway) createPartitions(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
	var body struct {
		PartitionsCount uint32 `json:"partitions_count"`
	}
	if err := decode(w, r, &body); err != nil {
		return nil, err
	}
	stream, topic := streamTopic(r)
	return nil, c.CreatePartitions(ctx, stream, topic, body.PartitionsCount)
}

func (g *gateway) deletePartitions(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
	count, err := strconv.ParseUint(r.URL.Query().Get("partitions_count"), 10, 32)
	if err != nil {
		badRequest(w, "partitions_count must be a number")
		return nil, errReplied
	}
	stream, topic := streamTopic(r)
	return nil, c.DeletePartitions(ctx, stream, topic, uint32(count))
}
