package main

import (
	"testing"

	"github.com/whippetio/whippet/wire"
	"github.com/whippetio/whippet/wire/classic"
)

// TestClassicSystemCommands: the system reads a classic client makes
// (the Go SDK's GetClusterMetadata after login included) decode with the
// 0.8 layouts, and stats carry the 0.8 decimal semver.
func TestClassicSystemCommands(t *testing.T) {
	s := startServer(t)
	legacy := s.dialClassic(t)
	classicLogin(t, legacy)
	ctx := ctxTimeout(t)
	var cluster classic.ClusterMetadata
	if found, err := legacy.Call(ctx, classic.GetClusterMetadata{}, &cluster); err != nil || !found ||
		len(cluster.Nodes) == 0 {
		t.Fatalf("cluster metadata %+v found %v err %v", cluster, found, err)
	}
	// The classic Go SDK rejects a node with role > 1 or status 5 (§10 #12);
	// a single node must read as the healthy leader at our address.
	node := cluster.Nodes[0]
	if len(cluster.Nodes) != 1 || node.Role != classic.NodeRoleLeader || node.Status != classic.NodeStatusHealthy ||
		node.TCP == 0 {
		t.Fatalf("cluster nodes %+v, want one healthy leader", cluster.Nodes)
	}
	var me classic.ClientDetails
	if found, err := legacy.Call(ctx, classic.GetMe{}, &me); err != nil || !found || me.Client.UserID != 0 ||
		me.Client.Transport != classic.TransportTCP {
		t.Fatalf("get me %+v found %v err %v", me, found, err)
	}
	var clients classic.ClientList
	if _, err := legacy.Call(ctx, classic.GetClients{}, &clients); err != nil || len(clients.Clients) == 0 {
		t.Fatalf("get clients %+v err %v", clients, err)
	}
	var unknown classic.ClientDetails
	if found, err := legacy.Call(ctx, classic.GetClient{ClientID: 1 << 30}, &unknown); err != nil || found {
		t.Fatalf("an unknown client: found %v err %v, want the empty 0.8 reply", found, err)
	}
	var stats classic.Stats
	if found, err := legacy.Call(ctx, classic.GetStats{}, &stats); err != nil || !found {
		t.Fatalf("stats: found %v err %v", found, err)
	}
	if stats.ServerSemver != classic.SemverDecimal(0, 9, 0) || stats.ClientsCount == 0 {
		t.Fatalf("stats semver %d clients %d, want %d and at least one", stats.ServerSemver, stats.ClientsCount,
			classic.SemverDecimal(0, 9, 0))
	}
	var snapshot classic.SnapshotReply
	_, err := legacy.Call(ctx, classic.GetSnapshot{Compression: classic.SnapshotCompressionStored, Types: []uint8{100}},
		&snapshot)
	if err != nil || len(snapshot.Data) < 4 || string(snapshot.Data[:2]) != "PK" {
		t.Fatalf("snapshot: %d bytes, err %v; want a ZIP archive", len(snapshot.Data), err)
	}
}

// TestClassicTopicAdmin: stream and topic updates, partitions and purges
// made by a classic client are what a 0.9 client then reads.
func TestClassicTopicAdmin(t *testing.T) {
	s := startServer(t)
	modern := s.dial(t)
	legacy := s.dialClassic(t)
	classicLogin(t, legacy)
	ctx := ctxTimeout(t)
	must[classic.StreamEntry](t, "create stream")(legacy.CreateStream(ctx, "before"))
	must[classic.TopicDetails](t, "create topic")(legacy.CreateTopic(ctx, cid(0), "t", 1,
		classic.TopicSettings{Compression: classic.CompressionNone}))
	_, err := legacy.Do(ctx, classic.UpdateStream{Stream: cid(0), Name: []byte("after")})
	check(t, "update stream", err)
	_, err = legacy.Do(ctx, classic.UpdateTopic{Stream: cid(0), Topic: cid(0), Name: []byte("t2"),
		Settings: classic.TopicSettings{Compression: classic.CompressionGzip, MessageExpiry: 60_000_000}})
	check(t, "update topic", err)
	_, err = legacy.Do(ctx, classic.CreatePartitions{Stream: cid(0), Topic: cid(0), PartitionsCount: 2})
	check(t, "create partitions", err)
	stream := must[*wire.StreamDetails](t, "0.9 get stream")(modern.GetStream(ctx, id(0)))
	topic := must[*wire.TopicDetails](t, "0.9 get topic")(modern.GetTopic(ctx, id(0), id(0)))
	if stream.Name != "after" || topic.Name != "t2" || len(topic.Partitions) != 3 ||
		topic.Compression != wire.CompressionGzip || topic.MessageExpiry != 60_000_000 {
		t.Fatalf("0.9 reads stream %q, topic %+v", stream.Name, topic.TopicInfo)
	}
	check(t, "classic send", legacy.SendMessages(ctx, cid(0), cid(0),
		classic.Partitioning{Kind: classic.PartitioningPartitionID, PartitionID: 2},
		[]classic.OutgoingMessage{{Payload: []byte("x")}}))
	_, err = legacy.Do(ctx, classic.FlushUnsavedBuffer{Stream: cid(0), Topic: cid(0), PartitionID: 2, Fsync: true})
	check(t, "flush", err)
	_, err = legacy.Do(ctx, classic.DeletePartitions{Stream: cid(0), Topic: cid(0), PartitionsCount: 1})
	check(t, "delete partitions", err)
	details, found, err := legacy.GetTopic(ctx, cid(0), cid(0))
	if err != nil || !found || len(details.Partitions) != 2 || details.Topic.Compression != classic.CompressionGzip {
		t.Fatalf("classic get topic %+v found %v err %v", details, found, err)
	}
	_, err = legacy.Do(ctx, classic.PurgeTopic{Stream: cid(0), Topic: cid(0)})
	check(t, "purge topic", err)
	check(t, "delete topic", legacy.DeleteTopic(ctx, cid(0), cid(0)))
	check(t, "delete stream", legacy.DeleteStream(ctx, cid(0)))
	if streams, err := legacy.GetStreams(ctx); err != nil || len(streams) != 0 {
		t.Fatalf("streams after delete %+v err %v", streams, err)
	}
}

