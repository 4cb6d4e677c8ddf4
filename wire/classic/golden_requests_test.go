package classic

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
)

// Goal: every legacy request vector decodes to the value written here by hand
// from the vector's field notes, and that value encodes to the captured bytes.
// Method: a table keyed by the vector's command name; the test fails when a
// vector has no row, a row has no vector, or fewer vectors ran than exist.
// A round trip alone would miss a misreading the encoder and decoder share.

func num(id uint32) Identifier     { return NumericIdentifier(id) }
func named(name string) Identifier { return NamedIdentifier(name) }
func text(value string) []byte     { return []byte(value) }

var loginVersion = text("0.8.1-edge.2")

// requestTable holds the expected request of each vector (SendMessages rows
// live in sendTable). trailing is the number of bytes the decoder leaves.
var requestTable = map[string]struct {
	want     DecodableRequest
	trailing int
}{
	"Ping":                    {&Ping{}, 0},
	"GetStats (before login)": {&GetStats{}, 0},
	"LoginUser (wrong password)": {&LoginUser{Username: text("iggy"), Password: text("wrong-pass"),
		Version: loginVersion, Context: text("")}, 0},
	"LoginUser": {&LoginUser{Username: text("iggy"), Password: text("iggy"), Version: loginVersion,
		Context: text("")}, 0},
	"GetClusterMetadata": {&GetClusterMetadata{}, 0},
	"GetStats":           {&GetStats{}, 0},
	"GetMe":              {&GetMe{}, 0},
	"GetClients":         {&GetClients{}, 0},
	"GetClient":          {&GetClient{ClientID: 7}, 0},
	"CreateStream":       {&CreateStream{Name: text("orders")}, 0},
	"CreateTopic": {&CreateTopic{Stream: num(0), PartitionsCount: 3,
		Settings: TopicSettings{Compression: CompressionNone}, Name: text("events")}, 0},
	"CreateTopic (named stream, gzip, expiry, size, replication)": {&CreateTopic{Stream: named("orders"),
		PartitionsCount: 1, Settings: TopicSettings{Compression: CompressionGzip, MessageExpiry: 3_600_000_000,
			MaxTopicSize: 2 << 30, ReplicationFactor: 1}, Name: text("audit")}, 0},
	"GetStreams":             {&GetStreams{}, 0},
	"GetStream":              {&GetStream{Stream: num(0)}, 0},
	"GetStream (unknown id)": {&GetStream{Stream: num(7)}, 0},
	"UpdateStream":           {&UpdateStream{Stream: num(0), Name: text("orders-v2")}, 0},
	"GetTopic":               {&GetTopic{Stream: named("orders-v2"), Topic: named("events")}, 0},
	"GetTopics":              {&GetTopics{Stream: num(0)}, 0},
	"UpdateTopic": {&UpdateTopic{Stream: num(0), Topic: num(0), Settings: TopicSettings{
		Compression: CompressionGzip, MessageExpiry: ExpiryNever, MaxTopicSize: SizeUnlimited, ReplicationFactor: 1},
		Name: text("events-v2")}, 0},
	"CreatePartitions": {&CreatePartitions{Stream: num(0), Topic: num(0), PartitionsCount: 2}, 0},
	"DeletePartitions": {&DeletePartitions{Stream: num(0), Topic: num(0), PartitionsCount: 1}, 0},
	"DeleteSegments":   {&DeleteSegments{Stream: num(0), Topic: num(0), PartitionID: 1, SegmentsCount: 2}, 0},
	"PollMessages (consumer, partition 2, offset strategy)": {&PollMessages{
		Consumer: Consumer{ConsumerSingle, num(1)}, Stream: num(0), Topic: num(0), Partition: PartitionOf(2),
		Strategy: PollingStrategy{PollingOffset, 100}, Count: 10}, 0},
	"PollMessages (named consumer, timestamp strategy)": {&PollMessages{
		Consumer: Consumer{ConsumerSingle, named("analytics")}, Stream: num(0), Topic: num(0),
		Partition: PartitionOf(0), Strategy: PollingStrategy{PollingTimestamp, 1767225600123456}, Count: 5}, 0},
	"PollMessages (consumer group, no partition, next, auto-commit)": {&PollMessages{
		Consumer: Consumer{ConsumerGroup, num(0)}, Stream: num(0), Topic: num(0),
		Strategy: PollingStrategy{PollingNext, 0}, Count: 100, AutoCommit: true}, 0},
	"PollMessages (first strategy)": {&PollMessages{Consumer: Consumer{ConsumerSingle, num(1)}, Stream: num(0),
		Topic: num(0), Partition: PartitionOf(1), Strategy: PollingStrategy{PollingFirst, 0}, Count: 1}, 0},
	"PollMessages (last strategy)": {&PollMessages{Consumer: Consumer{ConsumerSingle, num(1)}, Stream: num(0),
		Topic: num(0), Partition: PartitionOf(1), Strategy: PollingStrategy{PollingLast, 0}, Count: 1}, 0},
	"StoreConsumerOffset": {&StoreConsumerOffset{Consumer: Consumer{ConsumerSingle, num(1)}, Stream: num(0),
		Topic: num(0), Partition: PartitionOf(2), Offset: 101}, 0},
	"GetConsumerOffset": {&GetConsumerOffset{Consumer: Consumer{ConsumerSingle, num(1)}, Stream: num(0),
		Topic: num(0), Partition: PartitionOf(2)}, 0},
	"GetConsumerOffset (group, no partition)": {&GetConsumerOffset{Consumer: Consumer{ConsumerGroup,
		named("workers")}, Stream: num(0), Topic: num(0)}, 0},
	"DeleteConsumerOffset": {&DeleteConsumerOffset{Consumer: Consumer{ConsumerSingle, num(1)}, Stream: num(0),
		Topic: num(0), Partition: PartitionOf(2)}, 0},
	"CreateConsumerGroup": {&CreateConsumerGroup{Stream: num(0), Topic: num(0), Name: text("workers")}, 0},
	"GetConsumerGroups":   {&GetConsumerGroups{Stream: num(0), Topic: num(0)}, 0},
	"JoinConsumerGroup":   {&JoinConsumerGroup{Stream: num(0), Topic: num(0), Group: num(0)}, 0},
	"GetConsumerGroup":    {&GetConsumerGroup{Stream: num(0), Topic: num(0), Group: named("workers")}, 0},
	"LeaveConsumerGroup":  {&LeaveConsumerGroup{Stream: num(0), Topic: num(0), Group: num(0)}, 0},
	"DeleteConsumerGroup": {&DeleteConsumerGroup{Stream: num(0), Topic: num(0), Group: num(0)}, 0},
	"CreateUser (with permissions)": {&CreateUser{Username: text("alice"), Password: text("secret123"),
		Status: UserActive, HasPermissions: true, Permissions: alicePermissions()}, 0},
	"CreateUser (inactive, no permissions)": {&CreateUser{Username: text("bob"), Password: text("secret123"),
		Status: UserInactive}, 0},
	"GetUsers": {&GetUsers{}, 0},
	"GetUser":  {&GetUser{User: named("alice")}, 0},
	// The classic Go SDK appends one zero byte when both fields are set.
	"UpdateUser":               {&UpdateUser{User: num(1), Username: text("alice2"), Status: UserInactive}, 1},
	"UpdateUser (status only)": {&UpdateUser{User: num(2), Status: UserActive}, 0},
	"UpdatePermissions": {&UpdatePermissions{User: num(1), HasPermissions: true,
		Permissions: Permissions{Global: GlobalPermissions{PollMessages: true, SendMessages: true}}}, 0},
	"UpdatePermissions (clear)": {&UpdatePermissions{User: num(1)}, 0},
	"ChangePassword": {&ChangePassword{User: num(1), CurrentPassword: text("secret123"),
		NewPassword: text("secret456")}, 0},
	"DeleteUser":                {&DeleteUser{User: num(2)}, 0},
	"CreatePersonalAccessToken": {&CreatePersonalAccessToken{Name: text("ci-token")}, 0},
	// The Go SDK writes its u32 argument 3600 into the upper four bytes.
	"CreatePersonalAccessToken (expiry 3600)": {&CreatePersonalAccessToken{Name: text("ci-token-2"),
		Expiry: 3600 << 32}, 0},
	"GetPersonalAccessTokens":   {&GetPersonalAccessTokens{}, 0},
	"DeletePersonalAccessToken": {&DeletePersonalAccessToken{Name: text("ci-token-2")}, 0},
	"GetSnapshot":               {&GetSnapshot{Compression: SnapshotCompressionStored, Types: []byte{1}}, 0},
	"FlushUnsavedBuffer":        {&FlushUnsavedBuffer{Stream: num(0), Topic: num(0), PartitionID: 0, Fsync: true}, 0},
	"PurgeTopic":                {&PurgeTopic{Stream: num(0), Topic: num(0)}, 0},
	"PurgeStream":               {&PurgeStream{Stream: num(0)}, 0},
	"DeleteTopic":               {&DeleteTopic{Stream: num(0), Topic: num(1)}, 0},
	"DeleteStream":              {&DeleteStream{Stream: num(0)}, 0},
	"LogoutUser":                {&LogoutUser{}, 0},
	"LoginWithPersonalAccessToken": {&LoginWithPersonalAccessToken{
		Token: text("pat_8kq2m1xv0a3Zc7Ty9Lw4Rn6Bd5Hs2Ju8Fg1Ep0Qx")}, 0},
}

