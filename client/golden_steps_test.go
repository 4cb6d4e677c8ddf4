package client

import (
	"context"
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/whippetio/whippet/wire"
)

var (
	stream1     = wire.NumericID(1)
	topicOrders = wire.NamedID("orders")
	groupZero   = wire.GroupTarget{Stream: stream1, Topic: topicOrders, Group: wire.NumericID(0)}
	userAlice   = wire.NamedID("alice")
	offsetTwo   = wire.OffsetTarget{Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(7)},
		Stream: stream1, Topic: topicOrders, Partition: wire.PartitionOf(2)}
)

func alicePermissions() *wire.Permissions {
	return &wire.Permissions{
		Global: wire.GlobalPermissions{ReadStreams: true, PollMessages: true},
		Streams: []wire.StreamPermissions{{StreamID: 1, ReadStream: true, PollMessages: true,
			Topics: []wire.TopicPermissions{{TopicID: 0, PollMessages: true, SendMessages: true}}}},
	}
}

func goldenMessages(t *testing.T) []wire.OutgoingMessage {
	var vectors struct {
		Send struct {
			Messages []struct {
				ID          string `json:"id_as_u128_le"`
				Origin      uint64 `json:"absolute_origin_timestamp"`
				Payload     string `json:"payload_utf8"`
				UserHeaders string `json:"user_headers_hex"`
			} `json:"messages"`
		} `json:"send_messages"`
	}
	loadVectors(t, "messages_batch.json", &vectors)
	var messages []wire.OutgoingMessage
	for _, message := range vectors.Send.Messages {
		id, _ := strconv.ParseUint(message.ID, 10, 64)
		messages = append(messages, wire.OutgoingMessage{ID: wire.Uint128{Lo: id}, OriginTimestamp: message.Origin,
			Payload: []byte(message.Payload), UserHeaders: unhex(t, message.UserHeaders)})
	}
	return messages
}

func pollFrom(offset uint64, count uint32, autoCommit bool) *wire.PollMessages {
	return &wire.PollMessages{Consumer: offsetTwo.Consumer, Stream: stream1, Topic: topicOrders,
		Partition: wire.PartitionOf(2), Strategy: wire.Strategy{Kind: wire.StrategyOffset, Value: offset},
		Count: count, AutoCommit: autoCommit}
}

func polledOffsets(polled *wire.PolledMessages) []uint64 {
	var offsets []uint64
	iterator := polled.Messages()
	for message, ok := iterator.Next(); ok; message, ok = iterator.Next() {
		offsets = append(offsets, message.Offset)
	}
	return offsets
}

func sessionSteps(t *testing.T) []sessionStep {
	steps := append(systemSteps(), streamSteps()...)
	steps = append(steps, messageSteps(t)...)
	steps = append(steps, groupSteps()...)
	return append(steps, userSteps()...)
}

func systemSteps() []sessionStep {
	return []sessionStep{
		{"Ping before login", func(ctx context.Context, c *Client) error { return c.Ping(ctx) }},
		{"roster before login", func(ctx context.Context, c *Client) error {
			_, err := c.GetClusterMetadata(ctx)
			return expectStatus(err, wire.StatusUnauthenticated)
		}},
		{"Login", func(ctx context.Context, c *Client) error {
			reply, err := c.Login(ctx, "iggy", "iggy")
			if err != nil {
				return err
			}
			return check(reply.Session == 1 && c.Session() == 1 && reply.ServerRelease == "0.9.0-edge.5", "session 1")
		}},
		{"GetStats", func(ctx context.Context, c *Client) error {
			stats, err := c.GetStats(ctx)
			return firstError(err, check(stats.ProcessID == 4242 && stats.Hostname == "host-a", "stats"))
		}},
		{"GetMe", func(ctx context.Context, c *Client) error {
			me, err := c.GetMe(ctx)
			return firstError(err, check(me.ClientID == 5 && len(me.ConsumerGroups) == 1, "me"))
		}},
		{"GetClients", func(ctx context.Context, c *Client) error {
			clients, err := c.GetClients(ctx)
			return firstError(err, check(len(clients) == 2 && clients[1].UserID == wire.ClientUserNone, "clients"))
		}},
		{"GetClient", func(ctx context.Context, c *Client) error {
			client, err := c.GetClient(ctx, 5)
			return firstError(err, check(client.Address == "127.0.0.1:53000", "client 5"))
		}},
		{"DescribeOptions", func(ctx context.Context, c *Client) error {
			specs, err := c.DescribeOptions(ctx, wire.ScopeTopic)
			return firstError(err, check(len(specs) == 2 && specs[0].Key == wire.OptionCompressionAlgorithm, "specs"))
		}},
	}
}

