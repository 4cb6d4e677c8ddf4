package metadata

import (
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/whippetio/whippet/engine/metadata/fbs"
)

// encodeSnapshot returns the flatbuffers bytes of the whole state.
func encodeSnapshot(builder *flatbuffers.Builder, state *State) []byte {
	builder.Reset()
	var streams, users []flatbuffers.UOffsetT
	for _, stream := range state.Streams {
		if stream != nil {
			streams = append(streams, encodeStream(builder, stream))
		}
	}
	for _, user := range state.Users {
		if user != nil {
			users = append(users, encodeUser(builder, user))
		}
	}
	streamVector := offsetVector(builder, streams, fbs.SnapshotStartStreamsVector)
	userVector := offsetVector(builder, users, fbs.SnapshotStartUsersVector)
	fbs.SnapshotStart(builder)
	fbs.SnapshotAddIndex(builder, state.Index)
	fbs.SnapshotAddStreams(builder, streamVector)
	fbs.SnapshotAddUsers(builder, userVector)
	fbs.SnapshotAddAppliedOp(builder, state.AppliedOp)
	builder.Finish(fbs.SnapshotEnd(builder))
	return builder.FinishedBytes()
}

func encodeStream(builder *flatbuffers.Builder, stream *Stream) flatbuffers.UOffsetT {
	var topics []flatbuffers.UOffsetT
	for _, topic := range stream.Topics {
		if topic != nil {
			topics = append(topics, encodeTopic(builder, topic))
		}
	}
	topicVector := offsetVector(builder, topics, fbs.StreamStartTopicsVector)
	name := builder.CreateString(stream.Name)
	fbs.StreamStart(builder)
	fbs.StreamAddId(builder, stream.ID)
	fbs.StreamAddName(builder, name)
	fbs.StreamAddCreatedAt(builder, stream.CreatedAt)
	fbs.StreamAddTopics(builder, topicVector)
	return fbs.StreamEnd(builder)
}

func encodeTopic(builder *flatbuffers.Builder, topic *Topic) flatbuffers.UOffsetT {
	partitions := make([]flatbuffers.UOffsetT, len(topic.Partitions))
	for index, partition := range topic.Partitions {
		fbs.PartitionStart(builder)
		fbs.PartitionAddId(builder, partition.ID)
		fbs.PartitionAddCreatedAt(builder, partition.CreatedAt)
		partitions[index] = fbs.PartitionEnd(builder)
	}
	var groups []flatbuffers.UOffsetT
	for _, group := range topic.Groups {
		if group == nil {
			continue
		}
		name := builder.CreateString(group.Name)
		fbs.GroupStart(builder)
		fbs.GroupAddId(builder, group.ID)
		fbs.GroupAddName(builder, name)
		groups = append(groups, fbs.GroupEnd(builder))
	}
	partitionVector := offsetVector(builder, partitions, fbs.TopicStartPartitionsVector)
	groupVector := offsetVector(builder, groups, fbs.TopicStartGroupsVector)
	config := encodeConfig(builder, &topic.Config)
	name := builder.CreateString(topic.Name)
	fbs.TopicStart(builder)
	fbs.TopicAddId(builder, topic.ID)
	fbs.TopicAddName(builder, name)
	fbs.TopicAddCreatedAt(builder, topic.CreatedAt)
	fbs.TopicAddConfig(builder, config)
	fbs.TopicAddPartitions(builder, partitionVector)
	fbs.TopicAddGroups(builder, groupVector)
	fbs.TopicAddNextGroupId(builder, topic.NextGroupID)
	fbs.TopicAddPurgeGeneration(builder, topic.PurgeGeneration)
	return fbs.TopicEnd(builder)
}

func encodeUser(builder *flatbuffers.Builder, user *User) flatbuffers.UOffsetT {
	tokens := make([]flatbuffers.UOffsetT, len(user.Tokens))
	for index, token := range user.Tokens {
		name := builder.CreateString(token.Name)
		hash := builder.CreateString(token.TokenHash)
		fbs.TokenStart(builder)
		fbs.TokenAddName(builder, name)
		fbs.TokenAddTokenHash(builder, hash)
		fbs.TokenAddExpiryAt(builder, token.ExpiryAt)
		tokens[index] = fbs.TokenEnd(builder)
	}
	tokenVector := offsetVector(builder, tokens, fbs.UserStartTokensVector)
	username := builder.CreateString(user.Username)
	password := builder.CreateString(user.PasswordHash)
	permissions := builder.CreateByteVector(user.Permissions)
	fbs.UserStart(builder)
	fbs.UserAddId(builder, user.ID)
	fbs.UserAddUsername(builder, username)
	fbs.UserAddPasswordHash(builder, password)
	fbs.UserAddStatus(builder, user.Status)
	fbs.UserAddHasPermissions(builder, user.HasPermissions)
	fbs.UserAddPermissions(builder, permissions)
	fbs.UserAddCreatedAt(builder, user.CreatedAt)
	fbs.UserAddTokens(builder, tokenVector)
	return fbs.UserEnd(builder)
}