// alicePermissions: global read_streams, read_topics, poll_messages; stream 0
// read/poll/send with topic 0 read/poll.
func alicePermissions() Permissions {
	return Permissions{
		Global: GlobalPermissions{ReadStreams: true, ReadTopics: true, PollMessages: true},
		Streams: []StreamPermissions{{StreamID: 0, ReadStream: true, PollMessages: true, SendMessages: true,
			Topics: []TopicPermissions{{TopicID: 0, ReadTopic: true, PollMessages: true}}}},
	}
}

const producerOrigin = 1767225600123456

// sendTable holds the SendMessages vectors as what the producer asked for.
var sendTable = map[string]struct {
	stream, topic Identifier
	partitioning  Partitioning
	messages      []OutgoingMessage
}{
	"SendMessages (balanced, 1 message, id 0)": {num(0), num(0), Partitioning{Kind: PartitioningBalanced},
		[]OutgoingMessage{{OriginTimestamp: producerOrigin, Payload: text("hello")}}},
	"SendMessages (partition id 2, 3 messages with user headers)": {num(0), num(0),
		Partitioning{Kind: PartitioningPartitionID, PartitionID: 2}, threeOrders()},
	"SendMessages (messages key, named stream/topic)": {named("orders-v2"), named("events-v2"),
		Partitioning{Kind: PartitioningMessagesKey, Key: text("order-key-1")},
		[]OutgoingMessage{{OriginTimestamp: producerOrigin + 3000, Payload: text("key-routed")}}},
}

