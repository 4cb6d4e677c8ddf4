package wire

import "math"

const createdAt = 1700000000000000

func ordersTopic(sizeBytes, messagesCount uint64) TopicInfo {
	return TopicInfo{
		ID: 0, CreatedAt: createdAt, PartitionsCount: 3, MessageExpiry: 3600000000, Compression: CompressionGzip,
		MaxTopicSize: math.MaxUint64, SizeBytes: sizeBytes, MessagesCount: messagesCount, Name: "orders",
		Options: Headers{
			{HeaderValue{HeaderString, []byte("compression_algorithm")}, HeaderValue{HeaderString, []byte("gzip")}},
			{HeaderValue{HeaderString, []byte("message_expiry")}, HeaderValue{HeaderUint64, u64Bytes(3600000000)}},
		},
		DerivedOptions: Headers{
			{HeaderValue{HeaderString, []byte("max_topic_size")}, HeaderValue{HeaderUint64, u64Bytes(math.MaxUint64)}},
			{HeaderValue{HeaderString, []byte("segment_size")}, HeaderValue{HeaderUint64, u64Bytes(1 << 30)}},
		},
	}
}

func ordersDetails() *TopicDetails {
	partitions := make([]PartitionInfo, 3)
	for i := range partitions {
		partitions[i] = PartitionInfo{ID: uint32(i), CreatedAt: createdAt, SegmentsCount: 1}
	}
	return &TopicDetails{TopicInfo: ordersTopic(0, 0), Partitions: partitions}
}

func aliceDetails() *UserDetails {
	return &UserDetails{UserInfo: UserInfo{ID: 1, CreatedAt: createdAt, Status: UserActive, Username: "alice"},
		Permissions: alicePermissions()}
}

func clientFive() *ClientDetails {
	return &ClientDetails{
		ClientInfo: ClientInfo{ClientID: 5, UserID: 0, Transport: TransportTCP, Address: "127.0.0.1:53000",
			ConsumerGroupsCount: 1},
		ConsumerGroups: []ClientGroup{{StreamID: 1, TopicID: 0, GroupID: 0}},
	}
}

func goldenStats() *Stats {
	return &Stats{
		ProcessID: 4242, CPUUsage: 1.5, TotalCPUUsage: 12.25, MemoryUsage: 104857600, TotalMemory: 17179869184,
		AvailableMemory: 8589934592, RunTime: 3600, StartTime: 1700000000000000, ReadBytes: 1024,
		WrittenBytes: 2048, MessagesSizeBytes: 4096, StreamsCount: 1, TopicsCount: 1, PartitionsCount: 3,
		SegmentsCount: 3, MessagesCount: 3, ClientsCount: 2, ConsumerGroupsCount: 1, Hostname: "host-a",
		OSName: "Linux", OSVersion: "6.1", KernelVersion: "6.1.0", ServerVersion: "0.9.0-edge.5",
		ServerSemver: 9216, ThreadsCount: 16, FreeDiskSpace: 50000000000, TotalDiskSpace: 100000000000,
		CacheMetrics: []CacheMetric{{StreamID: 1, TopicID: 0, PartitionID: 2, Hits: 10, Misses: 2,
			HitRatio: 0.8333333}},
	}
}

// expectedReplies holds the typed payloads of the golden replies that
// carry one, written from each vector's "fields".
func expectedReplies() map[string]Decoder {
	streamProd := StreamInfo{ID: 1, CreatedAt: createdAt, Name: "prod"}
	return map[string]Decoder{
		"LoginRegister": &LoginReply{UserID: 0, Session: 1, ServerVersion: 0x2C00, ServerRelease: "0.9.0-edge.5"},
		"LoginRegisterWithPat": &LoginReply{UserID: 0, Session: 2, ServerVersion: 0x2C00,
			ServerRelease: "0.9.0-edge.5"},
		"GetClusterMetadata": &ClusterMetadata{Name: "iggy-cluster", Nodes: []ClusterNode{{Name: "iggy-node-0",
			IP: "127.0.0.1", TCPPort: 8090, QUICPort: 8080, HTTPPort: 3000, WebSocketPort: 8092,
			Role: RoleLeader, Status: NodeHealthy}}},
		"GetStats":  goldenStats(),
		"GetMe":     clientFive(),
		"GetClient": clientFive(),
		"GetClients": &ClientList{
			{ClientID: 5, UserID: 0, Transport: TransportTCP, Address: "127.0.0.1:53000", ConsumerGroupsCount: 1},
			{ClientID: 6, UserID: ClientUserNone, Transport: TransportTCP, Address: "127.0.0.1:53001"},
		},
		"DescribeOptions": &OptionSpecs{
			{Key: "compression_algorithm", Kind: HeaderString, Default: []byte("none"),
				Description: "Compression algorithm (none, gzip)"},
			{Key: "message_expiry", Kind: HeaderUint64, Default: u64Bytes(math.MaxUint64),
				Description: "Message expiry in microseconds"},
		},
		"CreateStream": &streamProd,
		"GetStreams": &StreamList{streamProd,
			{ID: 2, CreatedAt: createdAt + 5, Name: "staging"}},
		"GetStream": &StreamDetails{
			StreamInfo: StreamInfo{ID: 1, CreatedAt: createdAt, TopicsCount: 1, SizeBytes: 321, MessagesCount: 3,
				Name: "prod"},
			Topics: []TopicInfo{ordersTopic(321, 3)},
		},
		"CreateTopic":         ordersDetails(),
		"GetTopic":            ordersDetails(),
		"GetTopics":           &TopicList{ordersTopic(0, 0)},
		"SendMessages":        &SendConfirmations{{StreamID: 1, TopicID: 0, PartitionID: 2, BaseOffset: 100}},
		"GetConsumerOffset":   &ConsumerOffsetInfo{PartitionID: 2, CurrentOffset: 102, StoredOffset: 101},
		"CreateConsumerGroup": &ConsumerGroupInfo{ID: 0, PartitionsCount: 3, MembersCount: 0, Name: "analytics"},
		"GetConsumerGroups": &ConsumerGroupList{
			{ID: 0, PartitionsCount: 3, MembersCount: 1, Name: "analytics"},
			{ID: 1, PartitionsCount: 3, MembersCount: 0, Name: "billing"},
		},
		"GetConsumerGroup": &ConsumerGroupDetails{
			ConsumerGroupInfo: ConsumerGroupInfo{ID: 0, PartitionsCount: 3, MembersCount: 1, Name: "analytics"},
			Members:           []GroupMember{{ID: 0, Partitions: []uint32{0, 1, 2}}},
		},
		"SyncConsumerGroup": &GroupAssignment{Generation: 1, Partitions: []uint32{0, 1, 2}},
		"CreateUser":        aliceDetails(),
		"GetUser":           aliceDetails(),
		"GetUsers": &UserList{
			{ID: 0, CreatedAt: 1, Status: UserActive, Username: "iggy"},
			{ID: 1, CreatedAt: createdAt, Status: UserActive, Username: "alice"},
		},
		"CreatePersonalAccessToken": &RawToken{Token: "p5f8QyJtN0s2zv9bXrKq1w4uYd7hA3cE"},
		"GetPersonalAccessTokens": &TokenList{{Name: "ci-token", ExpiryAt: 0},
			{Name: "temp-token", ExpiryAt: 1700086400000000}},
	}
}
