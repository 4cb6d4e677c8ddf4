package main

import (
	"strings"
	"testing"
)

// TestStreamVerbs: create, list, get, update, purge and delete a stream
// through the CLI, reading both output formats; a missing stream is
// refused with its status name and exit code 3.
func TestStreamVerbs(t *testing.T) {
	s := startServer(t)
	created := s.ok(t, "stream", "create", "orders")
	wantStrings(t, "created name", column(t, created, "NAME"), "orders")
	if quiet := s.ok(t, "-q", "stream", "create", "payments"); quiet.stdout != "" {
		t.Fatalf("--quiet create printed\n%s", quiet)
	}

	wantStrings(t, "table names", column(t, s.ok(t, "stream", "list"), "NAME"), "orders", "payments")
	listed := decode[[]streamView](t, s.ok(t, "--output", "json", "stream", "list"))
	if len(listed) != 2 || listed[0].Name != "orders" || listed[1].Name != "payments" || listed[0].CreatedAt == 0 {
		t.Fatalf("json list: %+v", listed)
	}
	id := itoa(listed[1].ID)

	s.ok(t, "topic", "create", "orders", "events", "2", "none")
	detail := decode[streamView](t, s.ok(t, "-o", "json", "stream", "get", "orders"))
	if detail.TopicsCount != 1 || len(detail.Topics) != 1 || detail.Topics[0].Name != "events" {
		t.Fatalf("json get: %+v", detail)
	}
	table := s.ok(t, "stream", "get", "orders")
	if !strings.Contains(table.stdout, "events") || !strings.Contains(table.stdout, "topics") {
		t.Fatalf("table get lacks the topic\n%s", table)
	}

	s.ok(t, "stream", "update", id, "refunds")
	renamed := decode[streamView](t, s.ok(t, "-o", "json", "stream", "get", id))
	if renamed.Name != "refunds" {
		t.Fatalf("rename by id: name %q", renamed.Name)
	}
	if quiet := s.ok(t, "--quiet", "stream", "purge", "orders"); quiet.stdout != "" {
		t.Fatalf("--quiet purge printed\n%s", quiet)
	}
	s.ok(t, "stream", "delete", "refunds")
	wantStrings(t, "after delete", column(t, s.ok(t, "stream", "list"), "NAME"), "orders")

	wantExit(t, s.root(t, "stream", "get", "refunds"), exitRefused, "StreamIdNotFound")
	wantExit(t, s.root(t, "stream", "delete", "missing"), exitRefused, "StreamIdNotFound")
	wantExit(t, s.root(t, "stream", "create", "orders"), exitRefused, "StreamNameAlreadyExists")
	wantExit(t, s.root(t, "stream", "create"), exitUsage, "takes 1 argument")
}

// TestTopicVerbs: topic create with compression, expiry, size limit and
// catalog options; get, list, update, purge and delete; refusals of bad
// option values and of a missing topic.
func TestTopicVerbs(t *testing.T) {
	s := startServer(t)
	s.ok(t, "stream", "create", "orders")
	created := decode[topicView](t, s.ok(t, "-o", "json", "topic", "create", "orders", "events", "3", "gzip",
		"1day", "2h", "--max-topic-size", "5GB", "--option", "segment_size=2MiB"))
	if created.Name != "events" || created.PartitionsCount != 3 || created.Compression != "gzip" {
		t.Fatalf("created: %+v", created)
	}
	if created.MessageExpiry != 26*3600*1_000_000 || created.MaxTopicSize != 5_000_000_000 {
		t.Fatalf("created expiry %d, max size %d", created.MessageExpiry, created.MaxTopicSize)
	}
	if created.Options["segment_size"] != "2097152" {
		t.Fatalf("created options: %v", created.Options)
	}
	s.ok(t, "topic", "create", "orders", "audit", "1", "none")

	wantStrings(t, "topic names", column(t, s.ok(t, "topic", "list", "orders"), "NAME"), "events", "audit")
	got := decode[topicView](t, s.ok(t, "-o", "json", "topic", "get", "orders", "events"))
	if len(got.Partitions) != 3 || got.Partitions[2].ID != 2 {
		t.Fatalf("get partitions: %+v", got.Partitions)
	}
	table := s.ok(t, "topic", "get", "orders", "events")
	if partitions := rows(t, table); len(partitions) != 9 { // nine properties up to the blank line
		t.Fatalf("topic get table: %d property rows\n%s", len(partitions), table)
	}
	if !strings.Contains(table.stdout, "26h0m0s") || !strings.Contains(table.stdout, "CURRENT_OFFSET") {
		t.Fatalf("topic get table\n%s", table)
	}

	s.ok(t, "topic", "update", "orders", "events", "events2", "none", "1h", "-m", "unlimited")
	updated := decode[topicView](t, s.ok(t, "-o", "json", "topic", "get", "orders", "events2"))
	if updated.Compression != "none" || updated.MessageExpiry != 3600*1_000_000 || updated.MaxTopicSize != ^uint64(0) {
		t.Fatalf("updated: %+v", updated)
	}
	s.ok(t, "topic", "purge", "orders", "events2")
	s.ok(t, "topic", "delete", "orders", "audit")
	wantStrings(t, "after delete", column(t, s.ok(t, "topic", "list", "orders"), "NAME"), "events2")

	wantExit(t, s.root(t, "topic", "create", "orders", "bad", "1", "lzma"), exitRefused, "InvalidOptionValue")
	wantExit(t, s.root(t, "topic", "create", "orders", "bad", "1", "none", "forever"), exitRefused,
		"InvalidOptionValue")
	wantExit(t, s.root(t, "topic", "create", "orders", "bad", "x", "none"), exitUsage, "partitions count")
	wantExit(t, s.root(t, "topic", "create", "orders", "bad", "1", "none", "--option", "novalue"), exitUsage,
		"key=value")
	wantExit(t, s.root(t, "topic", "get", "orders", "audit"), exitRefused, "TopicIdNotFound")
}

// TestPartitionAndSegmentVerbs: partitions are appended and removed from
// the end; segment delete and message flush are accepted on a live
// partition and refused on a missing one.
func TestPartitionAndSegmentVerbs(t *testing.T) {
	s := startServer(t)
	s.ok(t, "stream", "create", "orders")
	s.ok(t, "topic", "create", "orders", "events", "1", "none")
	s.ok(t, "partition", "create", "orders", "events", "3")
	got := decode[topicView](t, s.ok(t, "-o", "json", "topic", "get", "orders", "events"))
	if got.PartitionsCount != 4 || len(got.Partitions) != 4 {
		t.Fatalf("after create: %+v", got)
	}
	s.ok(t, "partition", "delete", "orders", "events", "2")
	got = decode[topicView](t, s.ok(t, "-o", "json", "topic", "get", "orders", "events"))
	if got.PartitionsCount != 2 || got.Partitions[1].ID != 1 {
		t.Fatalf("after delete: %+v", got)
	}
	s.ok(t, "message", "send", "orders", "events", "--partition-id", "1", "a", "b")
	s.ok(t, "message", "flush", "orders", "events", "1", "--fsync")
	s.ok(t, "segment", "delete", "orders", "events", "1", "1")
	wantExit(t, s.root(t, "partition", "create", "orders", "nope", "1"), exitRefused, "TopicIdNotFound")
	wantExit(t, s.root(t, "segment", "delete", "orders", "events", "9", "1"), exitRefused, "PartitionNotFound")
	wantExit(t, s.root(t, "segment", "delete", "orders", "events", "1"), exitUsage, "takes 4 argument")
}