func idFrom(first byte) MessageID {
	var id MessageID
	for i := range id {
		id[i] = first + byte(i)
	}
	return id
}

// threeOrders are the partition-2 messages; their user headers are the TLV
// pairs listed in the vector's notes.
func threeOrders() []OutgoingMessage {
	return []OutgoingMessage{
		{ID: idFrom(0x01), OriginTimestamp: producerOrigin, Payload: text(`{"order":1}`),
			UserHeaders: tlv(2, text("content-type"), 2, text("application/json"))},
		{ID: idFrom(0x11), OriginTimestamp: producerOrigin + 1000, Payload: text(`{"order":2}`),
			UserHeaders: append(tlv(6, []byte{7, 0, 0, 0}, 3, []byte{1}), tlv(2, text("retries"), 11, []byte{3, 0, 0, 0})...)},
		{ID: idFrom(0x21), OriginTimestamp: producerOrigin + 2000, Payload: text(`{"order":3}`),
			UserHeaders: tlv(2, text("trace"), 1, []byte{0xde, 0xad, 0xbe, 0xef})},
	}
}

func tlv(keyKind byte, key []byte, valueKind byte, value []byte) []byte {
	out := append([]byte{keyKind}, appendU32(nil, uint32(len(key)))...)
	out = append(out, key...)
	out = append(out, valueKind)
	out = appendU32(out, uint32(len(value)))
	return append(out, value...)
}

