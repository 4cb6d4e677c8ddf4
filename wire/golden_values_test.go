package wire

import "encoding/binary"

// Expected decoded values of the golden request bodies, written from the
// vectors' human-readable "fields", independently of the encoder: decoding
// the golden bytes must yield them and encoding them must yield the bytes.
var (
	stream1      = NumericID(1)
	topicOrders  = NamedID("orders")
	group0       = NumericID(0)
	userAlice    = NamedID("alice")
	consumer7    = Consumer{Kind: ConsumerSingle, ID: NumericID(7)}
	goSDKVersion = ClientVersion{Protocol: 0x2C00, SDKName: "go-sdk", SDKVersion: "0.9.0-edge.4"}
)

func alicePermissions() *Permissions {
	return &Permissions{
		Global: GlobalPermissions{ReadStreams: true, PollMessages: true},
		Streams: []StreamPermissions{{
			StreamID: 1, ReadStream: true, PollMessages: true,
			Topics: []TopicPermissions{{TopicID: 0, PollMessages: true, SendMessages: true}},
		}},
	}
}

func u64Bytes(value uint64) []byte { return binary.LittleEndian.AppendUint64(nil, value) }

func expectedRequests() map[string]Decoder {
	return map[string]Decoder{
		"Ping":                              &Empty{},
		"GetClusterMetadata (before login)": &Empty{},
		"LoginRegister": &LoginRegister{Version: goSDKVersion, Username: "iggy", Password: "iggy",
			PasswordShape: true},
		"GetClusterMetadata":            &Empty{},
		"GetStats":                      &Empty{},
		"GetMe":                         &Empty{},
		"GetClients":                    &Empty{},
		"GetClient":                     &GetClient{ClientID: 5},
		"DescribeOptions":               &DescribeOptions{Scope: ScopeTopic},
		"CreateStream":                  &CreateStream{Name: "prod"},
		"CreateStream (duplicate name)": &CreateStream{Name: "prod"},
		"GetStreams":                    &Empty{},
		"GetStream":                     &StreamTarget{Stream: stream1},
		"GetStream (not found)":         &StreamTarget{Stream: NumericID(9)},
		"UpdateStream":                  &UpdateStream{Stream: stream1, Name: "prod-2"},
		"PurgeStream":                   &StreamTarget{Stream: stream1},
		"CreateTopic": &CreateTopic{Stream: stream1, PartitionsCount: 3, Name: "orders", Options: Headers{
			{HeaderValue{HeaderString, []byte("compression_algorithm")}, HeaderValue{HeaderString, []byte("gzip")}},
			{HeaderValue{HeaderString, []byte("message_expiry")}, HeaderValue{HeaderUint64, u64Bytes(3600000000)}},
		}},
		"GetTopics": &StreamTarget{Stream: stream1},
		"GetTopic":  &TopicTarget{Stream: stream1, Topic: topicOrders},
		"UpdateTopic": &UpdateTopic{Stream: stream1, Topic: topicOrders, Name: "orders-v2", Options: Headers{
			{HeaderValue{HeaderString, []byte("message_expiry")}, HeaderValue{HeaderUint64, u64Bytes(7200000000)}},
		}},
		"PurgeTopic":       &TopicTarget{Stream: stream1, Topic: topicOrders},
		"CreatePartitions": &PartitionsChange{Stream: stream1, Topic: topicOrders, PartitionsCount: 2},
		"DeletePartitions": &PartitionsChange{Stream: stream1, Topic: topicOrders, PartitionsCount: 1},
		"DeleteSegments":   &DeleteSegments{Stream: stream1, Topic: topicOrders, PartitionID: 0, SegmentsCount: 1},
		"PollMessages": &PollMessages{Consumer: consumer7, Stream: stream1, Topic: topicOrders,
			Partition: PartitionOf(2), Strategy: Strategy{Kind: StrategyOffset, Value: 100}, Count: 10},
		"PollMessages (sliced)": &PollMessages{Consumer: consumer7, Stream: stream1, Topic: topicOrders,
			Partition: PartitionOf(2), Strategy: Strategy{Kind: StrategyOffset, Value: 101}, Count: 1, AutoCommit: true},
		"FlushUnsavedBuffer": &FlushUnsavedBuffer{Stream: stream1, Topic: topicOrders, PartitionID: 2, Fsync: true},
		"StoreConsumerOffset": &StoreConsumerOffset{OffsetTarget: OffsetTarget{consumer7, stream1, topicOrders,
			PartitionOf(2)}, Offset: 101, Ack: AckQuorum},
		"GetConsumerOffset": &GetConsumerOffset{OffsetTarget{consumer7, stream1, topicOrders, PartitionOf(2)}},
		"DeleteConsumerOffset": &DeleteConsumerOffset{OffsetTarget: OffsetTarget{consumer7, stream1, topicOrders,
			PartitionOf(2)}, Ack: AckQuorum},
		"CreateConsumerGroup": &CreateConsumerGroup{Stream: stream1, Topic: topicOrders, Name: "analytics"},
		"GetConsumerGroups":   &TopicTarget{Stream: stream1, Topic: topicOrders},
		"GetConsumerGroup":    &GroupTarget{stream1, topicOrders, group0},
		"JoinConsumerGroup":   &GroupTarget{stream1, topicOrders, group0},
		"SyncConsumerGroup":   &GroupTarget{stream1, topicOrders, group0},
		"LeaveConsumerGroup":  &GroupTarget{stream1, topicOrders, group0},
		"DeleteConsumerGroup": &GroupTarget{stream1, topicOrders, group0},
		"DeleteTopic":         &TopicTarget{Stream: stream1, Topic: topicOrders},
		"DeleteStream":        &StreamTarget{Stream: stream1},
		"CreateUser": &CreateUser{Username: "alice", Password: "secret123", Status: UserActive,
			Permissions: alicePermissions()},
		"GetUsers": &Empty{},
		"GetUser":  &UserTarget{User: userAlice},
		"UpdateUser": &UpdateUser{User: userAlice, HasUsername: true, Username: "alice2", HasStatus: true,
			Status: UserInactive},
		"UpdatePermissions": &UpdatePermissions{User: userAlice, Permissions: alicePermissions()},
		"ChangePassword": &ChangePassword{User: userAlice, CurrentPassword: "secret123",
			NewPassword: "secret456"},
		"CreatePersonalAccessToken": &CreatePersonalAccessToken{Name: "ci-token"},
		"CreatePersonalAccessToken (Go SDK expiry quirk)": &CreatePersonalAccessToken{Name: "temp-token",
			Expiry: 3600 << 32},
		"GetPersonalAccessTokens":   &Empty{},
		"DeletePersonalAccessToken": &DeletePersonalAccessToken{Name: "ci-token"},
		"DeleteUser":                &UserTarget{User: userAlice},
		"GetSnapshot":               &GetSnapshot{Compression: SnapshotStored, Types: []uint8{1}},
		"LogoutUser":                &Empty{},
		"LoginRegisterWithPat": &LoginRegister{Version: goSDKVersion, Token: "p5f8QyJtN0s2zv9bXrKq1w4uYd7hA3cE",
			WithToken: true, TokenShape: true},
	}
}
