package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// TestStreamsAndTopics: stream and topic commands with options, partitions
// and segments, and the statuses of their refusals.
func TestStreamsAndTopics(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "create a")(c.CreateStream(ctx, "a", nil))
	second := must[*wire.StreamInfo](t, "create b")(c.CreateStream(ctx, "b", nil))
	if second.ID != 1 {
		t.Fatalf("second stream id %d, want 1", second.ID)
	}
	_, err := c.CreateStream(ctx, "a", nil)
	wantStatus(t, "duplicate stream", err, wire.StatusStreamNameAlreadyExists)
	_, err = c.CreateStream(ctx, "c", wire.Headers{wire.StringHeader("color", "red")})
	wantStatus(t, "stream option", err, wire.StatusUnsupportedOptionKey)
	check(t, "rename", c.UpdateStream(ctx, id(1), "bee", nil))
	wantStatus(t, "rename to taken", c.UpdateStream(ctx, id(1), "a", nil), wire.StatusStreamNameAlreadyExists)
	wantStatus(t, "update missing", c.UpdateStream(ctx, id(7), "x", nil), wire.StatusStreamIDNotFound)
	streams := must[wire.StreamList](t, "streams")(c.GetStreams(ctx))
	if len(streams) != 2 || streams[1].Name != "bee" {
		t.Fatalf("streams %+v", streams)
	}
	options := wire.Headers{wire.Uint64Header(wire.OptionMessageExpiry, 3_600_000_000),
		wire.StringHeader(wire.OptionCompressionAlgorithm, "gzip")}
	topic := must[*wire.TopicDetails](t, "topic")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: wire.NamedID("a"),
		PartitionsCount: 2, Name: "t", Options: options}))
	if topic.MessageExpiry != 3_600_000_000 || topic.Compression != wire.CompressionGzip || len(topic.Options) != 2 ||
		len(topic.DerivedOptions) == 0 {
		t.Fatalf("topic %+v", topic.TopicInfo)
	}
	_, err = c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 1, Name: "t"})
	wantStatus(t, "duplicate topic", err, wire.StatusTopicNameAlreadyExists)
	_, err = c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(9), PartitionsCount: 1, Name: "u"})
	wantStatus(t, "topic in missing stream", err, wire.StatusStreamIDNotFound)
	_, err = c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 1, Name: "u",
		Options: wire.Headers{wire.StringHeader("colour", "red")}})
	wantStatus(t, "unknown topic option", err, wire.StatusUnsupportedOptionKey)
	_, err = c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 1, Name: "u",
		Options: wire.Headers{wire.StringHeader(wire.OptionCompressionAlgorithm, "zip")}})
	wantStatus(t, "bad option value", err, wire.StatusInvalidOptionValue)
	_, err = c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 1001, Name: "u"})
	wantStatus(t, "too many partitions", err, wire.StatusTooManyPartitions)
	check(t, "update topic", c.UpdateTopic(ctx, &wire.UpdateTopic{Stream: id(0), Topic: id(0), Name: "tt",
		Options: wire.Headers{wire.Uint64Header(wire.OptionMessageExpiry, 60_000_000)}}))
	wantStatus(t, "update with a create-only key", c.UpdateTopic(ctx, &wire.UpdateTopic{Stream: id(0), Topic: id(0),
		Name: "tt", Options: wire.Headers{wire.Uint64Header(wire.OptionSegmentSize, 1<<20)}}), wire.StatusUnsupportedOptionKey)
	check(t, "add partitions", c.CreatePartitions(ctx, id(0), id(0), 3))
	check(t, "remove partitions", c.DeletePartitions(ctx, id(0), id(0), 1))
	wantStatus(t, "remove too many", c.DeletePartitions(ctx, id(0), id(0), 10), wire.StatusInvalidPartitionsCount)
	wantStatus(t, "add zero", c.CreatePartitions(ctx, id(0), id(0), 0), wire.StatusTooManyPartitions)
	must[wire.SendConfirmations](t, "send")(c.SendMessages(ctx, id(0), id(0), wire.PartitionID(3), messages("x", 4)))
	got := must[*wire.TopicDetails](t, "get topic")(c.GetTopic(ctx, wire.NamedID("a"), wire.NamedID("tt")))
	if got.MessageExpiry != 60_000_000 || got.Compression != wire.CompressionGzip || len(got.Partitions) != 4 ||
		got.MessagesCount != 4 || got.Partitions[3].CurrentOffset != 3 || got.Partitions[3].MessagesCount != 4 {
		t.Fatalf("topic after updates %+v %+v", got.TopicInfo, got.Partitions)
	}
	check(t, "flush", c.FlushUnsavedBuffer(ctx, &wire.FlushUnsavedBuffer{Stream: id(0), Topic: id(0), PartitionID: 3,
		Fsync: true}))
	wantStatus(t, "flush a missing partition", c.FlushUnsavedBuffer(ctx, &wire.FlushUnsavedBuffer{Stream: id(0),
		Topic: id(0), PartitionID: 9}), wire.StatusPartitionNotFound)
	check(t, "delete segments", c.DeleteSegments(ctx, &wire.DeleteSegments{Stream: id(0), Topic: id(0), PartitionID: 3,
		SegmentsCount: 1}))
	wantStatus(t, "segments of a missing partition", c.DeleteSegments(ctx, &wire.DeleteSegments{Stream: id(0),
		Topic: id(0), PartitionID: 30, SegmentsCount: 1}), wire.StatusPartitionNotFound)
	stream := must[*wire.StreamDetails](t, "get stream")(c.GetStream(ctx, id(0)))
	if stream.TopicsCount != 1 || len(stream.Topics) != 1 || stream.MessagesCount != 4 {
		t.Fatalf("stream %+v", stream)
	}
	topics := must[wire.TopicList](t, "topics")(c.GetTopics(ctx, id(0)))
	if len(topics) != 1 || topics[0].Name != "tt" {
		t.Fatalf("topics %+v", topics)
	}
	check(t, "purge topic", c.PurgeTopic(ctx, id(0), id(0)))
	purged := must[*wire.TopicDetails](t, "get purged")(c.GetTopic(ctx, id(0), id(0)))
	if purged.MessagesCount != 0 {
		t.Fatalf("purged topic holds %d messages", purged.MessagesCount)
	}
	must[wire.SendConfirmations](t, "send again")(c.SendMessages(ctx, id(0), id(0), wire.PartitionID(0), messages("y", 2)))
	check(t, "purge stream", c.PurgeStream(ctx, id(0)))
	check(t, "delete topic", c.DeleteTopic(ctx, id(0), id(0)))
	wantStatus(t, "delete missing topic", c.DeleteTopic(ctx, id(0), id(0)), wire.StatusTopicIDNotFound)
	if missing, err := c.GetTopic(ctx, id(0), id(0)); err == nil && missing != nil && missing.Name != "" {
		t.Fatalf("deleted topic answered %+v", missing)
	}
	check(t, "delete stream", c.DeleteStream(ctx, wire.NamedID("bee")))
	wantStatus(t, "delete missing stream", c.DeleteStream(ctx, id(1)), wire.StatusStreamIDNotFound)
	again := must[*wire.StreamInfo](t, "reuse id")(c.CreateStream(ctx, "again", nil))
	if again.ID != 1 {
		t.Fatalf("new stream id %d, want the freed 1", again.ID)
	}
}

