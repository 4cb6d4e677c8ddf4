package main

import (
	"archive/zip"
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// TestSystemCommands: ping, stats, clients, client, get me, cluster
// metadata and option catalogs, plus the refusals a non-server user gets.
func TestSystemCommands(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	check(t, "ping", c.Ping(ctx))
	cluster := must[*wire.ClusterMetadata](t, "cluster")(c.GetClusterMetadata(ctx))
	if len(cluster.Nodes) != 1 || cluster.Nodes[0].Role != wire.RoleLeader || cluster.Nodes[0].Status != wire.NodeHealthy {
		t.Fatalf("cluster %+v, want one healthy leader", cluster)
	}
	if address := cluster.Nodes[0].IP + ":" + strconv.Itoa(int(cluster.Nodes[0].TCPPort)); address != s.address {
		t.Fatalf("leader at %s, server at %s", address, s.address)
	}
	me := must[*wire.ClientDetails](t, "get me")(c.GetMe(ctx))
	if me.UserID != 0 || me.Transport != wire.TransportTCP || me.Address == "" {
		t.Fatalf("me %+v", me)
	}
	other := s.dial(t)
	clients := must[wire.ClientList](t, "clients")(c.GetClients(ctx))
	if len(clients) != 2 {
		t.Fatalf("%d clients, want 2", len(clients))
	}
	details := must[*wire.ClientDetails](t, "client")(c.GetClient(ctx, me.ClientID))
	if details.ClientID != me.ClientID || details.Address != me.Address {
		t.Fatalf("client %+v, me %+v", details, me)
	}
	_, err := c.GetClient(ctx, 999999)
	wantStatus(t, "unknown client", err, wire.StatusClientNotFound)
	check(t, "other ping", other.Ping(ctx))
	must[*wire.StreamInfo](t, "stream")(c.CreateStream(ctx, "s", nil))
	must[*wire.TopicDetails](t, "topic")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 2, Name: "t"}))
	must[wire.SendConfirmations](t, "send")(c.SendMessages(ctx, id(0), id(0), wire.PartitionID(1), messages("m", 3)))
	stats := must[*wire.Stats](t, "stats")(c.GetStats(ctx))
	if stats.StreamsCount != 1 || stats.TopicsCount != 1 || stats.PartitionsCount != 2 || stats.ClientsCount != 2 ||
		stats.MessagesCount != 3 || stats.ProcessID == 0 || stats.ThreadsCount < 2 || stats.MemoryUsage == 0 ||
		stats.CPUUsage < 0 || stats.TotalCPUUsage <= 0 || stats.TotalCPUUsage > 100 {
		t.Fatalf("stats %+v", stats)
	}
	specs := must[wire.OptionSpecs](t, "describe")(c.DescribeOptions(ctx, wire.ScopeTopic))
	if len(specs) == 0 {
		t.Fatal("empty topic option catalog")
	}
	if specs := must[wire.OptionSpecs](t, "describe")(c.DescribeOptions(ctx, wire.ScopeStream)); len(specs) != 0 {
		t.Fatalf("stream catalog %+v, want empty", specs)
	}
	archive := must[[]byte](t, "snapshot")(c.GetSnapshot(ctx, &wire.GetSnapshot{Compression: wire.SnapshotStored,
		Types: []uint8{wire.SnapshotTypeAll}}))
	unzipped := must[*zip.Reader](t, "unzip")(zip.NewReader(bytes.NewReader(archive), int64(len(archive))))
	if len(unzipped.File) != 6 {
		t.Fatalf("snapshot holds %d files, want 6", len(unzipped.File))
	}
	createUser(t, c, "reader", "secret1", nil)
	reader := s.dialAs(t, "reader", "secret1")
	_, err = reader.GetStats(ctx)
	wantStatus(t, "stats without rights", err, wire.StatusUnauthorized)
	_, err = reader.GetClients(ctx)
	wantStatus(t, "clients without rights", err, wire.StatusUnauthorized)
	check(t, "reader ping", reader.Ping(ctx))
}

