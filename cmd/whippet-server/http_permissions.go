package main

import (
	"context"
	"net/http"
	"slices"
	"strconv"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// Permissions in Iggy's JSON: global rights, then streams and their
// topics keyed by id.

type globalJSON struct {
	ManageServers bool `json:"manage_servers"`
	ReadServers   bool `json:"read_servers"`
	ManageUsers   bool `json:"manage_users"`
	ReadUsers     bool `json:"read_users"`
	ManageStreams bool `json:"manage_streams"`
	ReadStreams   bool `json:"read_streams"`
	ManageTopics  bool `json:"manage_topics"`
	ReadTopics    bool `json:"read_topics"`
	PollMessages  bool `json:"poll_messages"`
	SendMessages  bool `json:"send_messages"`
}

type topicRightsJSON struct {
	ManageTopic  bool `json:"manage_topic"`
	ReadTopic    bool `json:"read_topic"`
	PollMessages bool `json:"poll_messages"`
	SendMessages bool `json:"send_messages"`
}

type streamRightsJSON struct {
	ManageStream bool                       `json:"manage_stream"`
	ReadStream   bool                       `json:"read_stream"`
	ManageTopics bool                       `json:"manage_topics"`
	ReadTopics   bool                       `json:"read_topics"`
	PollMessages bool                       `json:"poll_messages"`
	SendMessages bool                       `json:"send_messages"`
	Topics       map[string]topicRightsJSON `json:"topics,omitempty"`
}

type permissionsJSON struct {
	Global  globalJSON                  `json:"global"`
	Streams map[string]streamRightsJSON `json:"streams,omitempty"`
}

func permissionsToJSON(p *wire.Permissions) *permissionsJSON {
	if p == nil {
		return nil
	}
	out := &permissionsJSON{Global: globalJSON(p.Global)}
	for _, stream := range p.Streams {
		if out.Streams == nil {
			out.Streams = map[string]streamRightsJSON{}
		}
		rights := streamRightsJSON{ManageStream: stream.ManageStream, ReadStream: stream.ReadStream,
			ManageTopics: stream.ManageTopics, ReadTopics: stream.ReadTopics, PollMessages: stream.PollMessages,
			SendMessages: stream.SendMessages}
		for _, topic := range stream.Topics {
			if rights.Topics == nil {
				rights.Topics = map[string]topicRightsJSON{}
			}
			rights.Topics[strconv.FormatUint(uint64(topic.TopicID), 10)] = topicRightsJSON{ManageTopic: topic.ManageTopic,
				ReadTopic: topic.ReadTopic, PollMessages: topic.PollMessages, SendMessages: topic.SendMessages}
		}
		out.Streams[strconv.FormatUint(uint64(stream.StreamID), 10)] = rights
	}
	return out
}

// permissionsFromJSON converts, with ids in ascending order; reason is
// set when a key is not a number.
func permissionsFromJSON(in *permissionsJSON) (*wire.Permissions, string) {
	if in == nil {
		return nil, ""
	}
	out := &wire.Permissions{Global: wire.GlobalPermissions(in.Global)}
	for key, rights := range in.Streams {
		streamID, err := strconv.ParseUint(key, 10, 32)
		if err != nil {
			return nil, "permissions.streams keys must be stream ids"
		}
		stream := wire.StreamPermissions{StreamID: uint32(streamID), ManageStream: rights.ManageStream,
			ReadStream: rights.ReadStream, ManageTopics: rights.ManageTopics, ReadTopics: rights.ReadTopics,
			PollMessages: rights.PollMessages, SendMessages: rights.SendMessages}
		for topicKey, topic := range rights.Topics {
			topicID, err := strconv.ParseUint(topicKey, 10, 32)
			if err != nil {
				return nil, "permissions topics keys must be topic ids"
			}
			stream.Topics = append(stream.Topics, wire.TopicPermissions{TopicID: uint32(topicID),
				ManageTopic: topic.ManageTopic, ReadTopic: topic.ReadTopic, PollMessages: topic.PollMessages,
				SendMessages: topic.SendMessages})
		}
		slices.SortFunc(stream.Topics, func(a, b wire.TopicPermissions) int { return int(a.TopicID) - int(b.TopicID) })
		out.Streams = append(out.Streams, stream)
	}
	slices.SortFunc(out.Streams, func(a, b wire.StreamPermissions) int { return int(a.StreamID) - int(b.StreamID) })
	return out, ""
}

func (g *gateway) updatePermissions(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
	var body struct {
		Permissions *permissionsJSON `json:"permissions"`
	}
	if err := decode(w, r, &body); err != nil {
		return nil, err
	}
	permissions, reason := permissionsFromJSON(body.Permissions)
	if reason != "" {
		badRequest(w, reason)
		return nil, errReplied
	}
	return nil, c.UpdatePermissions(ctx, identifier(r.PathValue("user_id")), permissions)
}
