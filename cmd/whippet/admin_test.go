package main

import (
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/whippetio/whippet/client"
)

// TestUserVerbs: create a user with chosen rights, log in as it, watch
// the server enforce those rights, then rename, deactivate, change the
// password, widen the permissions and delete it.
func TestUserVerbs(t *testing.T) {
	s := startServer(t)
	created := decode[userView](t, s.ok(t, "-o", "json", "user", "create", "alice", "secret-1", "--global-permissions",
		"read_streams,poll_messages"))
	if created.Username != "alice" || created.Status != "active" ||
		!slices.Equal(created.Permissions, []string{"read_streams", "poll_messages"}) {
		t.Fatalf("created: %+v", created)
	}
	wantStrings(t, "users", column(t, s.ok(t, "user", "list"), "USERNAME"), "iggy", "alice")
	alice := func(password string, args ...string) result {
		return runCLI(t, s.env("alice", password), "", args...)
	}
	if r := alice("secret-1", "stream", "list"); r.code != exitOK {
		t.Fatalf("alice may read streams\n%s", r)
	}
	wantExit(t, alice("secret-1", "stream", "create", "x"), exitRefused, "Unauthorized")
	wantExit(t, alice("wrong", "stream", "list"), exitRefused, "InvalidCredentials")

	s.ok(t, "user", "name", "alice", "alicia")
	s.ok(t, "user", "status", "alicia", "inactive")
	got := decode[userView](t, s.ok(t, "-o", "json", "user", "get", "alicia"))
	if got.Status != "inactive" || got.ID != created.ID {
		t.Fatalf("after rename and deactivate: %+v", got)
	}
	wantExit(t, alice("secret-1", "stream", "list"), exitRefused)
	s.ok(t, "user", "status", "alicia", "active")
	s.ok(t, "user", "password", "alicia", "secret-1", "secret-2")
	runCLIAs := func(args ...string) result { return runCLI(t, s.env("alicia", "secret-2"), "", args...) }
	wantExit(t, runCLIAs("stream", "create", "x"), exitRefused, "Unauthorized")
	s.ok(t, "user", "permissions", "alicia", "--global-permissions", "all")
	if r := runCLIAs("stream", "create", "x"); r.code != exitOK {
		t.Fatalf("alicia holds every right now\n%s", r)
	}
	s.ok(t, "user", "delete", "alicia")
	wantExit(t, s.root(t, "user", "get", "alicia"), exitRefused, "ResourceNotFound")
	wantExit(t, s.root(t, "user", "create", "iggy", "whatever1"), exitRefused, "UserAlreadyExists")
	wantExit(t, s.root(t, "user", "create", "bob", "pw-12345", "-g", "fly"), exitUsage, "unknown global permission")
	wantExit(t, s.root(t, "user", "status", "iggy", "sleepy"), exitUsage, "active or inactive")
}

// TestTokenVerbs: a personal access token is shown once at creation,
// logs in through --token and WHIPPET_TOKEN, is listed with its expiry,
// and stops working once deleted.
func TestTokenVerbs(t *testing.T) {
	s := startServer(t)
	token := decode[tokenView](t, s.ok(t, "-o", "json", "pat", "create", "ci", "1day", "12h")).Token
	if len(token) < 16 {
		t.Fatalf("token %q", token)
	}
	s.ok(t, "pat", "create", "forever", "never")
	listed := decode[[]tokenView](t, s.ok(t, "-o", "json", "pat", "list"))
	if len(listed) != 2 || listed[0].Name != "ci" || listed[0].ExpiryAt == 0 || listed[1].ExpiryAt != 0 {
		t.Fatalf("listed: %+v", listed)
	}
	address := "WHIPPET_TCP_SERVER_ADDRESS=" + s.address
	me := runCLI(t, []string{address}, "", "--token", token, "-o", "json", "me")
	if me.code != exitOK || decode[clientView](t, me).UserID == nil || *decode[clientView](t, me).UserID != 0 {
		t.Fatalf("--token login as root\n%s", me)
	}
	if r := runCLI(t, []string{address, "WHIPPET_TOKEN=" + token}, "", "stream", "list"); r.code != exitOK {
		t.Fatalf("WHIPPET_TOKEN login\n%s", r)
	}
	s.ok(t, "pat", "delete", "ci")
	wantStrings(t, "after delete", column(t, s.ok(t, "pat", "list"), "NAME"), "forever")
	wantExit(t, runCLI(t, []string{address}, "", "--token", token, "me"), exitRefused, "InvalidPersonalAccessToken")
	wantExit(t, s.root(t, "pat", "create", "x", "3 fortnights"), exitUsage, "expiry")
}