func TestGoldenRequests(t *testing.T) {
	vectors := loadVectors[requestVector](t, "requests.json", 63)
	exercised := map[string]bool{}
	for _, v := range vectors {
		t.Run(v.Command, func(t *testing.T) {
			frame := unhex(t, v.FrameHex)
			header, err := DecodeRequestHeader(frame)
			if err != nil || uint32(header.Code) != v.Header.Code || header.Length != v.Header.Length ||
				header.BodyBytes() != v.Header.PayloadLength {
				t.Fatalf("header = %+v, %v; want %+v", header, err, v.Header)
			}
			body := frame[RequestPrologueBytes:]
			if !bytes.Equal(body, unhex(t, v.PayloadHex)) {
				t.Fatal("frame body differs from payload_hex")
			}
			if checkRequestVector(t, v.Command, header.Code, frame) {
				exercised[v.Command] = true
			}
		})
	}
	if want := len(requestTable) + len(sendTable) + 1; len(exercised) != want || len(exercised) != len(vectors) {
		t.Fatalf("exercised %d request vectors of %d (table rows + unknown code: %d)", len(exercised), len(vectors), want)
	}
}

// checkRequestVector runs one vector in both directions and reports whether
// it was matched to a row.
func checkRequestVector(t *testing.T, command string, code Code, frame []byte) bool {
	body := frame[RequestPrologueBytes:]
	if code == 999 {
		_, _, err := DecodeRequest(code, body)
		if StatusOf(err) != StatusInvalidCommand || code.Known() {
			t.Fatalf("unknown code: err = %v", err)
		}
		return true
	}
	if row, ok := sendTable[command]; ok {
		checkSendVector(t, frame, row.stream, row.topic, row.partitioning, row.messages)
		return true
	}
	row, ok := requestTable[command]
	if !ok {
		t.Fatalf("no table row for vector %q", command)
	}
	got, consumed, err := DecodeRequest(code, body)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if consumed != len(body)-row.trailing {
		t.Fatalf("consumed %d of %d bytes, want %d trailing", consumed, len(body), row.trailing)
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", row.want) || reflect.TypeOf(got) != reflect.TypeOf(row.want) {
		t.Fatalf("decoded\n %+v\nwant\n %+v", got, row.want)
	}
	encoded, err := row.want.AppendBody(nil)
	if err != nil || !bytes.Equal(encoded, body[:consumed]) {
		t.Fatalf("encode = %x, %v; want %x", encoded, err, body[:consumed])
	}
	if row.trailing == 0 {
		whole, err := AppendRequest(nil, row.want)
		if err != nil || !bytes.Equal(whole, frame) {
			t.Fatalf("frame = %x, %v; want %x", whole, err, frame)
		}
	}
	return true
}

func checkSendVector(t *testing.T, frame []byte, stream, topic Identifier, p Partitioning, messages []OutgoingMessage) {
	body := frame[RequestPrologueBytes:]
	built, err := AppendSendMessagesBody(nil, stream, topic, p, messages)
	if err != nil || !bytes.Equal(built, body) {
		t.Fatalf("built body = %x, %v\nwant %x", built, err, body)
	}
	var req SendMessages
	consumed, err := req.Decode(body)
	if err != nil || consumed != len(body) {
		t.Fatalf("decode: consumed %d of %d, %v", consumed, len(body), err)
	}
	if fmt.Sprintf("%+v %+v %+v", req.Stream, req.Topic, req.Partitioning) != fmt.Sprintf("%+v %+v %+v", stream, topic, p) {
		t.Fatalf("metadata = %+v %+v %+v", req.Stream, req.Topic, req.Partitioning)
	}
	if int(req.Count) != len(messages) {
		t.Fatalf("count = %d, want %d", req.Count, len(messages))
	}
	for i, want := range messages {
		got := req.Message(i)
		h := got.Header
		if h.ID != want.ID || h.OriginTimestamp != want.OriginTimestamp || h.Checksum != 0 || h.Offset != 0 ||
			h.Timestamp != 0 || h.Reserved != 0 || !bytes.Equal(got.Payload, want.Payload) ||
			!bytes.Equal(got.UserHeaders, want.UserHeaders) {
			t.Fatalf("message %d = %+v", i, got)
		}
	}
	whole, err := AppendRequest(nil, req)
	if err != nil || !bytes.Equal(whole, frame) {
		t.Fatalf("re-encoded frame = %x, %v", whole, err)
	}
}
