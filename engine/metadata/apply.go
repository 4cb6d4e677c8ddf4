package metadata

import (
	"github.com/whippetio/whippet/internal/invariant"
)

var prepares = map[Kind]func(*State, *Command) error{
	CreateStream:              prepareCreateStream,
	UpdateStream:              prepareUpdateStream,
	DeleteStream:              prepareStreamExists,
	PurgeStream:               prepareStreamExists,
	CreateTopic:               prepareCreateTopic,
	UpdateTopic:               prepareUpdateTopic,
	DeleteTopic:               prepareTopicExists,
	PurgeTopic:                prepareTopicExists,
	CreatePartitions:          preparePartitions,
	DeletePartitions:          preparePartitions,
	CreateUser:                prepareCreateUser,
	UpdateUser:                prepareUpdateUser,
	DeleteUser:                prepareDeleteUser,
	UpdatePermissions:         prepareUserExists,
	ChangePassword:            prepareUserExists,
	CreatePersonalAccessToken: prepareCreateToken,
	DeletePersonalAccessToken: prepareDeleteToken,
	CreateConsumerGroup:       prepareCreateGroup,
	DeleteConsumerGroup:       prepareDeleteGroup,
}

var applies = map[Kind]func(*State, *Command) Result{
	CreateStream:              applyCreateStream,
	UpdateStream:              applyUpdateStream,
	DeleteStream:              applyDeleteStream,
	PurgeStream:               applyPurgeStream,
	CreateTopic:               applyCreateTopic,
	UpdateTopic:               applyUpdateTopic,
	DeleteTopic:               applyDeleteTopic,
	PurgeTopic:                applyPurgeTopic,
	CreatePartitions:          applyCreatePartitions,
	DeletePartitions:          applyDeletePartitions,
	CreateUser:                applyCreateUser,
	UpdateUser:                applyUpdateUser,
	DeleteUser:                applyDeleteUser,
	UpdatePermissions:         applyUpdatePermissions,
	ChangePassword:            applyChangePassword,
	CreatePersonalAccessToken: applyCreateToken,
	DeletePersonalAccessToken: applyDeleteToken,
	CreateConsumerGroup:       applyCreateGroup,
	DeleteConsumerGroup:       applyDeleteGroup,
}

func prepareCreateStream(s *State, c *Command) error {
	if !validName(c.Name) {
		return ErrInvalidName
	}
	if s.StreamByName(c.Name) != nil {
		return ErrStreamNameExists
	}
	id := lowestFree(s.Streams)
	if id >= streamsMax {
		return ErrTooManyStreams
	}
	c.StreamID = uint32(id)
	return nil
}

func applyCreateStream(s *State, c *Command) Result {
	invariant.Assert(s.Stream(c.StreamID) == nil, "created stream slot is free")
	s.Streams = place(s.Streams, int(c.StreamID), &Stream{ID: c.StreamID, Name: c.Name, CreatedAt: c.CreatedAt})
	return Result{StreamID: c.StreamID}
}

func prepareStreamExists(s *State, c *Command) error {
	if s.Stream(c.StreamID) == nil {
		return ErrStreamNotFound
	}
	return nil
}

func prepareUpdateStream(s *State, c *Command) error {
	if err := prepareStreamExists(s, c); err != nil {
		return err
	}
	if !validName(c.Name) {
		return ErrInvalidName
	}
	if other := s.StreamByName(c.Name); other != nil && other.ID != c.StreamID {
		return ErrStreamNameExists
	}
	return nil
}

func applyUpdateStream(s *State, c *Command) Result {
	s.Stream(c.StreamID).Name = c.Name
	return Result{StreamID: c.StreamID}
}

func applyDeleteStream(s *State, c *Command) Result {
	invariant.Assert(s.Stream(c.StreamID) != nil, "deleted stream exists")
	s.Streams[c.StreamID] = nil
	s.Streams = trim(s.Streams)
	return Result{StreamID: c.StreamID}
}

func applyPurgeStream(s *State, c *Command) Result {
	for _, topic := range s.Stream(c.StreamID).Topics {
		if topic != nil {
			topic.PurgeGeneration++
		}
	}
	return Result{StreamID: c.StreamID}
}

