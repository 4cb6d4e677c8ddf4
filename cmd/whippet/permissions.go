package main

import (
	"strconv"
	"strings"

	"github.com/whippetio/whippet/wire"
)

// Rights in wire order, as the permission flags spell them.
var (
	globalRightNames = []string{"manage_servers", "read_servers", "manage_users", "read_users",
		"manage_streams", "read_streams", "manage_topics", "read_topics", "poll_messages", "send_messages"}
	streamRightNames = []string{"manage_stream", "read_stream", "manage_topics", "read_topics", "poll_messages",
		"send_messages"}
	topicRightNames = []string{"manage_topic", "read_topic", "poll_messages", "send_messages"}
)

func globalRights(g *wire.GlobalPermissions) []*bool {
	return []*bool{&g.ManageServers, &g.ReadServers, &g.ManageUsers, &g.ReadUsers, &g.ManageStreams,
		&g.ReadStreams, &g.ManageTopics, &g.ReadTopics, &g.PollMessages, &g.SendMessages}
}

func streamRights(s *wire.StreamPermissions) []*bool {
	return []*bool{&s.ManageStream, &s.ReadStream, &s.ManageTopics, &s.ReadTopics, &s.PollMessages, &s.SendMessages}
}

func topicRights(t *wire.TopicPermissions) []*bool {
	return []*bool{&t.ManageTopic, &t.ReadTopic, &t.PollMessages, &t.SendMessages}
}

// setRights sets the rights a comma list names ("all" names every one).
func setRights(what, text string, names []string, rights []*bool) error {
	for _, name := range strings.Split(text, ",") {
		name = strings.TrimSpace(name)
		if name == "all" {
			for _, right := range rights {
				*right = true
			}
			continue
		}
		index := -1
		for i, known := range names {
			if name == known {
				index = i
			}
		}
		if index < 0 {
			return usagef("unknown %s permission %q (want all or %s)", what, name, strings.Join(names, ","))
		}
		*rights[index] = true
	}
	return nil
}

func rightNames(names []string, rights []*bool) []string {
	out := []string{}
	for i, right := range rights {
		if *right {
			out = append(out, names[i])
		}
	}
	return out
}

// parsePermissions reads --global-permissions ("all", "none" or a comma
// list) and each --stream-permissions. Nothing at all means no
// permissions (nil).
func parsePermissions(global string, streams []string) (*wire.Permissions, error) {
	if (global == "" || global == "none") && len(streams) == 0 {
		return nil, nil
	}
	permissions := &wire.Permissions{}
	if global != "" && global != "none" {
		if err := setRights("global", global, globalRightNames, globalRights(&permissions.Global)); err != nil {
			return nil, err
		}
	}
	for _, text := range streams {
		stream, err := parseStreamPermissions(text)
		if err != nil {
			return nil, err
		}
		permissions.Streams = append(permissions.Streams, stream)
	}
	return permissions, nil
}

// parseStreamPermissions reads STREAM_ID[:rights][#TOPIC_ID[:rights]]...,
// e.g. "1:read_stream,poll_messages#2:send_messages".
func parseStreamPermissions(text string) (wire.StreamPermissions, error) {
	parts := strings.Split(text, "#")
	idText, rights, _ := strings.Cut(parts[0], ":")
	id, err := strconv.ParseUint(idText, 10, 32)
	if err != nil {
		return wire.StreamPermissions{}, usagef("stream permissions %q: the stream id must be a number", text)
	}
	stream := wire.StreamPermissions{StreamID: uint32(id)}
	if rights != "" {
		if err := setRights("stream", rights, streamRightNames, streamRights(&stream)); err != nil {
			return wire.StreamPermissions{}, err
		}
	}
	for _, topicText := range parts[1:] {
		idText, rights, _ := strings.Cut(topicText, ":")
		id, err := strconv.ParseUint(idText, 10, 32)
		if err != nil {
			return wire.StreamPermissions{}, usagef("stream permissions %q: a topic id must be a number", text)
		}
		topic := wire.TopicPermissions{TopicID: uint32(id)}
		if rights != "" {
			if err := setRights("topic", rights, topicRightNames, topicRights(&topic)); err != nil {
				return wire.StreamPermissions{}, err
			}
		}
		stream.Topics = append(stream.Topics, topic)
	}
	return stream, nil
}

type streamRightsView struct {
	StreamID uint32            `json:"stream_id"`
	Rights   []string          `json:"rights"`
	Topics   []topicRightsView `json:"topics,omitempty"`
}

type topicRightsView struct {
	TopicID uint32   `json:"topic_id"`
	Rights  []string `json:"rights"`
}

// streamRightsText renders stream permissions in the flag's syntax.
func streamRightsText(streams []streamRightsView) string {
	parts := make([]string, 0, len(streams))
	for _, stream := range streams {
		part := itoa(stream.StreamID) + ":" + strings.Join(stream.Rights, ",")
		for _, topic := range stream.Topics {
			part += "#" + itoa(topic.TopicID) + ":" + strings.Join(topic.Rights, ",")
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " ")
}

func newStreamRightsViews(p *wire.Permissions) []streamRightsView {
	if p == nil {
		return nil
	}
	views := []streamRightsView{}
	for i := range p.Streams {
		stream := &p.Streams[i]
		view := streamRightsView{StreamID: stream.StreamID, Rights: rightNames(streamRightNames, streamRights(stream))}
		for j := range stream.Topics {
			topic := &stream.Topics[j]
			view.Topics = append(view.Topics, topicRightsView{TopicID: topic.TopicID,
				Rights: rightNames(topicRightNames, topicRights(topic))})
		}
		views = append(views, view)
	}
	return views
}
