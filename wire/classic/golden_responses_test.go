package classic

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
)

// Goal: every legacy reply vector decodes (client side) to the value written
// here by hand from the vector's field notes, and that value encodes (server
// side) to the captured frame. Error vectors must read as a status with an
// empty body and re-encode identically. The test fails if any vector is left
// without a row or any row without a vector.

type decodableReply interface {
	Reply
	Decode(body []byte) error
}

const (
	t0      = 1767225600000000
	maxU64  = ^uint64(0)
	twoGiB  = 2 << 30
	oneHour = 3_600_000_000
)

var eventsTopic = TopicEntry{ID: 0, CreatedAt: t0, PartitionsCount: 3, MessageExpiry: maxU64,
	Compression: CompressionNone, MaxTopicSize: maxU64, ReplicationFactor: 1, SizeBytes: 297, MessagesCount: 3,
	Name: "events"}

var auditTopic = TopicEntry{ID: 1, CreatedAt: t0 + 1, PartitionsCount: 1, MessageExpiry: oneHour,
	Compression: CompressionGzip, MaxTopicSize: twoGiB, ReplicationFactor: 1, Name: "audit"}

var ordersStream = StreamEntry{ID: 0, CreatedAt: t0, TopicsCount: 2, SizeBytes: 297, MessagesCount: 3, Name: "orders"}

func freshEventsTopic() *TopicDetails {
	topic := eventsTopic
	topic.SizeBytes, topic.MessagesCount = 0, 0
	return &TopicDetails{Topic: topic, Partitions: []PartitionEntry{
		{ID: 0, CreatedAt: t0}, {ID: 1, CreatedAt: t0}, {ID: 2, CreatedAt: t0}}}
}

// replyTable holds the expected success body of each non-empty reply vector.
var replyTable = map[string]decodableReply{
	"LoginUser":                    &LoginReply{UserID: 0},
	"LoginWithPersonalAccessToken": &LoginReply{UserID: 0},
	"GetClusterMetadata": &ClusterMetadata{Name: "single-node", Nodes: []ClusterNode{{Name: "iggy-node",
		IP: "127.0.0.1", TCP: 8090, QUIC: 8080, HTTP: 3000, WebSocket: 8092, Role: NodeRoleLeader,
		Status: NodeStatusHealthy}}},
	"GetStats": expectedStats(),
	"GetMe": &ClientDetails{Client: ClientEntry{ClientID: 7, UserID: 0, Transport: TransportTCP,
		Address: "127.0.0.1:53000", ConsumerGroupsCount: 1}, ConsumerGroups: []ClientGroup{{0, 0, 0}}},
	"GetClients": &ClientList{Clients: []ClientEntry{
		{ClientID: 7, UserID: 0, Transport: TransportTCP, Address: "127.0.0.1:53000", ConsumerGroupsCount: 1},
		{ClientID: 8, UserID: UserIDNone, Transport: TransportQUIC, Address: "10.0.0.5:41000"}}},
	"CreateStream": &StreamEntry{ID: 0, CreatedAt: t0, Name: "orders"},
	"CreateTopic":  freshEventsTopic(),
	"CreateTopic (gzip, 1 partition)": &TopicDetails{Topic: auditTopic,
		Partitions: []PartitionEntry{{ID: 0, CreatedAt: t0 + 1}}},
	"GetStreams": &StreamList{Streams: []StreamEntry{ordersStream,
		{ID: 1, CreatedAt: t0 + 5, Name: "payments"}}},
	"GetStream": &StreamDetails{Stream: ordersStream, Topics: []TopicEntry{eventsTopic, auditTopic}},
	"GetTopic": &TopicDetails{Topic: eventsTopic, Partitions: []PartitionEntry{
		{ID: 0, CreatedAt: t0, SegmentsCount: 1}, {ID: 1, CreatedAt: t0, SegmentsCount: 1},
		{ID: 2, CreatedAt: t0, SegmentsCount: 1, CurrentOffset: 102, SizeBytes: 297, MessagesCount: 3}}},
	"GetTopics":           &TopicList{Topics: []TopicEntry{eventsTopic, auditTopic}},
	"GetConsumerOffset":   &ConsumerOffsetReply{PartitionID: 2, CurrentOffset: 102, StoredOffset: 101},
	"CreateConsumerGroup": &GroupEntry{ID: 0, PartitionsCount: 4, Name: "workers"},
	"GetConsumerGroups": &GroupList{Groups: []GroupEntry{{ID: 0, PartitionsCount: 4, MembersCount: 2,
		Name: "workers"}, {ID: 1, PartitionsCount: 4, Name: "auditors"}}},
	"GetConsumerGroup": &GroupDetails{Group: GroupEntry{ID: 0, PartitionsCount: 4, MembersCount: 2, Name: "workers"},
		Members: []GroupMember{{ID: 0, Partitions: []uint32{0, 1}}, {ID: 1, Partitions: []uint32{2, 3}}}},
	"CreateUser (user details with permissions)": &UserDetails{User: UserEntry{ID: 1, CreatedAt: t0 + 10,
		Status: UserActive, Username: "alice"}, HasPermissions: true, Permissions: alicePermissions()},
	"CreateUser (user details without permissions)": &UserDetails{User: UserEntry{ID: 2, CreatedAt: t0 + 20,
		Status: UserInactive, Username: "bob"}},
	"GetUsers": &UserList{Users: []UserEntry{{ID: 0, CreatedAt: t0 - 1_000_000, Status: UserActive, Username: "iggy"},
		{ID: 1, CreatedAt: t0 + 10, Status: UserActive, Username: "alice"},
		{ID: 2, CreatedAt: t0 + 20, Status: UserInactive, Username: "bob"}}},
	"CreatePersonalAccessToken": &RawToken{Token: "pat_8kq2m1xv0a3Zc7Ty9Lw4Rn6Bd5Hs2Ju8Fg1Ep0Qx"},
	"GetPersonalAccessTokens": &TokenList{Tokens: []TokenEntry{{Name: "ci-token"},
		{Name: "ci-token-2", ExpiryAt: 1782689482265600}}},
	// An empty ZIP archive: only the end-of-central-directory record.
	"GetSnapshot": &SnapshotReply{Data: append([]byte("PK\x05\x06"), make([]byte, 18)...)},
}

