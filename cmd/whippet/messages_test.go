package main

import (
	"strings"
	"testing"
)

// setupTopic creates stream "orders" with topic "events" of partitions
// partitions.
func setupTopic(t *testing.T, s *server, partitions string) {
	t.Helper()
	s.ok(t, "stream", "create", "orders")
	s.ok(t, "topic", "create", "orders", "events", partitions, "none")
}

func payloadsOf(view pollView) []string {
	var out []string
	for _, message := range view.Messages {
		out = append(out, string(message.Payload))
	}
	return out
}

// TestMessageSendAndPoll: messages sent from arguments and from stdin,
// to an explicit partition, with typed user headers, come back from poll
// in both formats with their offsets, payloads and headers; every
// strategy starts where it should.
func TestMessageSendAndPoll(t *testing.T) {
	s := startServer(t)
	setupTopic(t, s, "2")
	sent := decode[sendView](t, s.ok(t, "-o", "json", "message", "send", "orders", "events", "--partition-id", "1",
		"-H", "region:string:eu", "-H", "priority:uint32:7", "-H", "ratio:float64:0.5", "-H", "urgent:bool:true",
		"-H", "delta:int16:-3", "-H", "blob:raw:0a0b", "-H", "plain:text", "alpha", "beta"))
	if sent.MessagesCount != 2 || len(sent.Confirmations) != 1 || sent.Confirmations[0].PartitionID != 1 ||
		sent.Confirmations[0].BaseOffset != 0 {
		t.Fatalf("send confirmation: %+v", sent)
	}
	piped := runCLI(t, s.env("iggy", "iggy"), "gamma\n\ndelta\n", "message", "send", "orders", "events",
		"--partition-id", "1")
	if piped.code != exitOK {
		t.Fatalf("stdin send\n%s", piped)
	}
	wantStrings(t, "stdin confirmation", column(t, piped, "BASE_OFFSET"), "2")

	polled := decode[pollView](t, s.ok(t, "-o", "json", "message", "poll", "orders", "events", "1", "--offset", "0",
		"--message-count", "10"))
	wantStrings(t, "json payloads", payloadsOf(polled), "alpha", "beta", "gamma", "delta")
	if polled.PartitionID != 1 || polled.CurrentOffset != 3 || polled.Messages[3].Offset != 3 {
		t.Fatalf("poll view: %+v", polled)
	}
	headers := polled.Messages[0].Headers
	want := map[string]headerView{"region": {"string", "eu"}, "priority": {"uint32", "7"},
		"ratio": {"float64", "0.5"}, "urgent": {"bool", "true"}, "delta": {"int16", "-3"}, "blob": {"raw", "0x0a0b"},
		"plain": {"string", "text"}}
	for key, value := range want {
		if headers[key] != value {
			t.Fatalf("header %s: got %+v, want %+v (all %v)", key, headers[key], value, headers)
		}
	}
	if polled.Messages[2].Headers != nil || polled.Messages[0].ID == polled.Messages[1].ID {
		t.Fatalf("stdin message has headers or ids repeat: %+v", polled.Messages)
	}

	table := s.ok(t, "message", "poll", "orders", "events", "1", "--offset", "1", "-m", "2", "--show-headers")
	wantStrings(t, "table payloads", column(t, table, "PAYLOAD"), "beta", "gamma")
	wantStrings(t, "table offsets", column(t, table, "OFFSET"), "1", "2")
	if !strings.Contains(table.stdout, "priority:uint32:7") {
		t.Fatalf("table lacks headers\n%s", table)
	}
	first := s.ok(t, "message", "poll", "orders", "events", "1", "--first", "-m", "1")
	wantStrings(t, "--first", column(t, first, "PAYLOAD"), "alpha")
	last := s.ok(t, "message", "poll", "orders", "events", "1", "--last", "-m", "2")
	wantStrings(t, "--last", column(t, last, "PAYLOAD"), "gamma", "delta")
	empty := s.ok(t, "message", "poll", "orders", "events", "0", "--first", "-m", "5")
	if got := rows(t, empty); len(got) != 0 {
		t.Fatalf("partition 0 should be empty: %v", got)
	}
}

