package shard

import (
	"slices"

	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/wire"
)

// localReads are the commands answered on the connection's shard from the
// published view, with no hop.
var localReads map[wire.Code]func(f *front, c *call, view *frontView)

func init() {
	localReads = map[wire.Code]func(f *front, c *call, view *frontView){
		wire.CodePing:                    func(*front, *call, *frontView) {},
		wire.CodeGetStats:                (*front).getStats,
		wire.CodeGetSnapshot:             getSnapshot,
		wire.CodeGetClusterMetadata:      (*front).getClusterMetadata,
		wire.CodeDescribeOptions:         describeOptions,
		wire.CodeGetMe:                   (*front).getMe,
		wire.CodeGetClient:               (*front).getClient,
		wire.CodeGetClients:              (*front).getClients,
		wire.CodeGetUser:                 getUser,
		wire.CodeGetUsers:                getUsers,
		wire.CodeGetPersonalAccessTokens: getTokens,
		wire.CodeGetStream:               (*front).getStream,
		wire.CodeGetStreams:              (*front).getStreams,
		wire.CodeGetTopic:                (*front).getTopic,
		wire.CodeGetTopics:               (*front).getTopics,
		wire.CodeGetConsumerGroup:        getGroup,
		wire.CodeGetConsumerGroups:       getGroups,
	}
}

func describeOptions(_ *front, c *call, _ *frontView) {
	request := c.body.(*wire.DescribeOptions)
	if request.Scope == wire.ScopeTopic {
		specs := wire.TopicCatalog()
		c.payload = &specs
		return
	}
	c.payload = &wire.OptionSpecs{}
}

func getUser(_ *front, c *call, view *frontView) {
	request := c.body.(*wire.UserTarget)
	user := view.userOf(request.User)
	if user == nil {
		return // §4.4: status 0, empty body
	}
	if user.ID != c.userID && !view.access(c.userID).readUsers() {
		c.status = wire.StatusUnauthorized
		return
	}
	c.payload = userDetails(user)
}

func userDetails(user *viewUser) *wire.UserDetails {
	return &wire.UserDetails{UserInfo: userInfo(user), Permissions: user.permissions}
}

func userInfo(user *viewUser) wire.UserInfo {
	return wire.UserInfo{ID: user.ID, CreatedAt: user.CreatedAt, Status: wire.UserStatus(user.Status),
		Username: user.Username}
}

func getUsers(_ *front, c *call, view *frontView) {
	if !view.access(c.userID).readUsers() {
		c.status = wire.StatusUnauthorized
		return
	}
	list := wire.UserList{}
	for _, user := range view.users {
		if user != nil {
			list = append(list, userInfo(user))
		}
	}
	c.payload = &list
}

func getTokens(_ *front, c *call, view *frontView) {
	list := wire.TokenList{}
	if user := view.user(c.userID); user != nil {
		for _, token := range user.Tokens {
			list = append(list, wire.TokenInfo{Name: token.Name, ExpiryAt: token.ExpiryAt})
		}
	}
	c.payload = &list
}

func (f *front) getStream(c *call, view *frontView) {
	request := c.body.(*wire.StreamTarget)
	stream := view.streamOf(request.Stream)
	if stream == nil {
		return // §4.4: status 0, empty body
	}
	if !view.access(c.userID).readStream(stream.ID) {
		c.status = wire.StatusUnauthorized
		return
	}
	details := &wire.StreamDetails{StreamInfo: f.streamInfo(stream)}
	for _, topic := range stream.Topics {
		if topic != nil {
			details.Topics = append(details.Topics, f.topicInfo(stream.ID, topic))
		}
	}
	c.payload = details
}

func (f *front) getStreams(c *call, view *frontView) {
	access := view.access(c.userID)
	list := wire.StreamList{}
	for _, stream := range view.streams {
		if stream != nil && access.readStream(stream.ID) {
			list = append(list, f.streamInfo(stream))
		}
	}
	c.payload = &list
}

func (f *front) streamInfo(stream *metadata.Stream) wire.StreamInfo {
	info := wire.StreamInfo{ID: stream.ID, CreatedAt: stream.CreatedAt, Name: stream.Name}
	for _, topic := range stream.Topics {
		if topic == nil {
			continue
		}
		info.TopicsCount++
		topicInfo := f.topicInfo(stream.ID, topic)
		info.SizeBytes += topicInfo.SizeBytes
		info.MessagesCount += topicInfo.MessagesCount
	}
	return info
}

func (f *front) getTopic(c *call, view *frontView) {
	request := c.body.(*wire.TopicTarget)
	stream := view.streamOf(request.Stream)
	topic := topicOf(stream, request.Topic)
	if topic == nil {
		return // §4.4: status 0, empty body
	}
	if !view.access(c.userID).readTopic(stream.ID, topic.ID) {
		c.status = wire.StatusUnauthorized
		return
	}
	c.payload = f.topicDetails(stream.ID, topic)
}

func (f *front) topicDetails(streamID uint32, topic *metadata.Topic) *wire.TopicDetails {
	details := &wire.TopicDetails{TopicInfo: f.topicInfo(streamID, topic)}
	for _, partition := range topic.Partitions {
		details.Partitions = append(details.Partitions, f.partitionInfo(streamID, topic.ID, partition))
	}
	return details
}

func (f *front) getTopics(c *call, view *frontView) {
	request := c.body.(*wire.StreamTarget)
	list := wire.TopicList{}
	c.payload = &list
	stream := view.streamOf(request.Stream)
	if stream == nil {
		return // §4.4: an empty list
	}
	if !view.access(c.userID).readStream(stream.ID) {
		c.status = wire.StatusUnauthorized
		return
	}
	for _, topic := range stream.Topics {
		if topic != nil {
			list = append(list, f.topicInfo(stream.ID, topic))
		}
	}
}