func createUser(t *testing.T, c *client.Client, name, password string, permissions *wire.Permissions) *wire.UserDetails {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return must[*wire.UserDetails](t, "create user "+name)(c.CreateUser(ctx, &wire.CreateUser{Username: name,
		Password: password, Status: wire.UserActive, Permissions: permissions}))
}

// TestUsers: every user command, its refusals, and logins they affect.
func TestUsers(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	root := must[*wire.UserDetails](t, "get root")(c.GetUser(ctx, id(0)))
	if root.Username != "iggy" || root.Permissions == nil || !root.Permissions.Global.ManageServers {
		t.Fatalf("root %+v", root)
	}
	readUsers := &wire.Permissions{Global: wire.GlobalPermissions{ReadUsers: true}}
	alice := createUser(t, c, "alice", "password1", readUsers)
	if alice.ID != 1 || alice.Permissions == nil || !alice.Permissions.Global.ReadUsers {
		t.Fatalf("alice %+v", alice)
	}
	_, err := c.CreateUser(ctx, &wire.CreateUser{Username: "alice", Password: "password2", Status: wire.UserActive})
	wantStatus(t, "duplicate user", err, wire.StatusUserAlreadyExists)
	_, err = c.CreateUser(ctx, &wire.CreateUser{Username: "al", Password: "password2", Status: wire.UserActive})
	wantStatus(t, "short username", err, wire.StatusInvalidUsername)
	_, err = c.CreateUser(ctx, &wire.CreateUser{Username: "bob", Password: "pw", Status: wire.UserActive})
	wantStatus(t, "short password", err, wire.StatusInvalidPassword)
	users := must[wire.UserList](t, "users")(c.GetUsers(ctx))
	if len(users) != 2 || users[1].Username != "alice" {
		t.Fatalf("users %+v", users)
	}
	byName := must[*wire.UserDetails](t, "get by name")(c.GetUser(ctx, wire.NamedID("alice")))
	if byName.ID != alice.ID {
		t.Fatalf("alice by name %+v", byName)
	}
	if missing, err := c.GetUser(ctx, id(42)); err == nil && missing != nil && missing.Username != "" {
		t.Fatalf("missing user answered %+v", missing)
	}
	aliceClient := s.dialAs(t, "alice", "password1")
	must[wire.UserList](t, "alice lists users")(aliceClient.GetUsers(ctx))
	_, err = aliceClient.CreateUser(ctx, &wire.CreateUser{Username: "mallory", Password: "password", Status: wire.UserActive})
	wantStatus(t, "create without manage_users", err, wire.StatusUnauthorized)
	check(t, "alice changes her password", aliceClient.ChangePassword(ctx, id(alice.ID), "password1", "password9"))
	wantStatus(t, "wrong current password", aliceClient.ChangePassword(ctx, id(alice.ID), "nope-nope", "password8"),
		wire.StatusInvalidCredentials)
	wantStatus(t, "change root's password as alice", aliceClient.ChangePassword(ctx, id(0), "iggy", "password8"),
		wire.StatusUnauthorized)
	s.dialAs(t, "alice", "password9")
	check(t, "rename", c.UpdateUser(ctx, &wire.UpdateUser{User: id(alice.ID), HasUsername: true, Username: "alicia"}))
	check(t, "permissions", c.UpdatePermissions(ctx, id(alice.ID), &wire.Permissions{Global: wire.GlobalPermissions{ManageUsers: true}}))
	updated := must[*wire.UserDetails](t, "get alicia")(c.GetUser(ctx, wire.NamedID("alicia")))
	if updated.Permissions == nil || !updated.Permissions.Global.ManageUsers || updated.Permissions.Global.ReadUsers {
		t.Fatalf("alicia %+v", updated)
	}
	wantStatus(t, "root permissions", c.UpdatePermissions(ctx, id(0), nil), wire.StatusCannotChangePermissions)
	wantStatus(t, "delete root", c.DeleteUser(ctx, id(0)), wire.StatusCannotDeleteUser)
	wantStatus(t, "delete missing", c.DeleteUser(ctx, id(9)), wire.StatusResourceNotFound)
	aliceSession := s.dialAs(t, "alicia", "password9")
	must[wire.UserList](t, "alicia lists users")(aliceSession.GetUsers(ctx))
	check(t, "deactivate", c.UpdateUser(ctx, &wire.UpdateUser{User: id(alice.ID), HasStatus: true, Status: wire.UserInactive}))
	if _, err := aliceSession.GetUsers(ctx); err == nil {
		t.Fatal("a deactivated user's session still reads")
	}
	wantLoginRefused(t, s, "alicia", "password9", wire.StatusInvalidCredentials)
	check(t, "delete", c.DeleteUser(ctx, wire.NamedID("alicia")))
	wantLoginRefused(t, s, "alicia", "password9", wire.StatusInvalidCredentials)
	wantLoginRefused(t, s, "iggy", "wrong-password", wire.StatusInvalidCredentials)
	check(t, "logout", c.Logout(ctx))
	_, err = c.GetUsers(ctx)
	wantStatus(t, "read after logout", err, wire.StatusUnauthenticated)
	must[wire.LoginReply](t, "login again")(c.Login(ctx, "iggy", "iggy"))
	must[wire.UserList](t, "read after a new login")(c.GetUsers(ctx))
}