// TestMessagePollNextAutoCommit: --next with --auto-commit walks a
// partition once per consumer; the stored offset is visible through
// consumer-offset get, and another consumer starts from the beginning.
func TestMessagePollNextAutoCommit(t *testing.T) {
	s := startServer(t)
	setupTopic(t, s, "1")
	s.ok(t, "message", "send", "orders", "events", "--partition-id", "0", "m0", "m1", "m2")
	poll := func(consumer string) []string {
		return column(t, s.ok(t, "message", "poll", "orders", "events", "0", "--next", "-m", "2", "--auto-commit",
			"--consumer", consumer), "PAYLOAD")
	}
	wantStrings(t, "first batch", poll("reader"), "m0", "m1")
	wantStrings(t, "second batch", poll("reader"), "m2")
	wantStrings(t, "drained", poll("reader"))
	wantStrings(t, "other consumer", poll("7"), "m0", "m1")
	stored := decode[offsetView](t, s.ok(t, "-o", "json", "consumer-offset", "get", "reader", "orders", "events", "0"))
	if stored.StoredOffset != 2 || stored.CurrentOffset != 2 || stored.PartitionID != 0 {
		t.Fatalf("stored offset: %+v", stored)
	}
}

// TestMessagePartitioning: key partitioning sends equal keys to one
// partition whether the server or the client hashes it, and balanced
// sends from successive runs spread over every partition.
func TestMessagePartitioning(t *testing.T) {
	s := startServer(t)
	setupTopic(t, s, "3")
	partitionOf := func(args ...string) string {
		r := s.ok(t, append([]string{"message", "send", "orders", "events"}, args...)...)
		return column(t, r, "PARTITION")[0]
	}
	keyed := partitionOf("--message-key", "user-42", "a")
	for range 3 {
		if got := partitionOf("--message-key", "user-42", "b"); got != keyed {
			t.Fatalf("key user-42 went to partition %s, then %s", keyed, got)
		}
	}
	seen := map[string]bool{}
	for range 3 {
		seen[partitionOf("--balanced", "x")] = true
	}
	if len(seen) != 3 {
		t.Fatalf("balanced sends reached partitions %v, want all three", seen)
	}
	clientKeyed := partitionOf("--client-partitioning", "--message-key", "user-42", "y")
	if clientKeyed != keyed {
		t.Fatalf("key user-42: server chose partition %s, client %s", keyed, clientKeyed)
	}
	partitionOf("--client-partitioning", "z")
	total := decode[topicView](t, s.ok(t, "-o", "json", "topic", "get", "orders", "events"))
	if total.MessagesCount != 9 {
		t.Fatalf("messages count %d, want 9", total.MessagesCount)
	}
}

// TestMessageErrors: refusals of a missing stream, topic and partition,
// and usage errors of conflicting or malformed flags.
func TestMessageErrors(t *testing.T) {
	s := startServer(t)
	setupTopic(t, s, "1")
	wantExit(t, s.root(t, "message", "send", "nope", "events", "x"), exitRefused, "NotFound")
	wantExit(t, s.root(t, "message", "poll", "nope", "events", "0"), exitRefused, "NotFound")
	wantExit(t, s.root(t, "message", "send", "orders", "events", "--partition-id", "5", "x"), exitRefused,
		"NotFound")
	wantExit(t, s.root(t, "message", "poll", "orders", "events", "0", "--first", "--next"), exitUsage,
		"none of the others")
	wantExit(t, s.root(t, "message", "send", "orders", "events", "--partition-id", "0", "--message-key", "k", "x"),
		exitUsage, "none of the others")
	wantExit(t, s.root(t, "message", "send", "orders", "events", "-H", "n:uint8:300", "x"), exitUsage, "header")
	wantExit(t, s.root(t, "message", "send", "orders", "events"), exitUsage, "no messages")
	wantExit(t, s.root(t, "message", "poll", "orders", "events"), exitUsage, "partition")
	wantExit(t, s.root(t, "message", "poll", "orders", "events", "0", "-m", "0"), exitUsage, "message-count")
}

