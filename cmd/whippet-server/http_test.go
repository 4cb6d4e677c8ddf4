package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The HTTP tests drive the real binary's REST API with net/http and
// check status codes, Iggy's JSON shapes and error bodies.

// api is a REST client of one server: its base URL and authorization.
type api struct {
	t      *testing.T
	base   string
	client *http.Client
	auth   func(*http.Request)
}

// logField returns the value of key=value in the server's log.
func logField(t testing.TB, s *server, key string) string {
	t.Helper()
	for _, field := range strings.Fields(s.logs.String()) {
		if value, ok := strings.CutPrefix(field, key+"="); ok {
			return value
		}
	}
	t.Fatalf("no %s in the log\n%s", key, s.logs)
	return ""
}

func newAPI(t *testing.T, s *server) *api {
	return &api{t: t, base: "http://" + logField(t, s, "http_address"), client: &http.Client{Timeout: 20 * time.Second},
		auth: func(*http.Request) {}}
}

func (a *api) bearer(token string) *api {
	out := *a
	out.auth = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
	return &out
}

func (a *api) basic(username, password string) *api {
	out := *a
	out.auth = func(r *http.Request) { r.SetBasicAuth(username, password) }
	return &out
}

// do sends body (a value marshalled to JSON, raw bytes, or nil) and
// returns the status and the decoded reply.
func (a *api) do(method, path string, body any) (int, any) {
	a.t.Helper()
	var reader io.Reader
	switch value := body.(type) {
	case nil:
	case []byte:
		reader = bytes.NewReader(value)
	default:
		encoded, err := json.Marshal(value)
		if err != nil {
			a.t.Fatal(err)
		}
		reader = bytes.NewReader(encoded)
	}
	request, err := http.NewRequest(method, a.base+path, reader)
	if err != nil {
		a.t.Fatal(err)
	}
	a.auth(request)
	response, err := a.client.Do(request)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer response.Body.Close()
	raw, err := io.ReadAll(response.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	var decoded any
	if len(raw) > 0 && json.Unmarshal(raw, &decoded) != nil {
		decoded = string(raw)
	}
	return response.StatusCode, decoded
}

// want runs a request and fails unless it answers code; it returns the body.
func (a *api) want(code int, method, path string, body any) any {
	a.t.Helper()
	got, reply := a.do(method, path, body)
	if got != code {
		a.t.Fatalf("%s %s: status %d, want %d; body %v", method, path, got, code, reply)
	}
	return reply
}

// wantError checks an Iggy error body: HTTP code, status id and code name.
func (a *api) wantError(code int, id float64, name, method, path string, body any) {
	a.t.Helper()
	reply, ok := a.want(code, method, path, body).(map[string]any)
	if !ok || reply["id"] != id || reply["code"] != name || reply["reason"] == "" {
		a.t.Fatalf("%s %s: error body %v, want id %v code %s", method, path, reply, id, name)
	}
}

func field(t *testing.T, value any, path ...string) any {
	t.Helper()
	for _, key := range path {
		object, ok := value.(map[string]any)
		if !ok {
			t.Fatalf("%v is not an object (looking for %s)", value, key)
		}
		value = object[key]
	}
	return value
}

func login(t *testing.T, a *api, username, password string) string {
	t.Helper()
	reply := a.want(http.StatusOK, "POST", "/users/login", map[string]string{"username": username, "password": password})
	token, _ := field(t, reply, "access_token", "token").(string)
	if strings.Count(token, ".") != 2 {
		t.Fatalf("login token %q is not a JWT", token)
	}
	return token
}

func TestHTTPStreamsTopicsPartitions(t *testing.T) {
	s := startServer(t)
	anonymous := newAPI(t, s)
	if reply := anonymous.want(http.StatusOK, "GET", "/", nil); field(t, reply, "status") != "healthy" {
		t.Fatalf("health: %v", reply)
	}
	anonymous.wantError(http.StatusUnauthorized, 40, "unauthenticated", "GET", "/streams", nil)
	anonymous.bearer("a.b.c").wantError(http.StatusUnauthorized, 40, "unauthenticated", "GET", "/streams", nil)
	anonymous.basic("iggy", "wrong").wantError(http.StatusUnauthorized, 42, "invalid_credentials", "GET", "/streams", nil)
	root := anonymous.bearer(login(t, anonymous, "iggy", "iggy"))

	stream := root.want(http.StatusCreated, "POST", "/streams", map[string]string{"name": "orders"})
	if field(t, stream, "name") != "orders" || field(t, stream, "topics_count") != 0.0 {
		t.Fatalf("created stream %v", stream)
	}
	root.wantError(http.StatusBadRequest, 1012, "stream_name_already_exists", "POST", "/streams", map[string]string{"name": "orders"})
	root.wantError(http.StatusBadRequest, 4, "invalid_format", "POST", "/streams", []byte("{not json"))
	root.wantError(http.StatusNotFound, 1009, "stream_id_not_found", "GET", "/streams/missing", nil)
	root.wantError(http.StatusNotFound, 1009, "stream_id_not_found", "GET", "/streams/77", nil)
	if list := root.want(http.StatusOK, "GET", "/streams", nil).([]any); len(list) != 1 {
		t.Fatalf("streams %v", list)
	}
	root.want(http.StatusNoContent, "PUT", "/streams/orders", map[string]string{"name": "sales"})
	root.want(http.StatusOK, "GET", "/streams/sales", nil)

	topic := root.want(http.StatusCreated, "POST", "/streams/sales/topics", map[string]any{"name": "eu", "partitions_count": 2,
		"message_expiry": 60_000_000, "max_topic_size": 1 << 30, "compression_algorithm": "gzip"})
	if parts := field(t, topic, "partitions").([]any); len(parts) != 2 || field(t, topic, "partitions_count") != 2.0 {
		t.Fatalf("created topic %v", topic)
	}
	if field(t, topic, "message_expiry") != 60_000_000.0 || field(t, topic, "max_topic_size") != float64(1<<30) ||
		field(t, topic, "compression_algorithm") != "gzip" {
		t.Fatalf("created topic settings %v", topic)
	}
	root.wantError(http.StatusBadRequest, 4042, "invalid_option_value", "POST", "/streams/sales/topics",
		map[string]any{"name": "bad", "partitions_count": 1, "compression_algorithm": "lz77"})
	root.want(http.StatusNoContent, "POST", "/streams/sales/topics/eu/partitions", map[string]any{"partitions_count": 3})
	if got := field(t, root.want(http.StatusOK, "GET", "/streams/sales/topics/eu", nil), "partitions_count"); got != 5.0 {
		t.Fatalf("partitions after adding 3: %v", got)
	}
	root.want(http.StatusNoContent, "DELETE", "/streams/sales/topics/eu/partitions?partitions_count=4", nil)
	root.wantError(http.StatusBadRequest, 4, "invalid_format", "DELETE", "/streams/sales/topics/eu/partitions?partitions_count=x", nil)
	if got := field(t, root.want(http.StatusOK, "GET", "/streams/sales/topics/eu", nil), "partitions_count"); got != 1.0 {
		t.Fatalf("partitions after deleting 4: %v", got)
	}
	if list := root.want(http.StatusOK, "GET", "/streams/sales/topics", nil).([]any); len(list) != 1 {
		t.Fatalf("topics %v", list)
	}
	root.want(http.StatusNoContent, "PUT", "/streams/sales/topics/eu", map[string]string{"name": "emea"})
	root.want(http.StatusNoContent, "DELETE", "/streams/sales/topics/emea/purge", nil)
	root.want(http.StatusNoContent, "DELETE", "/streams/sales/purge", nil)
	root.want(http.StatusNoContent, "DELETE", "/streams/sales/topics/emea", nil)
	root.wantError(http.StatusNotFound, 2010, "topic_id_not_found", "GET", "/streams/sales/topics/emea", nil)
	root.want(http.StatusNoContent, "DELETE", "/streams/sales", nil)
	root.want(http.StatusNoContent, "DELETE", "/users/logout", nil)
	root.wantError(http.StatusUnauthorized, 40, "unauthenticated", "GET", "/streams", nil)
}

func b64(text string) string { return base64.StdEncoding.EncodeToString([]byte(text)) }

func TestHTTPMessagesAndOffsets(t *testing.T) {
	s := startServer(t)
	root := newAPI(t, s).basic("iggy", "iggy")
	root.want(http.StatusCreated, "POST", "/streams", map[string]string{"name": "s"})
	root.want(http.StatusCreated, "POST", "/streams/s/topics", map[string]any{"name": "t", "partitions_count": 2})
	send := map[string]any{"partitioning": map[string]string{"kind": "partition_id", "value": b64("\x01\x00\x00\x00")},
		"messages": []map[string]string{{"id": "340282366920938463463374607431768211455", "payload": b64("first")},
			{"id": "7", "payload": b64("second")}, {"payload": b64("third")}}}
	root.want(http.StatusNoContent, "POST", "/streams/s/topics/t/messages", send)
	root.wantError(http.StatusBadRequest, 4, "invalid_format", "POST", "/streams/s/topics/t/messages",
		map[string]any{"messages": []map[string]string{{"payload": "not base64!"}}})
	root.wantError(http.StatusNotFound, 2010, "topic_id_not_found", "POST", "/streams/nope/topics/t/messages",
		map[string]any{"messages": []map[string]string{{"payload": b64("x")}}})

	polled := root.want(http.StatusOK, "GET", "/streams/s/topics/t/messages?consumer_id=5&partition_id=1&kind=offset&value=1&count=10", nil)
	messages := field(t, polled, "messages").([]any)
	if len(messages) != 2 || field(t, polled, "current_offset") != 2.0 || field(t, polled, "count") != 2.0 {
		t.Fatalf("poll from offset 1: %v", polled)
	}
	if field(t, messages[0], "payload") != b64("second") || field(t, messages[0], "header", "id") != "7" ||
		field(t, messages[0], "header", "offset") != 1.0 {
		t.Fatalf("first polled message %v", messages[0])
	}
	first := root.want(http.StatusOK, "GET", "/streams/s/topics/t/messages?partition_id=1&kind=first&count=1", nil)
	if got := field(t, field(t, first, "messages").([]any)[0], "header", "id"); got != "340282366920938463463374607431768211455" {
		t.Fatalf("u128 id round trip: %v", got)
	}
	root.wantError(http.StatusBadRequest, 4, "invalid_format", "GET", "/streams/s/topics/t/messages?kind=sideways", nil)

	// next + auto_commit stores the offset; consumer-offsets reads it back.
	root.want(http.StatusOK, "GET", "/streams/s/topics/t/messages?consumer_id=9&partition_id=1&kind=next&count=2&auto_commit=true", nil)
	offset := root.want(http.StatusOK, "GET", "/streams/s/topics/t/consumer-offsets?consumer_id=9&partition_id=1", nil)
	if field(t, offset, "stored_offset") != 1.0 || field(t, offset, "current_offset") != 2.0 {
		t.Fatalf("offset after auto commit: %v", offset)
	}
	root.want(http.StatusNoContent, "PUT", "/streams/s/topics/t/consumer-offsets",
		map[string]any{"consumer": map[string]any{"kind": "consumer", "id": 9}, "partition_id": 1, "offset": 2})
	offset = root.want(http.StatusOK, "GET", "/streams/s/topics/t/consumer-offsets?consumer_id=9&partition_id=1", nil)
	if field(t, offset, "stored_offset") != 2.0 {
		t.Fatalf("offset after store: %v", offset)
	}
	root.want(http.StatusNoContent, "DELETE", "/streams/s/topics/t/consumer-offsets/9?partition_id=1", nil)
	root.wantError(http.StatusNotFound, 3021, "consumer_offset_not_found", "GET",
		"/streams/s/topics/t/consumer-offsets?consumer_id=9&partition_id=1", nil)
}

func TestHTTPUsersTokensGroupsSystem(t *testing.T) {
	s := startServer(t)
	anonymous := newAPI(t, s)
	root := anonymous.basic("iggy", "iggy")
	user := root.want(http.StatusCreated, "POST", "/users", map[string]string{"username": "alice", "password": "secret-1"})
	if field(t, user, "username") != "alice" || field(t, user, "status") != "active" {
		t.Fatalf("created user %v", user)
	}
	root.wantError(http.StatusBadRequest, 4, "invalid_format", "POST", "/users",
		map[string]string{"username": "bob", "password": "secret-1", "status": "asleep"})
	if list := root.want(http.StatusOK, "GET", "/users", nil).([]any); len(list) != 2 {
		t.Fatalf("users %v", list)
	}
	root.want(http.StatusOK, "GET", "/users/alice", nil)
	root.wantError(http.StatusNotFound, 20, "resource_not_found", "GET", "/users/nobody", nil)
	alice := anonymous.bearer(login(t, anonymous, "alice", "secret-1"))
	alice.wantError(http.StatusForbidden, 41, "unauthorized", "POST", "/streams", map[string]string{"name": "x"})
	root.want(http.StatusNoContent, "PUT", "/users/alice/permissions", map[string]any{"permissions": map[string]any{
		"global": map[string]bool{"manage_streams": true, "read_streams": true}}})
	if got := field(t, root.want(http.StatusOK, "GET", "/users/alice", nil), "permissions", "global", "manage_streams"); got != true {
		t.Fatalf("alice's manage_streams after the update: %v", got)
	}
	alice.want(http.StatusCreated, "POST", "/streams", map[string]string{"name": "alice-stream"})
	root.want(http.StatusNoContent, "DELETE", "/streams/alice-stream", nil)
	root.wantError(http.StatusBadRequest, 4, "invalid_format", "PUT", "/users/alice/permissions",
		map[string]any{"permissions": map[string]any{"streams": map[string]any{"x": map[string]bool{}}}})
	alice.want(http.StatusNoContent, "PUT", "/users/alice/password",
		map[string]string{"current_password": "secret-1", "new_password": "secret-2"})
	anonymous.wantError(http.StatusUnauthorized, 42, "invalid_credentials", "POST", "/users/login",
		map[string]string{"username": "alice", "password": "secret-1"})
	login(t, anonymous, "alice", "secret-2")
	root.want(http.StatusNoContent, "PUT", "/users/alice", map[string]string{"status": "inactive"})
	if got := field(t, root.want(http.StatusOK, "GET", "/users/alice", nil), "status"); got != "inactive" {
		t.Fatalf("status after update: %v", got)
	}

	token := field(t, root.want(http.StatusCreated, "POST", "/personal-access-tokens", map[string]any{"name": "ci"}), "token").(string)
	if list := root.want(http.StatusOK, "GET", "/personal-access-tokens", nil).([]any); len(list) != 1 || field(t, list[0], "name") != "ci" {
		t.Fatalf("tokens %v", list)
	}
	reply := anonymous.want(http.StatusOK, "POST", "/personal-access-tokens/login", map[string]string{"token": token})
	viaToken := anonymous.bearer(field(t, reply, "access_token", "token").(string))
	viaToken.want(http.StatusOK, "GET", "/users", nil)
	root.want(http.StatusNoContent, "DELETE", "/personal-access-tokens/ci", nil)
	anonymous.wantError(http.StatusUnauthorized, 53, "invalid_personal_access_token", "POST", "/personal-access-tokens/login", map[string]string{"token": token})

	root.want(http.StatusCreated, "POST", "/streams", map[string]string{"name": "s"})
	root.want(http.StatusCreated, "POST", "/streams/s/topics", map[string]any{"name": "t", "partitions_count": 3})
	group := root.want(http.StatusCreated, "POST", "/streams/s/topics/t/consumer-groups", map[string]string{"name": "g"})
	if field(t, group, "name") != "g" || field(t, group, "partitions_count") != 3.0 {
		t.Fatalf("created group %v", group)
	}
	if details := root.want(http.StatusOK, "GET", "/streams/s/topics/t/consumer-groups/g", nil); field(t, details, "members_count") != 0.0 {
		t.Fatalf("group %v", details)
	}
	if list := root.want(http.StatusOK, "GET", "/streams/s/topics/t/consumer-groups", nil).([]any); len(list) != 1 {
		t.Fatalf("groups %v", list)
	}
	root.want(http.StatusNoContent, "DELETE", "/streams/s/topics/t/consumer-groups/g", nil)
	root.wantError(http.StatusNotFound, 5000, "consumer_group_id_not_found", "GET", "/streams/s/topics/t/consumer-groups/g", nil)

	stats := root.want(http.StatusOK, "GET", "/stats", nil)
	if field(t, stats, "streams_count") != 1.0 || field(t, stats, "partitions_count") != 3.0 {
		t.Fatalf("stats %v", stats)
	}
	if got := anonymous.want(http.StatusOK, "GET", "/ping", nil); got != "pong" {
		t.Fatalf("ping: %v", got)
	}
	root.want(http.StatusOK, "GET", "/clients/me", nil)
	if list := root.want(http.StatusOK, "GET", "/clients", nil).([]any); len(list) < 2 {
		t.Fatalf("clients %v", list)
	}
}
