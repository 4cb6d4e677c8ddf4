package metadata

import (
	"errors"

	"github.com/whippetio/whippet/internal/invariant"
)

// Operating errors of commands; shard maps them to Iggy status codes.
var (
	ErrStreamNotFound    = errors.New("metadata: stream not found")
	ErrStreamNameExists  = errors.New("metadata: stream name already exists")
	ErrTopicNotFound     = errors.New("metadata: topic not found")
	ErrTopicNameExists   = errors.New("metadata: topic name already exists")
	ErrTooManyStreams    = errors.New("metadata: too many streams")
	ErrTooManyTopics     = errors.New("metadata: too many topics")
	ErrTooManyPartitions = errors.New("metadata: invalid partition count")
	ErrUserNotFound      = errors.New("metadata: user not found")
	ErrUsernameExists    = errors.New("metadata: username already exists")
	ErrTooManyUsers      = errors.New("metadata: too many users")
	ErrInvalidName       = errors.New("metadata: invalid name")
	ErrTokenNotFound     = errors.New("metadata: personal access token not found")
	ErrTokenNameExists   = errors.New("metadata: personal access token name already exists")
	ErrTooManyTokens     = errors.New("metadata: too many personal access tokens")
	ErrGroupNotFound     = errors.New("metadata: consumer group not found")
	ErrGroupNameExists   = errors.New("metadata: consumer group name already exists")
	ErrTooManyGroups     = errors.New("metadata: too many consumer groups")
	ErrRootUser          = errors.New("metadata: the root user cannot be deleted")
	ErrUnknownCommand    = errors.New("metadata: unknown command")
	ErrCommandTooLarge   = errors.New("metadata: command exceeds the record limit")
)

// State is the metadata state machine: streams, topics, partitions,
// consumer groups, users and personal access tokens. Ids index slices
// (nil = free slot), so iteration order is id order, never map order.
// It does no I/O; Store persists the commands it applies.
type State struct {
	Streams []*Stream
	Users   []*User
	// Index is the last applied record index.
	Index uint64
	// AppliedOp is the replication op of the last applied command that
	// carried one (cluster mode), or the op an installed snapshot is as
	// of: the durable mark a replica restarts from.
	AppliedOp uint64
}

// Stream is one stream.
type Stream struct {
	ID        uint32
	Name      string
	CreatedAt uint64
	Topics    []*Topic
}

// Topic is one topic of a stream.
type Topic struct {
	ID         uint32
	Name       string
	CreatedAt  uint64
	Config     TopicConfig
	Partitions []Partition
	// Groups is indexed by group id; ids are monotonic and never reused,
	// because they key stored group offsets.
	Groups      []*ConsumerGroup
	NextGroupID uint32
	// PurgeGeneration counts purges; partition owners compare it with the
	// generation they applied.
	PurgeGeneration uint64
}

// Partition is one partition of a topic.
type Partition struct {
	ID        uint32
	CreatedAt uint64
}

// ConsumerGroup is a topic's consumer group; membership is per session
// and lives in Membership, not in the log.
type ConsumerGroup struct {
	ID   uint32
	Name string
}

// User is one user.
type User struct {
	ID             uint32
	Username       string
	PasswordHash   string
	Status         uint8
	HasPermissions bool
	Permissions    []byte
	CreatedAt      uint64
	Tokens         []Token
}

// Token is a personal access token, stored as its hash.
type Token struct {
	Name      string
	TokenHash string
	ExpiryAt  uint64 // 0: never
}

// Stream returns the stream with id, or nil.
func (s *State) Stream(id uint32) *Stream {
	if int(id) >= len(s.Streams) {
		return nil
	}
	return s.Streams[id]
}

// Topic returns the topic, or nil.
func (s *State) Topic(streamID, topicID uint32) *Topic {
	stream := s.Stream(streamID)
	if stream == nil || int(topicID) >= len(stream.Topics) {
		return nil
	}
	return stream.Topics[topicID]
}

// User returns the user with id, or nil.
func (s *State) User(id uint32) *User {
	if int(id) >= len(s.Users) {
		return nil
	}
	return s.Users[id]
}

// StreamByName returns the stream named name, or nil.
func (s *State) StreamByName(name string) *Stream {
	for _, stream := range s.Streams {
		if stream != nil && stream.Name == name {
			return stream
		}
	}
	return nil
}

// TopicByName returns the stream's topic named name, or nil.
func (s *Stream) TopicByName(name string) *Topic {
	for _, topic := range s.Topics {
		if topic != nil && topic.Name == name {
			return topic
		}
	}
	return nil
}

// UserByName returns the user named username, or nil.
func (s *State) UserByName(username string) *User {
	for _, user := range s.Users {
		if user != nil && user.Username == username {
			return user
		}
	}
	return nil
}

// Group returns the topic's group with id, or nil.
func (t *Topic) Group(id uint32) *ConsumerGroup {
	if int(id) >= len(t.Groups) {
		return nil
	}
	return t.Groups[id]
}

// GroupByName returns the topic's group named name, or nil.
func (t *Topic) GroupByName(name string) *ConsumerGroup {
	for _, group := range t.Groups {
		if group != nil && group.Name == name {
			return group
		}
	}
	return nil
}

// Prepare validates command against the state and resolves the ids it
// creates. It changes nothing; Apply of a prepared command cannot fail.
func (s *State) Prepare(command *Command) error {
	check, ok := prepares[command.Kind]
	if !ok {
		return ErrUnknownCommand
	}
	return check(s, command)
}

// Apply applies a prepared command with its record index.
func (s *State) Apply(index uint64, command *Command) Result {
	invariant.Assert(index == s.Index+1, "records apply in index order")
	apply, ok := applies[command.Kind]
	invariant.Assert(ok, "applied command kind is known")
	s.Index = index
	if command.Op != 0 {
		invariant.Assert(command.Op > s.AppliedOp, "replicated commands apply in op order")
		s.AppliedOp = command.Op
	}
	return apply(s, command)
}

// Rejected records that a replicated command failed Prepare: every
// replica rejects it alike, so the op counts as applied. The mark is not
// logged; after a restart the op is handed again and rejected again.
func (s *State) Rejected(command *Command) {
	if command.Op > s.AppliedOp {
		s.AppliedOp = command.Op
	}
}

func lowestFree[T any](slots []*T) int {
	for index, slot := range slots {
		if slot == nil {
			return index
		}
	}
	return len(slots)
}

func place[T any](slots []*T, index int, value *T) []*T {
	for len(slots) <= index {
		slots = append(slots, nil)
	}
	slots[index] = value
	return slots
}

// trim drops free slots at the end, so the lowest free id is reused.
func trim[T any](slots []*T) []*T {
	for len(slots) > 0 && slots[len(slots)-1] == nil {
		slots = slots[:len(slots)-1]
	}
	return slots
}

func validName(name string) bool { return len(name) >= 1 && len(name) <= nameBytesMax }
