package shard

import (
	"slices"

	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/wire"
)

// frontView is a read-only copy of the metadata that every shard reads
// without a hop to shard 0: names to ids, partition counts, users and
// their rights, token hashes, group assignments. Shard 0 builds a new one
// after each change and publishes it with one atomic store; nothing in a
// published view changes again, so readers need no locks.
type frontView struct {
	streams []*metadata.Stream
	users   []*viewUser
	tokens  map[string]tokenOwner
	groups  map[metadata.GroupKey]*viewGroup
}

type viewUser struct {
	metadata.User
	permissions *wire.Permissions
}

type tokenOwner struct {
	userID   uint32
	expiryAt uint64
}

// viewGroup is a group's membership as of the view: members in join
// order and the generation.
type viewGroup struct {
	members    []metadata.Member
	revoking   []revokingPartition
	generation uint64
}

// buildView deep-copies state and membership into a new view.
func buildView(state *metadata.State, membership *groupTable) *frontView {
	view := &frontView{tokens: make(map[string]tokenOwner), groups: make(map[metadata.GroupKey]*viewGroup)}
	view.streams = make([]*metadata.Stream, len(state.Streams))
	for i, stream := range state.Streams {
		if stream != nil {
			view.streams[i] = copyStream(stream)
		}
	}
	view.users = make([]*viewUser, len(state.Users))
	for i, user := range state.Users {
		if user == nil {
			continue
		}
		copied := &viewUser{User: *user}
		copied.Permissions = slices.Clone(user.Permissions)
		copied.Tokens = slices.Clone(user.Tokens)
		if user.HasPermissions {
			var permissions wire.Permissions
			if _, err := permissions.Decode(user.Permissions); err == nil {
				copied.permissions = &permissions
			}
		}
		for _, token := range user.Tokens {
			view.tokens[token.TokenHash] = tokenOwner{userID: user.ID, expiryAt: token.ExpiryAt}
		}
		view.users[i] = copied
	}
	membership.snapshot(view.groups)
	return view
}

func copyStream(stream *metadata.Stream) *metadata.Stream {
	copied := *stream
	copied.Topics = make([]*metadata.Topic, len(stream.Topics))
	for i, topic := range stream.Topics {
		if topic == nil {
			continue
		}
		topicCopy := *topic
		topicCopy.Partitions = slices.Clone(topic.Partitions)
		topicCopy.Config.Options = slices.Clone(topic.Config.Options)
		topicCopy.Groups = make([]*metadata.ConsumerGroup, len(topic.Groups))
		for j, group := range topic.Groups {
			if group != nil {
				groupCopy := *group
				topicCopy.Groups[j] = &groupCopy
			}
		}
		copied.Topics[i] = &topicCopy
	}
	return &copied
}

func (v *frontView) stream(id uint32) *metadata.Stream {
	if int(id) < len(v.streams) {
		return v.streams[id]
	}
	return nil
}

// streamOf resolves an identifier by id or by exact name (§1.2).
func (v *frontView) streamOf(id wire.Identifier) *metadata.Stream {
	if id.Kind == wire.IdentifierNumeric {
		return v.stream(id.ID)
	}
	for _, stream := range v.streams {
		if stream != nil && stream.Name == string(id.Name) {
			return stream
		}
	}
	return nil
}

func topicOf(stream *metadata.Stream, id wire.Identifier) *metadata.Topic {
	if stream == nil {
		return nil
	}
	if id.Kind == wire.IdentifierNumeric {
		if int(id.ID) < len(stream.Topics) {
			return stream.Topics[id.ID]
		}
		return nil
	}
	return stream.TopicByName(string(id.Name))
}

func groupOf(topic *metadata.Topic, id wire.Identifier) *metadata.ConsumerGroup {
	if topic == nil {
		return nil
	}
	if id.Kind == wire.IdentifierNumeric {
		return topic.Group(id.ID)
	}
	return topic.GroupByName(string(id.Name))
}

func (v *frontView) user(id uint32) *viewUser {
	if int(id) < len(v.users) {
		return v.users[id]
	}
	return nil
}

func (v *frontView) userByName(name string) *viewUser {
	for _, user := range v.users {
		if user != nil && user.Username == name {
			return user
		}
	}
	return nil
}

func (v *frontView) userOf(id wire.Identifier) *viewUser {
	if id.Kind == wire.IdentifierNumeric {
		return v.user(id.ID)
	}
	return v.userByName(string(id.Name))
}

// access returns the rights of userID as of the view.
func (v *frontView) access(userID uint32) access {
	user := v.user(userID)
	if user == nil {
		return access{}
	}
	return access{root: user.ID == rootUserID, permissions: user.permissions}
}

// rootUserID is the bootstrap root user's id (§9).
const rootUserID = 0