func expectedStats() *Stats {
	return &Stats{ProcessID: 4242, CPUUsage: 12.5, TotalCPUUsage: 37.5, MemoryUsage: 104857600,
		TotalMemory: 17179869184, AvailableMemory: 8589934592, RunTime: 3600000000, StartTime: t0,
		ReadBytes: 1048576, WrittenBytes: 2097152, MessagesSizeBytes: 4096, StreamsCount: 1, TopicsCount: 2,
		PartitionsCount: 4, SegmentsCount: 4, MessagesCount: 5, ClientsCount: 2, ConsumerGroupsCount: 1,
		Hostname: "iggy-host", OSName: "Linux", OSVersion: "Debian 13", KernelVersion: "6.12.0",
		ServerVersion: "0.8.0", ServerSemver: SemverDecimal(0, 8, 0),
		CacheMetrics: []CacheMetric{{StreamID: 0, TopicID: 0, PartitionID: 2, Hits: 10, Misses: 2,
			HitRatio: 0.8333333}},
		ThreadsCount: 12, FreeDiskSpace: 53687091200, TotalDiskSpace: 107374182400}
}

func TestGoldenResponses(t *testing.T) {
	vectors := loadVectors[responseVector](t, "responses.json", 64)
	exercised := map[string]bool{}
	for _, v := range vectors {
		t.Run(v.Command, func(t *testing.T) {
			frame := unhex(t, v.FrameHex)
			header, err := DecodeReplyHeader(frame)
			if err != nil || uint32(header.Status) != v.Status || header.Length != v.ReplyHeader.Length {
				t.Fatalf("header = %+v, %v; want status %d length %d", header, err, v.Status, v.ReplyHeader.Length)
			}
			body := frame[ReplyPrologueBytes:]
			if !bytes.Equal(body, unhex(t, v.PayloadHex)) || len(body) != int(header.Length) {
				t.Fatal("frame body differs from payload_hex")
			}
			exercised[v.Command] = checkReplyVector(t, v, header.Status, frame)
		})
	}
	matched := 0
	for _, ok := range exercised {
		if ok {
			matched++
		}
	}
	if matched != len(vectors) {
		t.Fatalf("exercised %d reply vectors of %d", matched, len(vectors))
	}
	for name := range replyTable {
		if !exercised[name] {
			t.Errorf("table row %q matched no vector", name)
		}
	}
}

