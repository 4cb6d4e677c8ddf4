package shard

import (
	"strings"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// TestPasswordHash: argon2id PHC strings verify the right password only,
// and a malformed stored string never matches.
func TestPasswordHash(t *testing.T) {
	stored := hashPassword("correct horse")
	if !strings.HasPrefix(stored, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q is not an argon2id PHC string with our parameters", stored)
	}
	if !checkPassword("correct horse", stored) {
		t.Fatal("the right password does not verify")
	}
	if checkPassword("correct horsf", stored) {
		t.Fatal("a wrong password verifies")
	}
	if hashPassword("correct horse") == stored {
		t.Fatal("two hashes of one password share a salt")
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=1,t=1,p=1$AAAA$AAAA", stored[:len(stored)-10] + "!!!!", "plain"} {
		if checkPassword("correct horse", bad) {
			t.Fatalf("malformed %q verifies", bad)
		}
	}
}

// TestTokenHash: tokens are random and stored as a stable hash.
func TestTokenHash(t *testing.T) {
	first, second := newToken(), newToken()
	if first == second || len(first) < 40 {
		t.Fatalf("tokens %q %q", first, second)
	}
	if hashToken(first) != hashToken(first) || hashToken(first) == hashToken(second) || strings.Contains(hashToken(first), first) {
		t.Fatal("token hashes are not a stable one-way map")
	}
}

// TestAccessInheritance: the permission chain of PROTOCOL.md §3.2 at the
// global, stream and topic levels, on both sides of each grant.
func TestAccessInheritance(t *testing.T) {
	if root := (access{root: true}); !root.manageUsers() || !root.sendMessages(5, 5) || !root.readServers() {
		t.Fatal("root lacks a right")
	}
	none := access{}
	if none.readStreams() || none.pollMessages(0, 0) || none.sendMessages(0, 0) || none.readUsers() {
		t.Fatal("no permissions grant a right")
	}
	global := access{permissions: &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true}}}
	if !global.readStream(3) || !global.readTopic(3, 1) || !global.pollMessages(3, 1) || global.sendMessages(3, 1) ||
		global.manageStream(3) {
		t.Fatal("global read_streams grants the wrong rights")
	}
	manage := access{permissions: &wire.Permissions{Global: wire.GlobalPermissions{ManageStreams: true}}}
	if !manage.manageTopic(1, 1) || !manage.sendMessages(1, 1) || !manage.pollMessages(1, 1) {
		t.Fatal("global manage_streams misses an inherited right")
	}
	perStream := access{permissions: &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: 2, ManageTopics: true,
		Topics: []wire.TopicPermissions{}}}}}
	if !perStream.manageTopics(2) || !perStream.sendMessages(2, 9) || perStream.manageTopics(3) || perStream.readStreams() {
		t.Fatal("stream manage_topics grants the wrong rights")
	}
	perTopic := access{permissions: &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: 2,
		Topics: []wire.TopicPermissions{{TopicID: 4, PollMessages: true}}}}}}
	if !perTopic.pollMessages(2, 4) || perTopic.pollMessages(2, 5) || perTopic.sendMessages(2, 4) || perTopic.readTopic(2, 4) {
		t.Fatal("topic poll_messages grants the wrong rights")
	}
}

// TestReleaseNumbers: the stats semver comes from the release string.
func TestReleaseNumbers(t *testing.T) {
	major, minor, patch := releaseNumbers("0.9.0-whippet")
	if major != 0 || minor != 9 || patch != 0 {
		t.Fatalf("0.9.0-whippet read as %d.%d.%d", major, minor, patch)
	}
	major, minor, patch = releaseNumbers("12.3.45")
	if major != 12 || minor != 3 || patch != 45 {
		t.Fatalf("12.3.45 read as %d.%d.%d", major, minor, patch)
	}
}

// TestFrontLimits: the front's limits agree with the runtime's and the
// protocol's.
func TestFrontLimits(t *testing.T) {
	if queuedFramesMax > inflightRequestsMax {
		t.Fatal("a session may queue more frames than the runtime delivers")
	}
	if pollRecordsBytesCap+wire.HeaderBytes+pollPrefixBytes > frameBytesMax {
		t.Fatal("a poll reply may exceed the frame cap")
	}
	if pollRecordsBytesMin > pollRecordsBytesCap {
		t.Fatal("poll buffer bounds are inverted")
	}
	if usernameBytesMax > nameBytesMax || passwordBytesMin < 1 || passwordBytesMax > nameBytesMax {
		t.Fatal("credential bounds do not fit a name8 slot")
	}
	if partitionsPerRequestMax > NamespacePartitionMax {
		t.Fatal("one request may create partitions outside the namespace")
	}
}
