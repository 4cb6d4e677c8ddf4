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

// viewChange says what a new view copies again from the state; the rest
// it shares with the previous view (whose parts never change), so a
// change to one stream costs one stream's copy, not the whole metadata.
type viewChange struct {
	allStreams bool
	stream     int // the one stream to copy again, or -1
	users      bool
	groups     bool
}

var (
	viewEverything = viewChange{allStreams: true, stream: -1, users: true, groups: true}
	viewGroupsOnly = viewChange{stream: -1, groups: true}
)

// buildView makes the view after change, copying what changed from state
// and membership and sharing the rest with prev (nil: copy everything).
func buildView(prev *frontView, state *metadata.State, membership *groupTable, change viewChange) *frontView {
	if prev == nil {
		change = viewEverything
	}
	view := &frontView{streams: make([]*metadata.Stream, len(state.Streams))}
	for i, stream := range state.Streams {
		switch {
		case stream == nil:
		case change.allStreams || i == change.stream || i >= len(prev.streams) || prev.streams[i] == nil:
			view.streams[i] = copyStream(stream)
		default:
			view.streams[i] = prev.streams[i]
		}
	}
	view.users, view.tokens, view.groups = prevParts(prev)
	if change.users {
		view.users, view.tokens = copyUsers(state)
	}
	if change.groups {
		view.groups = make(map[metadata.GroupKey]*viewGroup)
		membership.snapshot(view.groups)
	}
	return view
}

func prevParts(prev *frontView) ([]*viewUser, map[string]tokenOwner, map[metadata.GroupKey]*viewGroup) {
	if prev == nil {
		return nil, nil, nil
	}
	return prev.users, prev.tokens, prev.groups
}

// copyUsers copies the users with their parsed rights and token index.
func copyUsers(state *metadata.State) ([]*viewUser, map[string]tokenOwner) {
	users := make([]*viewUser, len(state.Users))
	tokens := make(map[string]tokenOwner)
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
			tokens[token.TokenHash] = tokenOwner{userID: user.ID, expiryAt: token.ExpiryAt}
		}
		users[i] = copied
	}
	return users, tokens
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