// TestDeleteRemovesDirectories: deleting a topic and a stream leaves no
// directories of theirs behind, and their ids are reused cleanly.
func TestDeleteRemovesDirectories(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "stream")(c.CreateStream(ctx, "d", nil))
	must[*wire.TopicDetails](t, "topic")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 3, Name: "t"}))
	must[wire.SendConfirmations](t, "send")(c.SendMessages(ctx, id(0), id(0), wire.PartitionID(2), messages("d", 3)))
	topicDirectory := filepath.Join(s.dataDir, "streams", "0", "topics", "0")
	if _, err := os.Stat(topicDirectory); err != nil {
		t.Fatalf("topic directory: %v", err)
	}
	check(t, "delete topic", c.DeleteTopic(ctx, id(0), id(0)))
	if _, err := os.Stat(topicDirectory); !os.IsNotExist(err) {
		t.Fatalf("topic directory after delete: %v", err)
	}
	must[*wire.TopicDetails](t, "topic again")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 1, Name: "t2"}))
	polled := must[*wire.PolledMessages](t, "poll the reused id")(c.PollMessages(ctx, &wire.PollMessages{
		Consumer: single(1), Stream: id(0), Topic: id(0), Partition: wire.PartitionOf(0),
		Strategy: wire.Strategy{Kind: wire.StrategyFirst}, Count: 10}))
	if polled.MessagesCount != 0 {
		t.Fatalf("a reused topic id serves %d old messages", polled.MessagesCount)
	}
	check(t, "delete stream", c.DeleteStream(ctx, id(0)))
	if _, err := os.Stat(filepath.Join(s.dataDir, "streams", "0")); !os.IsNotExist(err) {
		t.Fatalf("stream directory after delete: %v", err)
	}
}

