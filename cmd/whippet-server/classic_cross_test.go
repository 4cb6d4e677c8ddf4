package main

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/whippetio/whippet/client"
	classicclient "github.com/whippetio/whippet/client/classic"
	"github.com/whippetio/whippet/wire"
	"github.com/whippetio/whippet/wire/classic"
)

// The classic tests run one real server with a 0.8 classic client and a
// 0.9 client connected to the same port at once, and check that what one
// generation writes the other reads with the same facts
// (PROTOCOL-0.8.md §12.3).

func (s *server) dialClassic(t *testing.T) *classicclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := classicclient.Dial(ctx, s.address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func classicLogin(t *testing.T, c *classicclient.Client) {
	t.Helper()
	userID, err := c.Login(ctxTimeout(t), "iggy", "iggy")
	if err != nil || userID != 0 {
		t.Fatalf("classic login as root: user %d, %v", userID, err)
	}
}

func wantClassicStatus(t *testing.T, what string, err error, status classic.Status) {
	t.Helper()
	if got := classicclient.StatusOf(err); got != status {
		t.Fatalf("%s: status %v (err %v), want %v", what, got, err, status)
	}
}

func cid(n uint32) classic.Identifier { return classic.NumericIdentifier(n) }

// classicHeaders encodes one string user header in the TLV both
// generations share.
func classicHeaders(t *testing.T, key, value string) []byte {
	t.Helper()
	encoded, err := classic.AppendUserHeader(nil, classic.HeaderEntry{KeyKind: classic.HeaderString, Key: []byte(key),
		ValueKind: classic.HeaderString, Value: []byte(value)})
	if err != nil {
		t.Fatal(err)
	}
	return encoded
}

// TestClassicLoginRules: before login only Ping and the logins work
// (40), a failed login answers 42 and keeps the connection, a session is
// per connection, and a 0.9 client works on the same port meanwhile.
func TestClassicLoginRules(t *testing.T) {
	s := startServer(t)
	modern := s.dial(t)
	legacy := s.dialClassic(t)
	ctx := ctxTimeout(t)
	check(t, "classic ping before login", legacy.Ping(ctx))
	_, err := legacy.CreateStream(ctx, "early")
	wantClassicStatus(t, "create before login", err, classic.StatusUnauthenticated)
	wantClassicStatus(t, "logout before login", legacy.Logout(ctx), classic.StatusUnauthenticated)
	_, err = legacy.Login(ctx, "iggy", "wrong-password")
	wantClassicStatus(t, "wrong password", err, classic.StatusInvalidCredentials)
	_, err = legacy.Login(ctx, "no", "iggy")
	wantClassicStatus(t, "short username", err, classic.StatusInvalidUsername)
	check(t, "ping after a failed login", legacy.Ping(ctx))
	classicLogin(t, legacy)
	if _, err := legacy.CreateStream(ctx, "legacy"); err != nil {
		t.Fatalf("create after login: %v", err)
	}
	other := s.dialClassic(t)
	_, err = other.GetStreams(ctx)
	wantClassicStatus(t, "a second connection is not logged in", err, classic.StatusUnauthenticated)
	info := must[*wire.StreamDetails](t, "0.9 get stream")(modern.GetStream(ctx, id(0)))
	if info.Name != "legacy" {
		t.Fatalf("0.9 client sees stream %q, want legacy", info.Name)
	}
	check(t, "classic logout", legacy.Logout(ctx))
	_, err = legacy.GetStreams(ctx)
	wantClassicStatus(t, "after logout", err, classic.StatusUnauthenticated)
}

// TestClassicCrossMessages: a classic producer's messages are polled by
// a 0.9 consumer and a 0.9 producer's by a classic consumer, with ids,
// offsets, timestamps, user headers and payloads intact; a server-drawn
// id is the same for both; offsets stored by one generation are read by
// the other.
func TestClassicCrossMessages(t *testing.T) {
	s := startServer(t)
	modern := s.dial(t)
	legacy := s.dialClassic(t)
	classicLogin(t, legacy)
	ctx := ctxTimeout(t)
	stream := must[classic.StreamEntry](t, "classic create stream")(legacy.CreateStream(ctx, "mixed"))
	topic := must[classic.TopicDetails](t, "classic create topic")(legacy.CreateTopic(ctx, cid(stream.ID), "events",
		2, classic.TopicSettings{Compression: classic.CompressionNone}))
	if stream.ID != 0 || topic.Topic.ID != 0 || len(topic.Partitions) != 2 || topic.Topic.ReplicationFactor != 1 {
		t.Fatalf("classic creates: stream %+v topic %+v", stream, topic)
	}
	origin := uint64(time.Now().UnixMicro()) - 5_000_000
	sent := []classic.OutgoingMessage{
		{ID: classic.MessageID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, OriginTimestamp: origin,
			Payload: []byte("classic-0"), UserHeaders: classicHeaders(t, "gen", "0.8")},
		{OriginTimestamp: origin + 1500, Payload: []byte("classic-1")}, // id drawn by the server
		{ID: classic.MessageID{0xee, 15: 0xff}, OriginTimestamp: origin + 3000, Payload: bytes.Repeat([]byte{0xab}, 3000),
			UserHeaders: classicHeaders(t, "k", "v")},
	}
	check(t, "classic send", legacy.SendMessages(ctx, cid(0), cid(0),
		classic.Partitioning{Kind: classic.PartitioningPartitionID, PartitionID: 1}, sent))
	polled := pollModern(t, modern, 1, 0, 10)
	if len(polled) != 3 {
		t.Fatalf("0.9 poll holds %d messages, want 3", len(polled))
	}
	for i, message := range polled {
		want := sent[i]
		if message.Offset != uint64(i) || message.OriginTimestamp != want.OriginTimestamp ||
			!bytes.Equal(message.Payload, want.Payload) || !bytes.Equal(message.UserHeaders, want.UserHeaders) {
			t.Fatalf("0.9 poll message %d: offset %d origin %d payload %q headers %x; want %+v", i, message.Offset,
				message.OriginTimestamp, message.Payload, message.UserHeaders, want)
		}
		gotID := classicID(message.Header.ID)
		if want.ID != (classic.MessageID{}) && gotID != want.ID {
			t.Fatalf("0.9 poll message %d id %x, want %x", i, gotID, want.ID)
		}
		if gotID == (classic.MessageID{}) || message.Timestamp == 0 {
			t.Fatalf("0.9 poll message %d lacks a stamped id or timestamp: %+v", i, message)
		}
	}
	// The 0.9 producer writes after the classic one, on the same partition.
	modernSent := []wire.OutgoingMessage{
		{ID: wire.Uint128{Lo: 0x1111, Hi: 0x2222}, OriginTimestamp: origin + 9000, Payload: []byte("modern-0"),
			UserHeaders: classicHeaders(t, "gen", "0.9")},
		{ID: wire.Uint128{Lo: 0x3333}, OriginTimestamp: origin + 9500, Payload: []byte("modern-1")},
	}
	must[wire.SendConfirmations](t, "0.9 send")(modern.SendMessages(ctx, id(0), id(0), wire.PartitionID(1), modernSent))
	reply, back, err := legacy.PollMessages(ctx, classic.PollMessages{
		Consumer: classic.Consumer{Kind: classic.ConsumerSingle, ID: cid(3)}, Stream: cid(0), Topic: cid(0),
		Partition: classic.PartitionOf(1), Strategy: classic.PollingStrategy{Kind: classic.PollingOffset}, Count: 10})
	check(t, "classic poll", err)
	if reply.PartitionID != 1 || reply.CurrentOffset != 4 || len(back) != 5 {
		t.Fatalf("classic poll: partition %d current %d, %d messages; want 1, 4, 5", reply.PartitionID,
			reply.CurrentOffset, len(back))
	}
	for i, message := range back {
		header := message.Header
		if !classic.ChecksumValid(message.Raw) || header.Offset != uint64(i) || header.Reserved != 0 {
			t.Fatalf("classic poll message %d: checksum ok %v, offset %d reserved %d", i,
				classic.ChecksumValid(message.Raw), header.Offset, header.Reserved)
		}
		if i < 3 {
			same := polled[i]
			if header.ID != classicID(same.Header.ID) || header.Timestamp != same.Timestamp ||
				header.OriginTimestamp != same.OriginTimestamp || !bytes.Equal(message.Payload, same.Payload) ||
				!bytes.Equal(message.UserHeaders, same.UserHeaders) {
				t.Fatalf("classic and 0.9 disagree on message %d: %+v vs %+v", i, header, same)
			}
			continue
		}
		want := modernSent[i-3]
		if header.ID != classicID(want.ID) || header.OriginTimestamp != want.OriginTimestamp || header.Timestamp == 0 ||
			!bytes.Equal(message.Payload, want.Payload) || !bytes.Equal(message.UserHeaders, want.UserHeaders) {
			t.Fatalf("classic poll of a 0.9 message %d: %+v payload %q, want %+v", i, header, message.Payload, want)
		}
	}
	crossOffsets(t, modern, legacy)
}

// crossOffsets: each generation reads the offset the other stored.
func crossOffsets(t *testing.T, modern *client.Client, legacy *classicclient.Client) {
	ctx := ctxTimeout(t)
	check(t, "classic store offset", legacy.StoreOffset(ctx, classic.StoreConsumerOffset{
		Consumer: classic.Consumer{Kind: classic.ConsumerSingle, ID: cid(9)}, Stream: cid(0), Topic: cid(0),
		Partition: classic.PartitionOf(1), Offset: 2}))
	info, found, err := modern.GetConsumerOffset(ctx, wire.OffsetTarget{Consumer: single(9), Stream: id(0), Topic: id(0),
		Partition: wire.PartitionOf(1)})
	if err != nil || !found || info.StoredOffset != 2 || info.CurrentOffset != 4 {
		t.Fatalf("0.9 reads the classic offset: %+v found %v err %v", info, found, err)
	}
	check(t, "0.9 store offset", modern.StoreConsumerOffset(ctx, wire.OffsetTarget{Consumer: single(10), Stream: id(0),
		Topic: id(0), Partition: wire.PartitionOf(1)}, 4))
	got, found, err := legacy.GetOffset(ctx, classic.GetConsumerOffset{
		Consumer: classic.Consumer{Kind: classic.ConsumerSingle, ID: cid(10)}, Stream: cid(0), Topic: cid(0),
		Partition: classic.PartitionOf(1)})
	if err != nil || !found || got.StoredOffset != 4 || got.CurrentOffset != 4 || got.PartitionID != 1 {
		t.Fatalf("classic reads the 0.9 offset: %+v found %v err %v", got, found, err)
	}
	_, found, err = legacy.GetOffset(ctx, classic.GetConsumerOffset{
		Consumer: classic.Consumer{Kind: classic.ConsumerSingle, ID: cid(77)}, Stream: cid(0), Topic: cid(0),
		Partition: classic.PartitionOf(1)})
	if err != nil || found {
		t.Fatalf("an offset never stored: found %v err %v, want the empty 0.8 reply", found, err)
	}
}

// pollModern polls one partition with the 0.9 client.
func pollModern(t *testing.T, modern *client.Client, partition uint32, offset uint64, count uint32) []wire.PolledMessage {
	t.Helper()
	polled := must[*wire.PolledMessages](t, "0.9 poll")(modern.PollMessages(ctxTimeout(t), &wire.PollMessages{
		Consumer: single(5), Stream: id(0), Topic: id(0), Partition: wire.PartitionOf(partition),
		Strategy: wire.Strategy{Kind: wire.StrategyOffset, Value: offset}, Count: count}))
	var out []wire.PolledMessage
	iterator := polled.Messages()
	for {
		message, ok := iterator.Next()
		if !ok {
			break
		}
		message.Payload = bytes.Clone(message.Payload)
		message.UserHeaders = bytes.Clone(message.UserHeaders)
		out = append(out, message)
	}
	return out
}

func classicID(id wire.Uint128) classic.MessageID {
	var out classic.MessageID
	for i := 0; i < 8; i++ {
		out[i] = byte(id.Lo >> (8 * i))
		out[8+i] = byte(id.Hi >> (8 * i))
	}
	return out
}

// TestClassicMissingEntities: the 0.8 conventions for what does not
// exist: empty success bodies for lookups, 1009/2010/3007 for writes and
// polls.
func TestClassicMissingEntities(t *testing.T) {
	s := startServer(t)
	legacy := s.dialClassic(t)
	classicLogin(t, legacy)
	ctx := ctxTimeout(t)
	if _, found, err := legacy.GetStream(ctx, cid(42)); err != nil || found {
		t.Fatalf("get a missing stream: found %v err %v, want the empty reply", found, err)
	}
	must[classic.StreamEntry](t, "create stream")(legacy.CreateStream(ctx, "s"))
	must[classic.TopicDetails](t, "create topic")(legacy.CreateTopic(ctx, cid(0), "t", 1, classic.TopicSettings{Compression: classic.CompressionNone}))
	if _, found, err := legacy.GetTopic(ctx, cid(0), cid(42)); err != nil || found {
		t.Fatalf("get a missing topic: found %v err %v, want the empty reply", found, err)
	}
	poll := func(stream, topic, partition uint32) error {
		_, _, err := legacy.PollMessages(ctx, classic.PollMessages{
			Consumer: classic.Consumer{Kind: classic.ConsumerSingle, ID: cid(1)}, Stream: cid(stream), Topic: cid(topic),
			Partition: classic.PartitionOf(partition), Strategy: classic.PollingStrategy{Kind: classic.PollingFirst},
			Count: 1})
		return err
	}
	wantClassicStatus(t, "poll a missing stream", poll(42, 0, 0), classic.StatusStreamIdNotFound)
	wantClassicStatus(t, "poll a missing topic", poll(0, 42, 0), classic.StatusTopicIdNotFound)
	wantClassicStatus(t, "poll a missing partition", poll(0, 0, 42), classic.StatusPartitionNotFound)
	send := legacy.SendMessages(ctx, cid(42), cid(0), classic.Partitioning{Kind: classic.PartitioningBalanced},
		[]classic.OutgoingMessage{{Payload: []byte("x")}})
	wantClassicStatus(t, "send to a missing stream", send, classic.StatusStreamIdNotFound)
	_, err := legacy.CreateStream(ctx, "s")
	wantClassicStatus(t, "a duplicate stream", err, classic.StatusStreamNameAlreadyExists)
	store := legacy.StoreOffset(ctx, classic.StoreConsumerOffset{
		Consumer: classic.Consumer{Kind: classic.ConsumerSingle, ID: cid(1)}, Stream: cid(0), Topic: cid(0),
		Partition: classic.PartitionOf(0), Offset: 5})
	wantClassicStatus(t, "an offset on an empty partition", store, classic.StatusInvalidOffset)
	_, err = legacy.CreateGroup(ctx, cid(0), cid(42), "g")
	wantClassicStatus(t, "a group on a missing topic", err, classic.StatusTopicIdNotFound)
	if _, found, err := legacy.GetGroup(ctx, cid(0), cid(0), cid(42)); err != nil || found {
		t.Fatalf("get a missing group: found %v err %v, want the empty reply", found, err)
	}
}

// TestClassicGroupPolls: a classic group member polls without naming a
// partition and the server picks, round-robin over its assignment
// (PROTOCOL-0.8.md §6.5); a non-member gets 5006; messages come from a
// 0.9 producer.
func TestClassicGroupPolls(t *testing.T) {
	s := startServer(t)
	modern := s.dial(t)
	legacy := s.dialClassic(t)
	classicLogin(t, legacy)
	ctx := ctxTimeout(t)
	must[classic.StreamEntry](t, "create stream")(legacy.CreateStream(ctx, "g"))
	must[classic.TopicDetails](t, "create topic")(legacy.CreateTopic(ctx, cid(0), "t", 2, classic.TopicSettings{Compression: classic.CompressionNone}))
	for partition := uint32(0); partition < 2; partition++ {
		must[wire.SendConfirmations](t, "0.9 send")(modern.SendMessages(ctx, id(0), id(0), wire.PartitionID(partition),
			messages(fmt.Sprintf("p%d", partition), 3)))
	}
	group := must[classic.GroupEntry](t, "classic create group")(legacy.CreateGroup(ctx, cid(0), cid(0), "readers"))
	if group.PartitionsCount != 2 || group.Name != "readers" {
		t.Fatalf("group entry %+v", group)
	}
	groupPoll := func(c *classicclient.Client) (classic.PollReply, []classic.Message, error) {
		return c.PollMessages(ctx, classic.PollMessages{
			Consumer: classic.Consumer{Kind: classic.ConsumerGroup, ID: cid(group.ID)}, Stream: cid(0), Topic: cid(0),
			Strategy: classic.PollingStrategy{Kind: classic.PollingNext}, Count: 2, AutoCommit: true})
	}
	_, _, err := groupPoll(legacy)
	wantClassicStatus(t, "group poll before joining", err, classic.StatusConsumerGroupMemberNotFound)
	check(t, "classic join", legacy.JoinGroup(ctx, cid(0), cid(0), cid(group.ID)))
	check(t, "joining twice is a no-op", legacy.JoinGroup(ctx, cid(0), cid(0), cid(group.ID)))
	details, found, err := legacy.GetGroup(ctx, cid(0), cid(0), cid(group.ID))
	if err != nil || !found || len(details.Members) != 1 || len(details.Members[0].Partitions) != 2 {
		t.Fatalf("group after join: %+v found %v err %v", details, found, err)
	}
	seen := map[string]bool{}
	partitions := []uint32{}
	for range 4 {
		reply, polled, err := groupPoll(legacy)
		check(t, "group poll", err)
		partitions = append(partitions, reply.PartitionID)
		for _, message := range polled {
			seen[string(message.Payload)] = true
		}
	}
	if partitions[0] == partitions[1] || partitions[0] != partitions[2] || partitions[1] != partitions[3] {
		t.Fatalf("server-picked partitions %v, want round-robin over both", partitions)
	}
	for partition := 0; partition < 2; partition++ {
		for i := 0; i < 3; i++ {
			if !seen[fmt.Sprintf("p%d-%d", partition, i)] {
				t.Fatalf("group polls missed p%d-%d (saw %v)", partition, i, seen)
			}
		}
	}
	check(t, "classic leave", legacy.LeaveGroup(ctx, cid(0), cid(0), cid(group.ID)))
	_, _, err = groupPoll(legacy)
	wantClassicStatus(t, "group poll after leaving", err, classic.StatusConsumerGroupMemberNotFound)
}

// TestClassicGroupHandover: when a second classic member joins, the
// partition taken from the first is handed over at the first member's
// next poll (the server syncs for a classic member, which cannot), not
// at the rebalancing timeout; afterwards the two members poll disjoint
// partitions and together read every message once.
func TestClassicGroupHandover(t *testing.T) {
	s := startServer(t)
	first := s.dialClassic(t)
	second := s.dialClassic(t)
	classicLogin(t, first)
	classicLogin(t, second)
	ctx := ctxTimeout(t)
	must[classic.StreamEntry](t, "create stream")(first.CreateStream(ctx, "h"))
	must[classic.TopicDetails](t, "create topic")(first.CreateTopic(ctx, cid(0), "t", 2,
		classic.TopicSettings{Compression: classic.CompressionNone}))
	for partition := uint32(0); partition < 2; partition++ {
		var batch []classic.OutgoingMessage
		for i := 0; i < 4; i++ {
			batch = append(batch, classic.OutgoingMessage{Payload: []byte(fmt.Sprintf("p%d-%d", partition, i))})
		}
		check(t, "send", first.SendMessages(ctx, cid(0), cid(0),
			classic.Partitioning{Kind: classic.PartitioningPartitionID, PartitionID: partition}, batch))
	}
	group := must[classic.GroupEntry](t, "create group")(first.CreateGroup(ctx, cid(0), cid(0), "pair"))
	check(t, "first joins", first.JoinGroup(ctx, cid(0), cid(0), cid(group.ID)))
	check(t, "second joins", second.JoinGroup(ctx, cid(0), cid(0), cid(group.ID)))
	// 0.8 §6.5: GetConsumerGroup lists partitions pending revocation with
	// their current owner, so no partition is missing mid-handover.
	details, found, err := second.GetGroup(ctx, cid(0), cid(0), cid(group.ID))
	check(t, "get group", err)
	listed := map[uint32]int{}
	for _, member := range details.Members {
		for _, partition := range member.Partitions {
			listed[partition]++
		}
	}
	if !found || len(details.Members) != 2 || listed[0] != 1 || listed[1] != 1 {
		t.Fatalf("group members %+v: want both partitions listed once across 2 members", details.Members)
	}
	owners := map[uint32]string{}
	seen := map[string]int{}
	poll := func(name string, c *classicclient.Client) {
		reply, polled, err := c.PollMessages(ctx, classic.PollMessages{
			Consumer: classic.Consumer{Kind: classic.ConsumerGroup, ID: cid(group.ID)}, Stream: cid(0), Topic: cid(0),
			Strategy: classic.PollingStrategy{Kind: classic.PollingNext}, Count: 2, AutoCommit: true})
		check(t, name+" group poll", err)
		if len(polled) == 0 {
			return
		}
		if owner, ok := owners[reply.PartitionID]; ok && owner != name {
			t.Fatalf("partition %d polled by %s and %s", reply.PartitionID, owner, name)
		}
		owners[reply.PartitionID] = name
		for _, message := range polled {
			seen[string(message.Payload)]++
		}
	}
	poll("first", first) // syncs the first member: its lost partition goes to the second
	for range 3 {
		poll("second", second)
		poll("first", first)
	}
	if len(owners) != 2 {
		t.Fatalf("partition owners %v, want one partition each", owners)
	}
	for partition := 0; partition < 2; partition++ {
		for i := 0; i < 4; i++ {
			if payload := fmt.Sprintf("p%d-%d", partition, i); seen[payload] != 1 {
				t.Fatalf("%s polled %d times (all: %v)", payload, seen[payload], seen)
			}
		}
	}
}

// TestClassicLongOriginSpan: a classic batch whose origin timestamps span
// hours (more than one 0.9 record holds) is stored whole, in order, on
// one partition even with balanced partitioning, and reads back with
// every origin timestamp intact from both generations.
func TestClassicLongOriginSpan(t *testing.T) {
	s := startServer(t)
	modern := s.dial(t)
	legacy := s.dialClassic(t)
	classicLogin(t, legacy)
	ctx := ctxTimeout(t)
	must[classic.StreamEntry](t, "create stream")(legacy.CreateStream(ctx, "span"))
	must[classic.TopicDetails](t, "create topic")(legacy.CreateTopic(ctx, cid(0), "t", 3,
		classic.TopicSettings{Compression: classic.CompressionNone}))
	const hour = 3_600_000_000
	base := uint64(time.Now().UnixMicro()) - 48*hour
	var sent []classic.OutgoingMessage
	for i := range 6 {
		sent = append(sent, classic.OutgoingMessage{ID: classic.MessageID{byte(i + 1)}, OriginTimestamp: base + uint64(i)*2*hour,
			Payload: []byte(fmt.Sprintf("m%d", i))})
	}
	check(t, "classic send", legacy.SendMessages(ctx, cid(0), cid(0),
		classic.Partitioning{Kind: classic.PartitioningBalanced}, sent))
	found := 0
	for partition := uint32(0); partition < 3; partition++ {
		polled := pollModern(t, modern, partition, 0, 100)
		if len(polled) == 0 {
			continue
		}
		found++
		if len(polled) != len(sent) {
			t.Fatalf("partition %d holds %d of the batch's %d messages", partition, len(polled), len(sent))
		}
		for i, message := range polled {
			if message.Offset != uint64(i) || message.OriginTimestamp != sent[i].OriginTimestamp ||
				string(message.Payload) != string(sent[i].Payload) || classicID(message.Header.ID) != sent[i].ID {
				t.Fatalf("message %d: %+v, want %+v", i, message, sent[i])
			}
		}
		_, back, err := legacy.PollMessages(ctx, classic.PollMessages{
			Consumer: classic.Consumer{Kind: classic.ConsumerSingle, ID: cid(1)}, Stream: cid(0), Topic: cid(0),
			Partition: classic.PartitionOf(partition), Strategy: classic.PollingStrategy{Kind: classic.PollingFirst},
			Count: 100})
		check(t, "classic poll", err)
		for i, message := range back {
			if message.Header.OriginTimestamp != sent[i].OriginTimestamp || message.Header.Offset != uint64(i) {
				t.Fatalf("classic reads message %d as %+v", i, message.Header)
			}
		}
	}
	if found != 1 {
		t.Fatalf("the batch landed on %d partitions, want 1", found)
	}
}