func checkReplyVector(t *testing.T, v responseVector, status Status, frame []byte) bool {
	body := frame[ReplyPrologueBytes:]
	if status != StatusOK {
		if got := AppendErrorReply(nil, status); !bytes.Equal(got, frame) {
			t.Fatalf("error reply = %x, want %x", got, frame)
		}
		return true
	}
	if v.Code == uint32(CodePollMessages) {
		return checkPollVector(t, v.Command, frame)
	}
	want, ok := replyTable[v.Command]
	if !ok {
		if len(body) != 0 {
			t.Fatalf("no table row for the non-empty reply %q", v.Command)
		}
		want = EmptyReply{}
	}
	var got decodableReply = EmptyReply{}
	if _, isEmpty := want.(EmptyReply); !isEmpty {
		got = reflect.New(reflect.TypeOf(want).Elem()).Interface().(decodableReply)
	}
	checkNewReply(t, Code(v.Code), got)
	if err := got.Decode(body); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Fatalf("decoded\n %+v\nwant\n %+v", got, want)
	}
	if encoded := AppendReply(nil, want); !bytes.Equal(encoded, frame) {
		t.Fatalf("encoded\n %x\nwant\n %x", encoded, frame)
	}
	return true
}

const serverAppend = 1767225601000000

// pollTable holds the expected poll replies: the stored messages as the
// server knows them, and the checksums the vector lists for them.
var pollTable = map[string]struct {
	partitionID   uint32
	currentOffset uint64
	messages      []MessageFields
	checksums     []uint64
}{
	"PollMessages":              {2, 102, storedOrders(), []uint64{0x0926c8a3a8a0670e, 0xdc7039b703e71312, 0xd6bd7a6c999b05e5}},
	"PollMessages (empty poll)": {0, 0, nil, nil},
	"PollMessages (one message, server-assigned id)": {0, 0, []MessageFields{{
		ID:     MessageID{0x5f, 0x0e, 0x1c, 0x2a, 0x9b, 0x3d, 0x4e, 0x8f, 0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6, 0x07, 0x18},
		Offset: 0, Timestamp: serverAppend, OriginTimestamp: producerOrigin, Payload: text("hello")}},
		[]uint64{0x1f8cb38eb7687c3e}},
}

func storedOrders() []MessageFields {
	var stored []MessageFields
	for i, m := range threeOrders() {
		stored = append(stored, MessageFields{ID: m.ID, Offset: 100 + uint64(i), Timestamp: serverAppend,
			OriginTimestamp: m.OriginTimestamp, Payload: m.Payload, UserHeaders: m.UserHeaders})
	}
	return stored
}

func checkPollVector(t *testing.T, command string, frame []byte) bool {
	row, ok := pollTable[command]
	if !ok {
		t.Fatalf("no poll row for %q", command)
	}
	built, start := BeginReply(nil)
	built = AppendPollReplyHeader(built, row.partitionID, row.currentOffset, uint32(len(row.messages)))
	for i := range row.messages {
		built = AppendMessage(built, &row.messages[i])
	}
	if built = FinishReply(built, start); !bytes.Equal(built, frame) {
		t.Fatalf("built poll reply\n %x\nwant\n %x", built, frame)
	}
	var reply PollReply
	if err := reply.Decode(frame[ReplyPrologueBytes:]); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if reply.PartitionID != row.partitionID || reply.CurrentOffset != row.currentOffset ||
		int(reply.Count) != len(row.messages) {
		t.Fatalf("poll head = %+v", reply)
	}
	iterator := reply.Messages()
	for i, want := range row.messages {
		got, ok := iterator.Next()
		if !ok {
			t.Fatalf("iterator stopped at %d", i)
		}
		if got.Header.Checksum != row.checksums[i] || !ChecksumValid(got.Raw) || got.Header.Reserved != 0 {
			t.Fatalf("message %d checksum %#x, want %#x", i, got.Header.Checksum, row.checksums[i])
		}
		if fmt.Sprintf("%+v", got.Fields()) != fmt.Sprintf("%+v", want) {
			t.Fatalf("message %d = %+v\nwant %+v", i, got.Fields(), want)
		}
	}
	if _, more := iterator.Next(); more {
		t.Fatal("iterator yields more messages than the count")
	}
	if again := AppendReply(nil, &reply); !bytes.Equal(again, frame) {
		t.Fatalf("re-encoded poll reply differs")
	}
	return true
}

// checkNewReply: NewReply picks the layout the vector shows; an empty body
// is either the command's empty layout, an empty list, or "not found".
func checkNewReply(t *testing.T, code Code, got decodableReply) {
	fromCode, ok := NewReply(code)
	if !ok {
		t.Fatalf("NewReply(%v) unknown", code)
	}
	if reflect.TypeOf(fromCode) == reflect.TypeOf(got) {
		return
	}
	if _, isEmpty := got.(EmptyReply); !isEmpty {
		t.Fatalf("NewReply(%v) = %T, want %T", code, fromCode, got)
	}
	if !EmptyMeansNotFound(code) && fromCode.Decode(nil) != nil {
		t.Fatalf("%v: empty body is neither not-found nor an empty list", code)
	}
}