// TestConsumerGroupVerbs: create, list, get and delete a group; a group
// poll joins, reads the assigned partitions, commits the group's offset
// and leaves.
func TestConsumerGroupVerbs(t *testing.T) {
	s := startServer(t)
	setupTopic(t, s, "1")
	created := decode[groupView](t, s.ok(t, "-o", "json", "consumer-group", "create", "orders", "events", "workers"))
	if created.Name != "workers" || created.PartitionsCount != 1 {
		t.Fatalf("created: %+v", created)
	}
	s.ok(t, "cg", "create", "orders", "events", "auditors")
	wantStrings(t, "groups", column(t, s.ok(t, "consumer-group", "list", "orders", "events"), "NAME"), "workers",
		"auditors")
	got := decode[groupView](t, s.ok(t, "-o", "json", "consumer-group", "get", "orders", "events", "workers"))
	if got.ID != created.ID || got.MembersCount != 0 || len(got.Members) != 0 {
		t.Fatalf("get: %+v", got)
	}
	wantStrings(t, "get table", column(t, s.ok(t, "cg", "get", "orders", "events", "workers"), "MEMBER"), "-")

	s.ok(t, "message", "send", "orders", "events", "a", "b", "c")
	group := column(t, s.ok(t, "message", "poll", "orders", "events", "--group", "workers", "--next", "-m", "2",
		"--auto-commit"), "PAYLOAD")
	wantStrings(t, "group poll", group, "a", "b")
	stored := decode[offsetView](t, s.ok(t, "-o", "json", "consumer-offset", "get", "workers", "orders", "events", "0",
		"--kind", "consumer-group"))
	if stored.StoredOffset != 1 {
		t.Fatalf("group offset: %+v", stored)
	}
	after := decode[groupView](t, s.ok(t, "-o", "json", "consumer-group", "get", "orders", "events", "workers"))
	if after.MembersCount != 0 {
		t.Fatalf("the poll left a member behind: %+v", after)
	}

	s.ok(t, "consumer-group", "delete", "orders", "events", "auditors")
	wantStrings(t, "after delete", column(t, s.ok(t, "cg", "list", "orders", "events"), "NAME"), "workers")
	wantExit(t, s.root(t, "consumer-group", "get", "orders", "events", "auditors"), exitRefused,
		"ConsumerGroup")
	wantExit(t, s.root(t, "consumer-group", "create", "orders", "events", "workers"), exitRefused,
		"ConsumerGroupNameAlreadyExists")
	wantExit(t, s.root(t, "message", "poll", "orders", "events", "0", "--group", "workers"), exitUsage,
		"drop the partition")
}

// TestConsumerOffsetVerbs: set, get and delete a stored offset; a missing
// one is reported as ResourceNotFound with exit code 3.
func TestConsumerOffsetVerbs(t *testing.T) {
	s := startServer(t)
	setupTopic(t, s, "2")
	s.ok(t, "message", "send", "orders", "events", "--partition-id", "1", "a", "b", "c")
	s.ok(t, "consumer-offset", "set", "reader", "orders", "events", "1", "1")
	got := s.ok(t, "offset", "get", "reader", "orders", "events", "1")
	wantStrings(t, "stored", column(t, got, "STORED_OFFSET"), "1")
	wantStrings(t, "current", column(t, got, "CURRENT_OFFSET"), "2")
	next := s.ok(t, "message", "poll", "orders", "events", "1", "--next", "-c", "reader", "-m", "5")
	wantStrings(t, "next after the stored offset", column(t, next, "PAYLOAD"), "c")
	s.ok(t, "consumer-offset", "delete", "reader", "orders", "events", "1")
	wantExit(t, s.root(t, "consumer-offset", "get", "reader", "orders", "events", "1"), exitRefused,
		"ResourceNotFound", "no offset stored")
	wantExit(t, s.root(t, "consumer-offset", "set", "reader", "orders", "events", "1", "x"), exitUsage, "offset")
	wantExit(t, s.root(t, "consumer-offset", "get", "reader", "orders", "events", "1", "--kind", "bogus"), exitUsage,
		"--kind")
}
