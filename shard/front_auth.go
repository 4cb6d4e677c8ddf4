package shard

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"

	"github.com/whippetio/whippet/wire"
)

// hashPassword returns the PHC string of an argon2id hash of password.
func hashPassword(password string) string {
	salt := make([]byte, argonSaltBytes)
	_, _ = rand.Read(salt) // crypto/rand never fails on Linux (getrandom)
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyBytes)
	encoding := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime,
		argonThreads, encoding.EncodeToString(salt), encoding.EncodeToString(key))
}

// checkPassword verifies password against a PHC argon2id string; a
// malformed string never matches.
func checkPassword(password, stored string) bool {
	parts := strings.Split(stored, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	var memory, passes uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &passes, &threads); err != nil {
		return false
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, passes, memory, threads, uint32(len(want)))
	return constantTimeEqual(got, want)
}

func passwordCacheKey(password, stored string) [32]byte {
	return sha256.Sum256([]byte(password + "\x00" + stored))
}

// newToken mints a raw personal access token: URL-safe base64 of
// tokenBytes random bytes.
func newToken() string {
	raw := make([]byte, tokenBytes)
	_, _ = rand.Read(raw) // crypto/rand never fails on Linux (getrandom)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// hashToken is what the metadata stores for a token: the hex SHA-256 of
// the raw token, which has the entropy a slow hash would add for a
// password.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// access is one user's rights as the front checks them (PROTOCOL.md §3.2
// and its inheritance rules); the root user holds every right.
type access struct {
	root        bool
	permissions *wire.Permissions
}

func (a access) global() wire.GlobalPermissions {
	if a.root {
		return wire.AllPermissions().Global
	}
	if a.permissions == nil {
		return wire.GlobalPermissions{}
	}
	return a.permissions.Global
}

func (a access) stream(streamID uint32) *wire.StreamPermissions {
	if a.permissions == nil {
		return nil
	}
	for i := range a.permissions.Streams {
		if a.permissions.Streams[i].StreamID == streamID {
			return &a.permissions.Streams[i]
		}
	}
	return nil
}

func (a access) topic(streamID, topicID uint32) *wire.TopicPermissions {
	stream := a.stream(streamID)
	if stream == nil {
		return nil
	}
	for i := range stream.Topics {
		if stream.Topics[i].TopicID == topicID {
			return &stream.Topics[i]
		}
	}
	return nil
}

func (a access) readServers() bool {
	g := a.global()
	return g.ManageServers || g.ReadServers
}

func (a access) manageUsers() bool { return a.global().ManageUsers }

func (a access) readUsers() bool {
	g := a.global()
	return g.ManageUsers || g.ReadUsers
}

func (a access) manageStreams() bool { return a.global().ManageStreams }

func (a access) readStreams() bool {
	g := a.global()
	return g.ManageStreams || g.ReadStreams
}

func (a access) manageStream(streamID uint32) bool {
	if a.manageStreams() {
		return true
	}
	stream := a.stream(streamID)
	return stream != nil && stream.ManageStream
}

func (a access) readStream(streamID uint32) bool {
	if a.readStreams() || a.manageStream(streamID) {
		return true
	}
	stream := a.stream(streamID)
	return stream != nil && stream.ReadStream
}

// manageTopics is the right to create topics in a stream.
func (a access) manageTopics(streamID uint32) bool {
	if a.global().ManageTopics || a.manageStream(streamID) {
		return true
	}
	stream := a.stream(streamID)
	return stream != nil && stream.ManageTopics
}

func (a access) manageTopic(streamID, topicID uint32) bool {
	if a.manageTopics(streamID) {
		return true
	}
	topic := a.topic(streamID, topicID)
	return topic != nil && topic.ManageTopic
}

func (a access) readTopic(streamID, topicID uint32) bool {
	g := a.global()
	if g.ReadTopics || a.readStream(streamID) || a.manageTopic(streamID, topicID) {
		return true
	}
	if stream := a.stream(streamID); stream != nil && stream.ReadTopics {
		return true
	}
	topic := a.topic(streamID, topicID)
	return topic != nil && topic.ReadTopic
}

func (a access) pollMessages(streamID, topicID uint32) bool {
	if a.global().PollMessages || a.readTopic(streamID, topicID) {
		return true
	}
	if stream := a.stream(streamID); stream != nil && stream.PollMessages {
		return true
	}
	topic := a.topic(streamID, topicID)
	return topic != nil && topic.PollMessages
}

func (a access) sendMessages(streamID, topicID uint32) bool {
	if a.global().SendMessages || a.manageTopic(streamID, topicID) {
		return true
	}
	if stream := a.stream(streamID); stream != nil && stream.SendMessages {
		return true
	}
	topic := a.topic(streamID, topicID)
	return topic != nil && topic.SendMessages
}