// TestClientStatsPingMe: the read-only verbs print parseable output
// that reflects the server's state.
func TestClientStatsPingMe(t *testing.T) {
	s := startServer(t)
	s.ok(t, "stream", "create", "orders")
	stats := decode[statsView](t, s.ok(t, "-o", "json", "stats"))
	if stats.StreamsCount != 1 || stats.ProcessID == 0 || stats.ServerVersion == "" {
		t.Fatalf("stats: %+v", stats)
	}
	table := s.ok(t, "stats")
	if !strings.Contains(table.stdout, "streams_count") {
		t.Fatalf("stats table\n%s", table)
	}
	me := decode[clientView](t, s.ok(t, "-o", "json", "me"))
	if me.ClientID == 0 || me.UserID == nil || me.Transport != "tcp" || me.Address == "" {
		t.Fatalf("me: %+v", me)
	}
	// Each CLI run is its own connection, gone when it exits: hold one
	// open for client list and client get to find.
	held, err := client.Dial(t.Context(), client.Options{Address: s.address, Username: "iggy", Password: "iggy",
		ReconnectAttempts: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Close() }() // the server notices the close either way
	own, err := held.GetMe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	clients := decode[[]clientView](t, s.ok(t, "-o", "json", "client", "list"))
	if !slices.ContainsFunc(clients, func(c clientView) bool { return c.ClientID == own.ClientID }) {
		t.Fatalf("client list %+v lacks the held connection %d", clients, own.ClientID)
	}
	one := s.ok(t, "client", "get", itoa(own.ClientID))
	wantStrings(t, "client get", column(t, one, "CLIENT_ID"), itoa(own.ClientID))
	wantStrings(t, "client get user", column(t, one, "USER_ID"), "0")
	wantExit(t, s.root(t, "client", "get", "4000000000"), exitRefused, "ClientNotFound")

	pings := runCLI(t, []string{"IGGY_TCP_SERVER_ADDRESS=" + s.address}, "", "-o", "json", "ping", "--count", "3")
	if pings.code != exitOK || len(decode[[]pingView](t, pings)) != 3 {
		t.Fatalf("ping needs no credentials\n%s", pings)
	}
}

// TestConnectionSettings: flags win over WHIPPET_* which win over IGGY_*;
// context show reports each source and masks secrets.
func TestConnectionSettings(t *testing.T) {
	s := startServer(t)
	env := []string{"IGGY_TCP_SERVER_ADDRESS=" + s.address, "IGGY_USERNAME=iggy", "IGGY_PASSWORD=iggy"}
	if r := runCLI(t, env, "", "stream", "create", "from-iggy-env"); r.code != exitOK {
		t.Fatalf("IGGY_* settings\n%s", r)
	}
	shadowed := append(env, "WHIPPET_PASSWORD=wrong")
	wantExit(t, runCLI(t, shadowed, "", "stream", "list"), exitRefused, "InvalidCredentials")
	if r := runCLI(t, shadowed, "", "--password", "iggy", "stream", "list"); r.code != exitOK {
		t.Fatalf("--password wins over the environment\n%s", r)
	}
	shown := decode[[]contextView](t, runCLI(t, append(shadowed, "WHIPPET_OUTPUT=json"), "", "context", "show"))
	sources := map[string]contextView{}
	for _, setting := range shown {
		sources[setting.Setting] = setting
	}
	if got := sources["tcp-server-address"]; got.Value != s.address || got.Source != "environment IGGY_TCP_SERVER_ADDRESS" {
		t.Fatalf("address: %+v", got)
	}
	if got := sources["password"]; got.Value != "********" || got.Source != "environment WHIPPET_PASSWORD" {
		t.Fatalf("password: %+v", got)
	}
	if got := sources["timeout"]; got.Source != "default" {
		t.Fatalf("timeout: %+v", got)
	}
	wantExit(t, runCLI(t, []string{"WHIPPET_TIMEOUT=soon"}, "", "context", "show"), exitUsage, "WHIPPET_TIMEOUT")
}

// TestUsageAndConnectionErrors: a bad command line exits 2 before any
// connection is made, an unreachable server exits 4, and --help documents
// the exit codes.
func TestUsageAndConnectionErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		text string
	}{
		{"unknown verb", []string{"streams"}, "unknown command"},
		{"unknown subcommand", []string{"stream", "bogus"}, "unknown command"},
		{"bare group", []string{"topic"}, "needs a subcommand"},
		{"unknown flag", []string{"stream", "list", "--bogus"}, "unknown flag"},
		{"missing argument", []string{"topic", "create", "s", "t"}, "wrong number of arguments"},
		{"bad output", []string{"-o", "yaml", "stream", "list"}, "table or json"},
		{"bad number", []string{"partition", "create", "s", "t", "many"}, "partitions count"},
	}
	// An unreachable server with credentials: only a usage check can
	// answer before the connection fails.
	env := []string{"WHIPPET_TCP_SERVER_ADDRESS=127.0.0.1:1", "WHIPPET_USERNAME=iggy", "WHIPPET_PASSWORD=iggy"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantExit(t, runCLI(t, env, "", c.args...), exitUsage, c.text)
		})
	}
	wantExit(t, runCLI(t, env[:1], "", "stream", "list"), exitUsage, "no credentials")

	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := listener.Addr().String()
	_ = listener.Close() // the port is now refused
	unreachable := []string{"WHIPPET_TCP_SERVER_ADDRESS=" + closed, "WHIPPET_USERNAME=iggy", "WHIPPET_PASSWORD=iggy"}
	wantExit(t, runCLI(t, unreachable, "", "stream", "list"), exitConnection, "server "+closed)
	wantExit(t, runCLI(t, unreachable, "", "ping"), exitConnection, "refused")

	help := runCLI(t, nil, "", "--help")
	if help.code != exitOK || !strings.Contains(help.stdout, "Exit codes:") ||
		!strings.Contains(help.stdout, "3  the server refused") || !strings.Contains(help.stdout, "WHIPPET_") {
		t.Fatalf("help lacks the exit codes or the environment\n%s", help)
	}
}