func streamSteps() []sessionStep {
	expiry := func(value uint64) wire.Headers {
		return wire.Headers{wire.Uint64Header(wire.OptionMessageExpiry, value)}
	}
	return []sessionStep{
		{"CreateStream", func(ctx context.Context, c *Client) error {
			stream, err := c.CreateStream(ctx, "prod", nil)
			return firstError(err, check(stream.ID == 1 && stream.Name == "prod", "stream 1"))
		}},
		{"CreateStream twice", func(ctx context.Context, c *Client) error {
			_, err := c.CreateStream(ctx, "prod", nil)
			return expectStatus(err, wire.StatusStreamNameAlreadyExists)
		}},
		{"GetStreams", func(ctx context.Context, c *Client) error {
			streams, err := c.GetStreams(ctx)
			return firstError(err, check(len(streams) == 2 && streams[1].Name == "staging", "streams"))
		}},
		{"GetStream", func(ctx context.Context, c *Client) error {
			stream, err := c.GetStream(ctx, stream1)
			return firstError(err, check(len(stream.Topics) == 1 && stream.Topics[0].Name == "orders", "stream"))
		}},
		{"GetStream missing", func(ctx context.Context, c *Client) error {
			_, err := c.GetStream(ctx, wire.NumericID(9))
			return expectStatus(err, wire.StatusStreamIDNotFound)
		}},
		{"UpdateStream", func(ctx context.Context, c *Client) error { return c.UpdateStream(ctx, stream1, "prod-2", nil) }},
		{"PurgeStream", func(ctx context.Context, c *Client) error { return c.PurgeStream(ctx, stream1) }},
		{"CreateTopic", func(ctx context.Context, c *Client) error {
			options := append(wire.Headers{wire.StringHeader(wire.OptionCompressionAlgorithm, "gzip")}, expiry(3600000000)...)
			topic, err := c.CreateTopic(ctx, &wire.CreateTopic{Stream: stream1, PartitionsCount: 3, Name: "orders",
				Options: options})
			return firstError(err, check(len(topic.Partitions) == 3 && topic.Compression == wire.CompressionGzip, "topic"))
		}},
		{"GetTopics", func(ctx context.Context, c *Client) error {
			topics, err := c.GetTopics(ctx, stream1)
			return firstError(err, check(len(topics) == 1, "topics"))
		}},
		{"GetTopic", func(ctx context.Context, c *Client) error {
			topic, err := c.GetTopic(ctx, stream1, topicOrders)
			return firstError(err, check(topic.PartitionsCount == 3, "topic"))
		}},
		{"UpdateTopic", func(ctx context.Context, c *Client) error {
			return c.UpdateTopic(ctx, &wire.UpdateTopic{Stream: stream1, Topic: topicOrders, Name: "orders-v2",
				Options: expiry(7200000000)})
		}},
		{"PurgeTopic", func(ctx context.Context, c *Client) error { return c.PurgeTopic(ctx, stream1, topicOrders) }},
		{"CreatePartitions", func(ctx context.Context, c *Client) error {
			return c.CreatePartitions(ctx, stream1, topicOrders, 2)
		}},
		{"DeletePartitions", func(ctx context.Context, c *Client) error {
			return c.DeletePartitions(ctx, stream1, topicOrders, 1)
		}},
		{"DeleteSegments", func(ctx context.Context, c *Client) error {
			return c.DeleteSegments(ctx, &wire.DeleteSegments{Stream: stream1, Topic: topicOrders, SegmentsCount: 1})
		}},
	}
}

