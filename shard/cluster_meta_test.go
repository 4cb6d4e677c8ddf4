package shard

import (
	"testing"

	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/wire"
)

// TestRootPasswordHashCluster: in cluster mode every node must write the
// same bootstrap root record, so the hash is a function of the shared
// secret, the username and the password; it still verifies, and a single
// node keeps a random salt.
func TestRootPasswordHashCluster(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	first := rootPasswordHash("iggy", "secret-password", secret)
	if second := rootPasswordHash("iggy", "secret-password", secret); second != first {
		t.Fatalf("cluster root hash differs between nodes: %s vs %s", first, second)
	}
	if !checkPassword("secret-password", first) || checkPassword("wrong", first) {
		t.Fatal("cluster root hash does not verify its password alone")
	}
	other := append([]byte(nil), secret...)
	other[0] ^= 1
	if rootPasswordHash("iggy", "secret-password", other) == first {
		t.Fatal("another cluster's secret gives the same salt")
	}
	if rootPasswordHash("iggy", "secret-password", nil) == rootPasswordHash("iggy", "secret-password", nil) {
		t.Fatal("a single node's root hash is not salted at random")
	}
}

// TestCodeOfKind: every command kind names the request it stems from.
func TestCodeOfKind(t *testing.T) {
	for kind := metadata.CreateStream; kind <= metadata.DeleteConsumerGroup; kind++ {
		if code := codeOfKind(kind); code == wire.Code(0) {
			t.Fatalf("kind %v has no request code", kind)
		}
	}
}

// TestDeletedFromState: after a state transfer hid a write's entry, a
// delete is answered as done only when the installed state lacks its
// target; other writes are not guessed.
func TestDeletedFromState(t *testing.T) {
	state := &metadata.State{Streams: []*metadata.Stream{{ID: 0, Name: "kept"}},
		Users: []*metadata.User{{ID: 0, Username: "root", Tokens: []metadata.Token{{Name: "pat"}}}}}
	cases := []struct {
		command metadata.Command
		want    bool
	}{
		{metadata.Command{Kind: metadata.DeleteStream, StreamID: 0}, false},
		{metadata.Command{Kind: metadata.DeleteStream, StreamID: 1}, true},
		{metadata.Command{Kind: metadata.DeleteTopic, StreamID: 0, TopicID: 0}, true},
		{metadata.Command{Kind: metadata.DeleteUser, UserID: 0}, false},
		{metadata.Command{Kind: metadata.DeletePersonalAccessToken, UserID: 0, Name: "pat"}, false},
		{metadata.Command{Kind: metadata.DeletePersonalAccessToken, UserID: 0, Name: "gone"}, true},
		{metadata.Command{Kind: metadata.UpdateStream, StreamID: 1}, false},
	}
	for _, tc := range cases {
		if got := deleted(state, &tc.command); got != tc.want {
			t.Errorf("%v: deleted %v, want %v", tc.command.Kind, got, tc.want)
		}
	}
}