// wantLoginRefused dials and expects the login to fail with status.
func wantLoginRefused(t *testing.T, s *server, username, password string, status wire.Status) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, client.Options{Address: s.address, ReconnectAttempts: -1})
	check(t, "dial", err)
	defer c.Close()
	_, err = c.Login(ctx, username, password)
	wantStatus(t, "login "+username, err, status)
}

// TestPersonalAccessTokens: create, list, log in with, delete.
func TestPersonalAccessTokens(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	token := must[string](t, "create token")(c.CreatePersonalAccessToken(ctx, "ci", 0))
	if len(token) < 32 {
		t.Fatalf("token %q too short", token)
	}
	_, err := c.CreatePersonalAccessToken(ctx, "ci", 0)
	wantStatus(t, "duplicate token", err, wire.StatusPersonalAccessTokenAlreadyExists)
	must[string](t, "expiring token")(c.CreatePersonalAccessToken(ctx, "hourly", uint64(time.Hour.Microseconds())))
	tokens := must[wire.TokenList](t, "tokens")(c.GetPersonalAccessTokens(ctx))
	if len(tokens) != 2 || tokens[0].Name != "ci" || tokens[0].ExpiryAt != 0 || tokens[1].ExpiryAt == 0 {
		t.Fatalf("tokens %+v", tokens)
	}
	withToken, err := client.Dial(ctx, client.Options{Address: s.address, Token: token, ReconnectAttempts: -1})
	check(t, "login with token", err)
	defer withToken.Close()
	me := must[*wire.ClientDetails](t, "me")(withToken.GetMe(ctx))
	if me.UserID != 0 {
		t.Fatalf("token login as user %d, want 0", me.UserID)
	}
	check(t, "delete token", c.DeletePersonalAccessToken(ctx, "ci"))
	wantStatus(t, "delete missing token", c.DeletePersonalAccessToken(ctx, "ci"), wire.StatusResourceNotFound)
	fresh, err := client.Dial(ctx, client.Options{Address: s.address, ReconnectAttempts: -1})
	check(t, "dial", err)
	defer fresh.Close()
	_, err = fresh.LoginWithToken(ctx, token)
	wantStatus(t, "deleted token", err, wire.StatusInvalidPersonalAccessToken)
}

// TestConnectionsMax: a connection past tcp.max_connections is closed;
// the ones before it are served.
func TestConnectionsMax(t *testing.T) {
	s := startServer(t, "WHIPPET_TCP_MAX_CONNECTIONS=2")
	first, second := s.dial(t), s.dial(t)
	ctx := ctxTimeout(t)
	r := s.rawConn(t)
	r.write(r.frame(wire.OperationNonReplicated, wire.CodePing, nil))
	r.closed()
	check(t, "first ping", first.Ping(ctx))
	check(t, "second ping", second.Ping(ctx))
}
