package main

import (
	"context"
	"net/http"
	"strconv"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// Consumer groups and consumer offsets.

func groupJSON(group *wire.ConsumerGroupInfo) map[string]any {
	return map[string]any{"id": group.ID, "name": group.Name, "partitions_count": group.PartitionsCount,
		"members_count": group.MembersCount}
}

func (g *gateway) groupRoutes(mux *http.ServeMux) {
	const groups = "/streams/{stream_id}/topics/{topic_id}/consumer-groups"
	g.handle(mux, "GET "+groups, func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		stream, topic := streamTopic(r)
		list, err := c.GetConsumerGroups(ctx, stream, topic)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, 0, len(list))
		for i := range list {
			out = append(out, groupJSON(&list[i]))
		}
		return out, nil
	})
	g.handle(mux, "POST "+groups, func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		var body struct {
			Name string `json:"name"`
		}
		if err := decode(w, r, &body); err != nil {
			return nil, err
		}
		stream, topic := streamTopic(r)
		group, err := c.CreateConsumerGroup(ctx, stream, topic, body.Name)
		if err != nil {
			return nil, err
		}
		return groupJSON(group), nil
	})
	g.handle(mux, "GET "+groups+"/{group_id}", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		details, err := c.GetConsumerGroup(ctx, groupTarget(r))
		if err != nil {
			return nil, err
		}
		out := groupJSON(&details.ConsumerGroupInfo)
		members := make([]map[string]any, 0, len(details.Members))
		for _, member := range details.Members {
			members = append(members, map[string]any{"id": member.ID, "partitions_count": len(member.Partitions),
				"partitions": member.Partitions})
		}
		out["members"] = members
		return out, nil
	})
	g.handle(mux, "DELETE "+groups+"/{group_id}", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		return nil, c.DeleteConsumerGroup(ctx, groupTarget(r))
	})
	g.offsetRoutes(mux)
}

func groupTarget(r *http.Request) wire.GroupTarget {
	stream, topic := streamTopic(r)
	return wire.GroupTarget{Stream: stream, Topic: topic, Group: identifier(r.PathValue("group_id"))}
}

func (g *gateway) offsetRoutes(mux *http.ServeMux) {
	const offsets = "/streams/{stream_id}/topics/{topic_id}/consumer-offsets"
	g.handle(mux, "GET "+offsets, func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		query := r.URL.Query()
		target, reason := offsetTarget(r, query.Get("consumer_kind"), query.Get("consumer_id"), query.Get("partition_id"))
		if reason != "" {
			badRequest(w, reason)
			return nil, errReplied
		}
		info, found, err := c.GetConsumerOffset(ctx, target)
		if err != nil {
			return nil, err
		}
		if !found {
			writeStatus(w, wire.StatusConsumerOffsetNotFound, "no offset stored for this consumer and partition")
			return nil, errReplied
		}
		return map[string]any{"partition_id": info.PartitionID, "current_offset": info.CurrentOffset,
			"stored_offset": info.StoredOffset}, nil
	})
	g.handle(mux, "PUT "+offsets, g.storeOffset)
	g.handle(mux, "DELETE "+offsets+"/{consumer_id}", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		query := r.URL.Query()
		target, reason := offsetTarget(r, query.Get("consumer_kind"), r.PathValue("consumer_id"), query.Get("partition_id"))
		if reason != "" {
			badRequest(w, reason)
			return nil, errReplied
		}
		return nil, c.DeleteConsumerOffset(ctx, target)
	})
}

func (g *gateway) storeOffset(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
	var body struct {
		Consumer struct {
			Kind string `json:"kind"`
			ID   any    `json:"id"`
		} `json:"consumer"`
		PartitionID *uint32 `json:"partition_id"`
		Offset      uint64  `json:"offset"`
	}
	if err := decode(w, r, &body); err != nil {
		return nil, err
	}
	partition := ""
	if body.PartitionID != nil {
		partition = strconv.FormatUint(uint64(*body.PartitionID), 10)
	}
	id := ""
	switch value := body.Consumer.ID.(type) {
	case float64:
		id = strconv.FormatUint(uint64(value), 10)
	case string:
		id = value
	}
	target, reason := offsetTarget(r, body.Consumer.Kind, id, partition)
	if reason != "" {
		badRequest(w, reason)
		return nil, errReplied
	}
	return nil, c.StoreConsumerOffset(ctx, target, body.Offset)
}

func offsetTarget(r *http.Request, kind, id, partition string) (wire.OffsetTarget, string) {
	consumer, reason := parseConsumer(kind, id)
	if reason != "" {
		return wire.OffsetTarget{}, reason
	}
	stream, topic := streamTopic(r)
	target := wire.OffsetTarget{Consumer: consumer, Stream: stream, Topic: topic}
	if partition != "" {
		number, err := strconv.ParseUint(partition, 10, 32)
		if err != nil {
			return wire.OffsetTarget{}, "partition_id must be a number"
		}
		target.Partition = wire.PartitionOf(uint32(number))
	}
	return target, ""
}