// TestStreamPermissions: --stream-permissions grants rights on one stream
// and one of its topics; user get shows them back, and the server lets
// the user do exactly that much.
func TestStreamPermissions(t *testing.T) {
	s := startServer(t)
	s.ok(t, "stream", "create", "granted")
	s.ok(t, "stream", "create", "other")
	s.ok(t, "topic", "create", "granted", "events", "1", "none")
	s.ok(t, "topic", "create", "other", "events", "1", "none")
	created := decode[userView](t, s.ok(t, "-o", "json", "user", "create", "bob", "secret-1",
		"--stream-permissions", "0:read_stream,send_messages#0:poll_messages"))
	if len(created.Permissions) != 0 || len(created.Streams) != 1 {
		t.Fatalf("created: %+v", created)
	}
	stream := created.Streams[0]
	if stream.StreamID != 0 || !slices.Equal(stream.Rights, []string{"read_stream", "send_messages"}) ||
		len(stream.Topics) != 1 || !slices.Equal(stream.Topics[0].Rights, []string{"poll_messages"}) {
		t.Fatalf("stream permissions: %+v", stream)
	}
	shown := s.ok(t, "user", "get", "bob")
	wantStrings(t, "table", column(t, shown, "STREAM_PERMISSIONS"), "0:read_stream,send_messages#0:poll_messages")

	bob := func(args ...string) result { return runCLI(t, s.env("bob", "secret-1"), "", args...) }
	if r := bob("message", "send", "granted", "events", "--partition-id", "0", "hi"); r.code != exitOK {
		t.Fatalf("bob may send to his stream\n%s", r)
	}
	if r := bob("message", "poll", "granted", "events", "0", "--first"); r.code != exitOK {
		t.Fatalf("bob may poll his topic\n%s", r)
	}
	wantExit(t, bob("message", "send", "other", "events", "--partition-id", "0", "hi"), exitRefused, "Unauthorized")
	wantExit(t, bob("topic", "create", "granted", "more", "1", "none"), exitRefused, "Unauthorized")

	s.ok(t, "user", "permissions", "bob")
	cleared := decode[userView](t, s.ok(t, "-o", "json", "user", "get", "bob"))
	if len(cleared.Streams) != 0 || len(cleared.Permissions) != 0 {
		t.Fatalf("permissions not cleared: %+v", cleared)
	}
	wantExit(t, s.root(t, "user", "permissions", "bob", "-s", "x:read_stream"), exitUsage, "stream id")
	wantExit(t, s.root(t, "user", "permissions", "bob", "-s", "0:fly"), exitUsage, "unknown stream permission")
}