// TestClassicUsersAndTokens: users and tokens made by a classic client
// work for both generations, with the 0.8 login statuses (42, 47, 20).
func TestClassicUsersAndTokens(t *testing.T) {
	s := startServer(t)
	legacy := s.dialClassic(t)
	classicLogin(t, legacy)
	ctx := ctxTimeout(t)
	permissions := classic.Permissions{Global: classic.GlobalPermissions{ReadStreams: true, ReadTopics: true}}
	var created classic.UserDetails
	_, err := legacy.Call(ctx, classic.CreateUser{Username: []byte("alice"), Password: []byte("secret-1"),
		Status: classic.UserActive, HasPermissions: true, Permissions: permissions}, &created)
	if err != nil || created.User.Username != "alice" || !created.HasPermissions ||
		created.Permissions.Global != permissions.Global {
		t.Fatalf("create user %+v err %v", created, err)
	}
	modern := s.dialAs(t, "alice", "secret-1")
	details := must[*wire.UserDetails](t, "0.9 get user")(modern.GetUser(ctx, wire.NamedID("alice")))
	if details.Permissions == nil || !details.Permissions.Global.ReadStreams || details.Permissions.Global.ManageUsers {
		t.Fatalf("0.9 reads alice's permissions as %+v", details.Permissions)
	}
	var users classic.UserList
	if _, err := legacy.Call(ctx, classic.GetUsers{}, &users); err != nil || len(users.Users) != 2 {
		t.Fatalf("users %+v err %v", users, err)
	}
	_, err = legacy.Do(ctx, classic.ChangePassword{User: classic.NamedIdentifier("alice"),
		CurrentPassword: []byte("secret-1"), NewPassword: []byte("secret-2")})
	check(t, "change password", err)
	second := s.dialClassic(t)
	_, err = second.Login(ctx, "alice", "secret-1")
	wantClassicStatus(t, "the old password", err, classic.StatusInvalidCredentials)
	if _, err := second.Login(ctx, "alice", "secret-2"); err != nil {
		t.Fatalf("login with the new password: %v", err)
	}
	var token classic.RawToken
	if _, err := second.Call(ctx, classic.CreatePersonalAccessToken{Name: []byte("ci-token")}, &token); err != nil ||
		token.Token == "" {
		t.Fatalf("create token %+v err %v", token, err)
	}
	viaToken := s.dialClassic(t)
	_, err = viaToken.LoginWithToken(ctx, "not-a-token")
	wantClassicStatus(t, "an unknown token", err, classic.StatusResourceNotFound)
	if userID, err := viaToken.LoginWithToken(ctx, token.Token); err != nil || userID != created.User.ID {
		t.Fatalf("token login: user %d err %v, want %d", userID, err, created.User.ID)
	}
	var tokens classic.TokenList
	if _, err := viaToken.Call(ctx, classic.GetPersonalAccessTokens{}, &tokens); err != nil || len(tokens.Tokens) != 1 ||
		tokens.Tokens[0].Name != "ci-token" {
		t.Fatalf("tokens %+v err %v", tokens, err)
	}
	_, err = legacy.Do(ctx, classic.UpdateUser{User: classic.NamedIdentifier("alice"), Status: classic.UserInactive})
	check(t, "deactivate alice", err)
	// Deactivation logs alice's sessions out: her classic connections stay
	// open and get 40 until they log in again.
	var streams classic.StreamList
	_, err = second.Call(ctx, classic.GetStreams{}, &streams)
	wantClassicStatus(t, "a session of a deactivated user", err, classic.StatusUnauthenticated)
	check(t, "ping on the logged-out connection", second.Ping(ctx))
	_, err = s.dialClassic(t).Login(ctx, "alice", "secret-2")
	wantClassicStatus(t, "an inactive user", err, classic.StatusUserInactive)
	var missing classic.UserDetails
	if found, err := legacy.Call(ctx, classic.GetUser{User: classic.NamedIdentifier("bob")}, &missing); err != nil ||
		found {
		t.Fatalf("an unknown user: found %v err %v, want the empty 0.8 reply", found, err)
	}
}