// TestPartitionsOfASecondTopic: partition changes address the named topic
// (not topic 0), its groups rebalance, and the new partitions take sends.
func TestPartitionsOfASecondTopic(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "stream")(c.CreateStream(ctx, "two", nil))
	must[*wire.TopicDetails](t, "first")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 1, Name: "a"}))
	second := must[*wire.TopicDetails](t, "second")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 1,
		Name: "b"}))
	must[*wire.ConsumerGroupInfo](t, "group")(c.CreateConsumerGroup(ctx, id(0), id(second.ID), "g"))
	target := wire.GroupTarget{Stream: id(0), Topic: id(second.ID), Group: id(0)}
	check(t, "join", c.JoinConsumerGroup(ctx, target))
	check(t, "add partitions", c.CreatePartitions(ctx, id(0), id(second.ID), 2))
	if first := must[*wire.TopicDetails](t, "get a")(c.GetTopic(ctx, id(0), id(0))); len(first.Partitions) != 1 {
		t.Fatalf("topic a has %d partitions, want 1", len(first.Partitions))
	}
	if got := must[*wire.TopicDetails](t, "get b")(c.GetTopic(ctx, id(0), id(second.ID))); len(got.Partitions) != 3 {
		t.Fatalf("topic b has %d partitions, want 3", len(got.Partitions))
	}
	waitAssignment(t, c, target, []uint32{0, 1, 2})
	must[wire.SendConfirmations](t, "send to a new partition")(c.SendMessages(ctx, id(0), id(second.ID), wire.PartitionID(2),
		messages("n", 2)))
	check(t, "remove partitions", c.DeletePartitions(ctx, id(0), id(second.ID), 2))
	waitAssignment(t, c, target, []uint32{0})
}