func prepareCreateTopic(s *State, c *Command) error {
	stream := s.Stream(c.StreamID)
	if stream == nil {
		return ErrStreamNotFound
	}
	if !validName(c.Name) {
		return ErrInvalidName
	}
	if stream.TopicByName(c.Name) != nil {
		return ErrTopicNameExists
	}
	if c.Count > partitionsPerRequest {
		return ErrTooManyPartitions
	}
	id := lowestFree(stream.Topics)
	if id >= topicsPerStreamMax {
		return ErrTooManyTopics
	}
	c.TopicID = uint32(id)
	return nil
}

func applyCreateTopic(s *State, c *Command) Result {
	stream := s.Stream(c.StreamID)
	topic := &Topic{ID: c.TopicID, Name: c.Name, CreatedAt: c.CreatedAt, Config: c.Config}
	stream.Topics = place(stream.Topics, int(c.TopicID), topic)
	result := Result{StreamID: c.StreamID, TopicID: c.TopicID}
	for id := uint32(0); id < c.Count; id++ {
		topic.Partitions = append(topic.Partitions, Partition{ID: id, CreatedAt: c.CreatedAt})
		result.PartitionIDs = append(result.PartitionIDs, id)
	}
	return result
}

func prepareTopicExists(s *State, c *Command) error {
	if s.Stream(c.StreamID) == nil {
		return ErrStreamNotFound
	}
	if s.Topic(c.StreamID, c.TopicID) == nil {
		return ErrTopicNotFound
	}
	return nil
}

func prepareUpdateTopic(s *State, c *Command) error {
	if err := prepareTopicExists(s, c); err != nil {
		return err
	}
	if !validName(c.Name) {
		return ErrInvalidName
	}
	if other := s.Stream(c.StreamID).TopicByName(c.Name); other != nil && other.ID != c.TopicID {
		return ErrTopicNameExists
	}
	return nil
}

// applyUpdateTopic changes the name and the updatable options only, with
// the client-set option entries, so that the keys an update set read as
// set (explicit) rather than as resolved at create (derived).
func applyUpdateTopic(s *State, c *Command) Result {
	topic := s.Topic(c.StreamID, c.TopicID)
	topic.Name = c.Name
	topic.Config.MessageExpiryMicros = c.Config.MessageExpiryMicros
	topic.Config.MaxTopicSizeBytes = c.Config.MaxTopicSizeBytes
	topic.Config.Compression = c.Config.Compression
	topic.Config.Options = c.Config.Options
	return Result{StreamID: c.StreamID, TopicID: c.TopicID}
}

func applyDeleteTopic(s *State, c *Command) Result {
	stream := s.Stream(c.StreamID)
	stream.Topics[c.TopicID] = nil
	stream.Topics = trim(stream.Topics)
	return Result{StreamID: c.StreamID, TopicID: c.TopicID}
}

func applyPurgeTopic(s *State, c *Command) Result {
	s.Topic(c.StreamID, c.TopicID).PurgeGeneration++
	return Result{StreamID: c.StreamID, TopicID: c.TopicID}
}

func preparePartitions(s *State, c *Command) error {
	if err := prepareTopicExists(s, c); err != nil {
		return err
	}
	if c.Count == 0 || c.Count > partitionsPerRequest {
		return ErrTooManyPartitions
	}
	partitions := len(s.Topic(c.StreamID, c.TopicID).Partitions)
	if c.Kind == CreatePartitions && partitions+int(c.Count) > partitionsPerTopicMax {
		return ErrTooManyPartitions
	}
	if c.Kind == DeletePartitions && int(c.Count) > partitions {
		return ErrTooManyPartitions
	}
	return nil
}

// applyCreatePartitions appends ids max+1 ...; DeletePartitions removes
// the highest ids (PROTOCOL.md §9).
func applyCreatePartitions(s *State, c *Command) Result {
	topic := s.Topic(c.StreamID, c.TopicID)
	result := Result{StreamID: c.StreamID, TopicID: c.TopicID}
	next := uint32(len(topic.Partitions))
	for index := uint32(0); index < c.Count; index++ {
		topic.Partitions = append(topic.Partitions, Partition{ID: next + index, CreatedAt: c.CreatedAt})
		result.PartitionIDs = append(result.PartitionIDs, next+index)
	}
	return result
}

func applyDeletePartitions(s *State, c *Command) Result {
	topic := s.Topic(c.StreamID, c.TopicID)
	result := Result{StreamID: c.StreamID, TopicID: c.TopicID}
	keep := len(topic.Partitions) - int(c.Count)
	for _, partition := range topic.Partitions[keep:] {
		result.PartitionIDs = append(result.PartitionIDs, partition.ID)
	}
	topic.Partitions = topic.Partitions[:keep]
	return result
}