func messageSteps(t *testing.T) []sessionStep {
	return []sessionStep{
		{"SendMessages", func(ctx context.Context, c *Client) error {
			confirmations, err := c.SendMessages(ctx, stream1, topicOrders, wire.PartitionID(2), goldenMessages(t))
			return firstError(err, check(len(confirmations) == 1 && confirmations[0].BaseOffset == 100, "confirmation"))
		}},
		{"PollMessages", func(ctx context.Context, c *Client) error {
			polled, err := c.PollMessages(ctx, pollFrom(100, 10, false))
			offsets := polledOffsets(polled)
			return firstError(err, check(len(offsets) == 3 && offsets[0] == 100 && offsets[2] == 102, "offsets"))
		}},
		{"PollMessages sliced", func(ctx context.Context, c *Client) error {
			polled, err := c.PollMessages(ctx, pollFrom(101, 1, true))
			offsets := polledOffsets(polled)
			return firstError(err, check(len(offsets) == 1 && offsets[0] == 101, "sliced offsets"))
		}},
		{"FlushUnsavedBuffer", func(ctx context.Context, c *Client) error {
			err := c.FlushUnsavedBuffer(ctx, &wire.FlushUnsavedBuffer{Stream: stream1, Topic: topicOrders,
				PartitionID: 2, Fsync: true})
			return expectStatus(err, wire.StatusFeatureUnavailable)
		}},
		{"StoreConsumerOffset", func(ctx context.Context, c *Client) error {
			return c.StoreConsumerOffset(ctx, offsetTwo, 101)
		}},
		{"GetConsumerOffset", func(ctx context.Context, c *Client) error {
			info, found, err := c.GetConsumerOffset(ctx, offsetTwo)
			return firstError(err, check(found && info.StoredOffset == 101 && info.CurrentOffset == 102, "offset"))
		}},
		{"DeleteConsumerOffset", func(ctx context.Context, c *Client) error {
			return c.DeleteConsumerOffset(ctx, offsetTwo)
		}},
	}
}

func groupSteps() []sessionStep {
	return []sessionStep{
		{"CreateConsumerGroup", func(ctx context.Context, c *Client) error {
			group, err := c.CreateConsumerGroup(ctx, stream1, topicOrders, "analytics")
			return firstError(err, check(group.Name == "analytics" && group.PartitionsCount == 3, "group"))
		}},
		{"GetConsumerGroups", func(ctx context.Context, c *Client) error {
			groups, err := c.GetConsumerGroups(ctx, stream1, topicOrders)
			return firstError(err, check(len(groups) == 2, "groups"))
		}},
		{"GetConsumerGroup", func(ctx context.Context, c *Client) error {
			group, err := c.GetConsumerGroup(ctx, groupZero)
			return firstError(err, check(len(group.Members) == 1 && len(group.Members[0].Partitions) == 3, "members"))
		}},
		{"JoinConsumerGroup", func(ctx context.Context, c *Client) error { return c.JoinConsumerGroup(ctx, groupZero) }},
		{"SyncConsumerGroup", func(ctx context.Context, c *Client) error {
			assignment, err := c.SyncConsumerGroup(ctx, groupZero)
			return firstError(err, check(assignment.Generation == 1 && len(assignment.Partitions) == 3, "assignment"))
		}},
		{"LeaveConsumerGroup", func(ctx context.Context, c *Client) error { return c.LeaveConsumerGroup(ctx, groupZero) }},
		{"DeleteConsumerGroup", func(ctx context.Context, c *Client) error { return c.DeleteConsumerGroup(ctx, groupZero) }},
		{"DeleteTopic", func(ctx context.Context, c *Client) error { return c.DeleteTopic(ctx, stream1, topicOrders) }},
		{"DeleteStream", func(ctx context.Context, c *Client) error { return c.DeleteStream(ctx, stream1) }},
	}
}