// TestUpdateTopicOptionsReported pins a reply bug: after UpdateTopic set
// message_expiry and max_topic_size, GetTopic still reported them among
// the derived options with their create-time values, as if the client had
// never set them. They must read as set (explicit, with the new values),
// before and after a restart; the keys the client never set stay derived.
func TestUpdateTopicOptionsReported(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "create stream")(c.CreateStream(ctx, "a", nil))
	must[*wire.TopicDetails](t, "create topic")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0),
		PartitionsCount: 1, Name: "t", Options: wire.Headers{wire.StringHeader(wire.OptionCompressionAlgorithm, "gzip")}}))
	check(t, "update topic", c.UpdateTopic(ctx, &wire.UpdateTopic{Stream: id(0), Topic: id(0), Name: "t",
		Options: wire.Headers{wire.Uint64Header(wire.OptionMessageExpiry, 60_000_000),
			wire.Uint64Header(wire.OptionMaxTopicSize, 1<<30)}}))
	for _, restart := range []bool{false, true} {
		if restart {
			s.restart()
			c = s.dial(t)
		}
		got := must[*wire.TopicDetails](t, "get topic")(c.GetTopic(ctx, id(0), id(0)))
		want := map[string]uint64{wire.OptionMessageExpiry: 60_000_000, wire.OptionMaxTopicSize: 1 << 30}
		for key, value := range want {
			entry, set := got.Options.Lookup(key)
			if number, ok := entry.Uint64(); !set || !ok || number != value {
				t.Fatalf("restart %v: explicit %s = %v (set %v), want %d", restart, key, entry, set, value)
			}
			if _, derived := got.DerivedOptions.Lookup(key); derived {
				t.Fatalf("restart %v: %s still reported as derived", restart, key)
			}
		}
		if _, set := got.Options.Lookup(wire.OptionCompressionAlgorithm); !set {
			t.Fatalf("restart %v: the create-time compression option was lost", restart)
		}
		if _, derived := got.DerivedOptions.Lookup(wire.OptionSegmentSize); !derived {
			t.Fatalf("restart %v: segment_size, never set, is not derived", restart)
		}
	}
	// PROTOCOL.md §4.4: the reads of a missing stream answer status 0, an
	// empty topic list and an empty GetTopic body (the SDK's TopicIdNotFound).
	list, err := c.GetTopics(ctx, id(9))
	if err != nil || len(list) != 0 {
		t.Fatalf("topics of a missing stream: %v, %v; want an empty list", list, err)
	}
	_, err = c.GetTopic(ctx, id(9), id(0))
	wantStatus(t, "topic of a missing stream", err, wire.StatusTopicIDNotFound)
}

// TestUpdateTopicRetentionLive pins a reconfiguration bug: an UpdateTopic
// that set message_expiry reached the topic's open partitions only after
// a restart. With maintenance every 20 ms, the expired sealed segments go
// without one.
func TestUpdateTopicRetentionLive(t *testing.T) {
	s := startServer(t, "WHIPPET_DATA_MAINTENANCE_MESSAGES_INTERVAL=20 ms")
	c := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "create stream")(c.CreateStream(ctx, "r", nil))
	must[*wire.TopicDetails](t, "create topic")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0),
		PartitionsCount: 1, Name: "t", Options: wire.Headers{wire.Uint64Header(wire.OptionSegmentSize, wire.SegmentBytesMin)}}))
	payload := make([]byte, 100_000)
	for index := 0; index < int(3*wire.SegmentBytesMin)/len(payload)+1; index++ {
		must[wire.SendConfirmations](t, "send")(c.SendMessages(ctx, id(0), id(0), wire.PartitionID(0),
			[]wire.OutgoingMessage{{ID: wire.Uint128{Lo: uint64(index + 1)}, Payload: payload}}))
	}
	segments := func() uint32 {
		return must[*wire.TopicDetails](t, "get topic")(c.GetTopic(ctx, id(0), id(0))).Partitions[0].SegmentsCount
	}
	if count := segments(); count < 3 {
		t.Fatalf("%d segments, want at least 3", count)
	}
	check(t, "update topic", c.UpdateTopic(ctx, &wire.UpdateTopic{Stream: id(0), Topic: id(0), Name: "t",
		Options: wire.Headers{wire.Uint64Header(wire.OptionMessageExpiry, 1)}}))
	deadline := time.Now().Add(10 * time.Second)
	for segments() > 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d segments 10 s after the expiry update, want 1", segments())
		}
		time.Sleep(20 * time.Millisecond) // the server's maintenance timer, not ours to drive
	}
}