// topicInfo reports a topic with its options resolved as at create and
// its sizes summed over its partitions.
func (f *front) topicInfo(streamID uint32, topic *metadata.Topic) wire.TopicInfo {
	settings, explicit := f.server.topicSettings(topic)
	info := wire.TopicInfo{ID: topic.ID, CreatedAt: topic.CreatedAt, PartitionsCount: uint32(len(topic.Partitions)),
		MessageExpiry: topic.Config.MessageExpiryMicros, Compression: wire.Compression(topic.Config.Compression),
		MaxTopicSize: topic.Config.MaxTopicSizeBytes, Name: topic.Name,
		Options: settings.Explicit(explicit), DerivedOptions: settings.Derived(explicit)}
	for _, partition := range topic.Partitions {
		partitionInfo := f.partitionInfo(streamID, topic.ID, partition)
		info.SizeBytes += partitionInfo.SizeBytes
		info.MessagesCount += partitionInfo.MessagesCount
	}
	return info
}

// topicSettings rebuilds a topic's resolved settings from the server
// defaults and the options the client set.
func (s *Server) topicSettings(topic *metadata.Topic) (wire.TopicSettings, wire.Headers) {
	settings := s.topicDefaults()
	explicit := make(wire.Headers, 0, len(topic.Config.Options))
	for _, option := range topic.Config.Options {
		explicit = append(explicit, wire.HeaderEntry{
			Key:   wire.HeaderValue{Kind: wire.HeaderString, Value: []byte(option.Key)},
			Value: wire.HeaderValue{Kind: wire.HeaderKind(option.Kind), Value: option.Value}})
	}
	_ = settings.Apply(explicit, false) // the options were accepted at create, so they apply again
	return settings, explicit
}

// topicDefaults are the settings of a topic created without options.
func (s *Server) topicDefaults() wire.TopicSettings {
	settings := wire.DefaultTopicSettings()
	settings.SegmentSize = s.options.SegmentBytes
	settings.Durability = s.options.Durability.String()
	return settings
}

func getGroup(_ *front, c *call, view *frontView) {
	request := c.body.(*wire.GroupTarget)
	stream, topic, ok := resolveTopicStatus(c, view, request.Stream, request.Topic)
	if !ok {
		return
	}
	group := groupOf(topic, request.Group)
	if group == nil {
		return // §4.4: status 0, empty body
	}
	key := metadata.GroupKey{StreamID: stream.ID, TopicID: topic.ID, GroupID: group.ID}
	details := &wire.ConsumerGroupDetails{ConsumerGroupInfo: groupInfo(topic, group, view.groups[key])}
	if members := view.groups[key]; members != nil {
		classicView := c.session != nil && c.session.classic != nil
		for _, member := range members.members {
			partitions := member.Partitions
			if classicView {
				partitions = withRevoking(partitions, member.Client, members.revoking)
			}
			details.Members = append(details.Members, wire.GroupMember{ID: member.ID, Partitions: partitions})
		}
	}
	c.payload = details
}

// withRevoking adds the partitions client still holds pending revocation:
// a 0.8 GetConsumerGroup lists them with their current owner (0.8 §6.5),
// while 0.9 lists only what a member owns.
func withRevoking(owned []uint32, client metadata.ClientID, revoking []revokingPartition) []uint32 {
	partitions := owned
	for _, r := range revoking {
		if r.client == client && !slices.Contains(partitions, r.partition) {
			if len(partitions) == len(owned) {
				partitions = slices.Clone(owned)
			}
			partitions = append(partitions, r.partition)
		}
	}
	if len(partitions) != len(owned) { // Sorting a clone: the view is shared read-only.
		slices.Sort(partitions)
	}
	return partitions
}

func getGroups(_ *front, c *call, view *frontView) {
	request := c.body.(*wire.TopicTarget)
	stream, topic, ok := resolveTopicStatus(c, view, request.Stream, request.Topic)
	if !ok {
		return
	}
	list := wire.ConsumerGroupList{}
	for _, group := range topic.Groups {
		if group != nil {
			key := metadata.GroupKey{StreamID: stream.ID, TopicID: topic.ID, GroupID: group.ID}
			list = append(list, groupInfo(topic, group, view.groups[key]))
		}
	}
	c.payload = &list
}

func groupInfo(topic *metadata.Topic, group *metadata.ConsumerGroup, members *viewGroup) wire.ConsumerGroupInfo {
	info := wire.ConsumerGroupInfo{ID: group.ID, PartitionsCount: uint32(len(topic.Partitions)), Name: group.Name}
	if members != nil {
		info.MembersCount = uint32(len(members.members))
	}
	return info
}

// resolveTopicStatus resolves a group read's topic: a missing stream or
// topic is status 1009 / 2010 (§4.4), a denied read 41.
func resolveTopicStatus(c *call, view *frontView, streamID, topicID wire.Identifier) (
	*metadata.Stream, *metadata.Topic, bool) {
	stream := view.streamOf(streamID)
	if stream == nil {
		c.status = wire.StatusStreamIDNotFound
		return nil, nil, false
	}
	topic := topicOf(stream, topicID)
	if topic == nil {
		c.status = wire.StatusTopicIDNotFound
		return nil, nil, false
	}
	if !view.access(c.userID).readTopic(stream.ID, topic.ID) {
		c.status = wire.StatusUnauthorized
		return nil, nil, false
	}
	return stream, topic, true
}