// decodeSnapshot rebuilds the state from checksum-verified bytes.
func decodeSnapshot(raw []byte) *State {
	snapshot := fbs.GetRootAsSnapshot(raw, 0)
	state := &State{Index: snapshot.Index(), AppliedOp: snapshot.AppliedOp()}
	var stream fbs.Stream
	for index := 0; index < snapshot.StreamsLength(); index++ {
		if snapshot.Streams(&stream, index) {
			decoded := decodeStream(&stream)
			state.Streams = place(state.Streams, int(decoded.ID), decoded)
		}
	}
	var user fbs.User
	for index := 0; index < snapshot.UsersLength(); index++ {
		if snapshot.Users(&user, index) {
			decoded := decodeUser(&user)
			state.Users = place(state.Users, int(decoded.ID), decoded)
		}
	}
	return state
}

func decodeStream(stream *fbs.Stream) *Stream {
	decoded := &Stream{ID: stream.Id(), Name: string(stream.Name()), CreatedAt: stream.CreatedAt()}
	var topic fbs.Topic
	for index := 0; index < stream.TopicsLength(); index++ {
		if stream.Topics(&topic, index) {
			t := decodeTopic(&topic)
			decoded.Topics = place(decoded.Topics, int(t.ID), t)
		}
	}
	return decoded
}

func decodeTopic(topic *fbs.Topic) *Topic {
	decoded := &Topic{
		ID: topic.Id(), Name: string(topic.Name()), CreatedAt: topic.CreatedAt(),
		NextGroupID: topic.NextGroupId(), PurgeGeneration: topic.PurgeGeneration(),
	}
	var config fbs.TopicConfig
	if topic.Config(&config) != nil {
		decoded.Config = decodeConfig(&config)
	}
	var partition fbs.Partition
	for index := 0; index < topic.PartitionsLength(); index++ {
		if topic.Partitions(&partition, index) {
			decoded.Partitions = append(decoded.Partitions, Partition{ID: partition.Id(), CreatedAt: partition.CreatedAt()})
		}
	}
	var group fbs.Group
	for index := 0; index < topic.GroupsLength(); index++ {
		if topic.Groups(&group, index) {
			decoded.Groups = place(decoded.Groups, int(group.Id()), &ConsumerGroup{ID: group.Id(), Name: string(group.Name())})
		}
	}
	return decoded
}

func decodeUser(user *fbs.User) *User {
	decoded := &User{
		ID: user.Id(), Username: string(user.Username()), PasswordHash: string(user.PasswordHash()),
		Status: user.Status(), HasPermissions: user.HasPermissions(),
		Permissions: append([]byte(nil), user.PermissionsBytes()...), CreatedAt: user.CreatedAt(),
	}
	var token fbs.Token
	for index := 0; index < user.TokensLength(); index++ {
		if user.Tokens(&token, index) {
			decoded.Tokens = append(decoded.Tokens, Token{
				Name: string(token.Name()), TokenHash: string(token.TokenHash()), ExpiryAt: token.ExpiryAt(),
			})
		}
	}
	return decoded
}

// snapshotIDsInRange reports whether every id a layout-checked snapshot
// holds is below its limit: ids index slices, so a damaged one would make
// decodeSnapshot allocate without bound.
func snapshotIDsInRange(raw []byte) bool {
	snapshot := fbs.GetRootAsSnapshot(raw, 0)
	var stream fbs.Stream
	for index := 0; index < snapshot.StreamsLength(); index++ {
		if snapshot.Streams(&stream, index) && (stream.Id() >= streamsMax || !topicIDsInRange(&stream)) {
			return false
		}
	}
	var user fbs.User
	for index := 0; index < snapshot.UsersLength(); index++ {
		if snapshot.Users(&user, index) && user.Id() >= usersMax {
			return false
		}
	}
	return true
}

func topicIDsInRange(stream *fbs.Stream) bool {
	var topic fbs.Topic
	var group fbs.Group
	for index := 0; index < stream.TopicsLength(); index++ {
		if !stream.Topics(&topic, index) {
			continue
		}
		if topic.Id() >= topicsPerStreamMax || topic.PartitionsLength() > partitionsPerTopicMax {
			return false
		}
		for g := 0; g < topic.GroupsLength(); g++ {
			if topic.Groups(&group, g) && group.Id() >= groupsPerTopicMax {
				return false
			}
		}
	}
	return true
}