func userSteps() []sessionStep {
	const token = "p5f8QyJtN0s2zv9bXrKq1w4uYd7hA3cE"
	return []sessionStep{
		{"CreateUser", func(ctx context.Context, c *Client) error {
			user, err := c.CreateUser(ctx, &wire.CreateUser{Username: "alice", Password: "secret123",
				Status: wire.UserActive, Permissions: alicePermissions()})
			return firstError(err, check(user.ID == 1 && user.Permissions != nil, "alice"))
		}},
		{"GetUsers", func(ctx context.Context, c *Client) error {
			users, err := c.GetUsers(ctx)
			return firstError(err, check(len(users) == 2 && users[0].Username == "iggy", "users"))
		}},
		{"GetUser", func(ctx context.Context, c *Client) error {
			user, err := c.GetUser(ctx, userAlice)
			return firstError(err, check(user.Username == "alice", "user"))
		}},
		{"UpdateUser", func(ctx context.Context, c *Client) error {
			return c.UpdateUser(ctx, &wire.UpdateUser{User: userAlice, HasUsername: true, Username: "alice2",
				HasStatus: true, Status: wire.UserInactive})
		}},
		{"UpdatePermissions", func(ctx context.Context, c *Client) error {
			return c.UpdatePermissions(ctx, userAlice, alicePermissions())
		}},
		{"ChangePassword", func(ctx context.Context, c *Client) error {
			return c.ChangePassword(ctx, userAlice, "secret123", "secret456")
		}},
		{"CreatePersonalAccessToken", func(ctx context.Context, c *Client) error {
			raw, err := c.CreatePersonalAccessToken(ctx, "ci-token", 0)
			return firstError(err, check(raw == token, "raw token"))
		}},
		{"CreatePersonalAccessToken with the Go SDK's expiry", func(ctx context.Context, c *Client) error {
			_, err := c.CreatePersonalAccessToken(ctx, "temp-token", 3600<<32)
			return err
		}},
		{"GetPersonalAccessTokens", func(ctx context.Context, c *Client) error {
			tokens, err := c.GetPersonalAccessTokens(ctx)
			return firstError(err, check(len(tokens) == 2 && tokens[1].ExpiryAt == 1700086400000000, "tokens"))
		}},
		{"DeletePersonalAccessToken", func(ctx context.Context, c *Client) error {
			return c.DeletePersonalAccessToken(ctx, "ci-token")
		}},
		{"DeleteUser", func(ctx context.Context, c *Client) error { return c.DeleteUser(ctx, userAlice) }},
		{"GetSnapshot", func(ctx context.Context, c *Client) error {
			archive, err := c.GetSnapshot(ctx, &wire.GetSnapshot{Compression: wire.SnapshotStored, Types: []uint8{1}})
			return firstError(err, check(len(archive) == 22 && binary.LittleEndian.Uint32(archive) == 0x06054b50, "zip"))
		}},
		{"unknown command", func(ctx context.Context, c *Client) error {
			_, err := c.SendRaw(ctx, 60000, nil)
			return expectStatus(err, wire.StatusInvalidCommand)
		}},
		{"Logout", func(ctx context.Context, c *Client) error {
			return firstError(c.Logout(ctx), check(c.Session() == 0, "session kept after logout"))
		}},
		{"LoginWithToken", func(ctx context.Context, c *Client) error {
			reply, err := c.LoginWithToken(ctx, token)
			return firstError(err, check(reply.Session == 2 && c.Session() == 2, "session 2"))
		}},
	}
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
