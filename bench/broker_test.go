package bench

import (
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// broker is an in-memory stand-in for the far end of the network: enough of
// the protocol (login, streams, topics, groups, send, poll, offsets, stats)
// to drive every benchmark kind over real TCP through our client, so the
// actors' logic is tested before a real server exists. It keeps every
// batch, stamps offsets as a server does and serves polls from them.
type broker struct {
	t        *testing.T
	listener net.Listener
	wait     sync.WaitGroup

	mu       sync.Mutex
	sessions uint64
	// sendsLeft, when positive, is how many more sends are accepted before
	// every send is refused (a server failing mid-run).
	sendsLeft int
	streams   []*brokerStream // index = id; nil once deleted
	failures  []string
}

type brokerStream struct {
	name   string
	topics []*brokerTopic
}

type brokerTopic struct {
	name       string
	options    wire.Headers
	partitions []*brokerPartition
	groups     []*brokerGroup
	cursor     uint32 // balanced partitioning
}

type brokerPartition struct {
	batches [][]byte // stamped records
	bases   []uint64 // base offset of each batch
	next    uint64   // next offset
}

type brokerGroup struct {
	name    string
	members []wire.Uint128
	stored  map[uint32]uint64 // partition → last committed offset
}

func startBroker(t *testing.T) *broker {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	b := &broker{t: t, listener: listener}
	b.wait.Add(1)
	go b.serve()
	t.Cleanup(b.stop)
	return b
}

func (b *broker) address() string { return b.listener.Addr().String() }

func (b *broker) serve() {
	defer b.wait.Done()
	for {
		conn, err := b.listener.Accept()
		if err != nil {
			return
		}
		b.wait.Add(1)
		go b.handle(conn)
	}
}

func (b *broker) stop() {
	_ = b.listener.Close()
	b.wait.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, failure := range b.failures {
		b.t.Error("broker: " + failure)
	}
}

func (b *broker) fail(text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures = append(b.failures, text)
}

// handle answers one connection's requests in order; a connection that
// closes leaves every group it joined.
func (b *broker) handle(conn net.Conn) {
	defer b.wait.Done()
	defer conn.Close()
	var client wire.Uint128
	defer func() { b.leaveAll(client) }()
	for {
		frame, err := readRequestFrame(conn)
		if err != nil {
			return
		}
		request, _, err := wire.DecodeRequest(frame)
		if err != nil {
			b.fail("undecodable request: " + err.Error())
			return
		}
		client = request.Header.Client
		if _, err := conn.Write(b.answer(&request)); err != nil {
			return
		}
	}
}

func readRequestFrame(reader io.Reader) ([]byte, error) {
	var header [wire.HeaderBytes]byte
	if _, err := io.ReadFull(reader, header[:]); err != nil {
		return nil, err
	}
	size, err := wire.FrameSize(header[:])
	if err != nil {
		return nil, err
	}
	frame := make([]byte, size)
	copy(frame, header[:])
	_, err = io.ReadFull(reader, frame[wire.HeaderBytes:])
	return frame, err
}

// reply encodes a success reply with payload (nil for none).
func reply(request *wire.Request, payload wire.Body) []byte {
	code := request.Header.CommandCode()
	header := wire.ReplyTo(&request.Header, code.ReplyOperation())
	buffer := make([]byte, wire.ReplyBytes(header.Operation, payload))
	wire.EncodeReply(buffer, header, payload)
	return buffer
}

// refuse encodes a pre-commit refusal.
func refuse(request *wire.Request, status wire.Status) []byte {
	code := request.Header.CommandCode()
	header := wire.ReplyTo(&request.Header, code.ReplyOperation())
	buffer := make([]byte, wire.HeaderBytes)
	wire.EncodeStatusReply(buffer, header, status)
	return buffer
}

// answer dispatches one request under the broker's lock.
func (b *broker) answer(request *wire.Request) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if request.Header.Operation == wire.OperationRegister {
		b.sessions++
		return reply(request, &wire.LoginReply{Session: b.sessions, ServerVersion: wire.ProtocolVersion,
			ServerRelease: "broker"})
	}
	switch request.Header.CommandCode() {
	case wire.CodePing:
		return reply(request, nil)
	case wire.CodeGetStream, wire.CodeCreateStream, wire.CodeDeleteStream:
		return b.onStream(request)
	case wire.CodeGetTopic, wire.CodeCreateTopic:
		return b.onTopic(request)
	case wire.CodeGetConsumerGroups, wire.CodeCreateConsumerGroup, wire.CodeJoinConsumerGroup,
		wire.CodeSyncConsumerGroup:
		return b.onGroup(request)
	case wire.CodeSendMessages:
		return b.onSend(request)
	case wire.CodePollMessages:
		return b.onPoll(request)
	case wire.CodeGetConsumerOffset:
		return b.onGetOffset(request)
	case wire.CodeGetStats:
		return reply(request, &wire.Stats{Hostname: "broker", ServerVersion: "broker"})
	}
	return refuse(request, wire.StatusFeatureUnavailable)
}

func (b *broker) stream(id wire.Identifier) (int, *brokerStream) {
	for index, stream := range b.streams {
		if stream == nil {
			continue
		}
		if (id.IsNumeric() && id.ID == uint32(index)) || (!id.IsNumeric() && string(id.Name) == stream.name) {
			return index, stream
		}
	}
	return -1, nil
}

func (b *broker) topic(streamID, topicID wire.Identifier) (*brokerTopic, uint32) {
	_, stream := b.stream(streamID)
	if stream == nil {
		return nil, 0
	}
	for index, topic := range stream.topics {
		if (topicID.IsNumeric() && topicID.ID == uint32(index)) || (!topicID.IsNumeric() && string(topicID.Name) == topic.name) {
			return topic, uint32(index)
		}
	}
	return nil, 0
}

func (b *broker) onStream(request *wire.Request) []byte {
	switch request.Header.CommandCode() {
	case wire.CodeCreateStream:
		var body wire.CreateStream
		if wire.DecodeAll(&body, request.Body) != nil {
			return refuse(request, wire.StatusInvalidCommand)
		}
		b.streams = append(b.streams, &brokerStream{name: body.Name})
		return reply(request, &wire.StreamInfo{ID: uint32(len(b.streams) - 1), Name: body.Name})
	case wire.CodeDeleteStream:
		var body wire.StreamTarget
		_ = wire.DecodeAll(&body, request.Body)
		index, stream := b.stream(body.Stream)
		if stream == nil {
			return refuse(request, wire.StatusStreamIDNotFound)
		}
		b.streams[index] = nil
		return reply(request, nil)
	}
	var body wire.StreamTarget
	_ = wire.DecodeAll(&body, request.Body)
	index, stream := b.stream(body.Stream)
	if stream == nil {
		return reply(request, nil) // §4.4: status 0, empty body
	}
	return reply(request, &wire.StreamDetails{StreamInfo: wire.StreamInfo{ID: uint32(index), Name: stream.name}})
}

func (b *broker) onTopic(request *wire.Request) []byte {
	if request.Header.CommandCode() == wire.CodeCreateTopic {
		var body wire.CreateTopic
		if wire.DecodeAll(&body, request.Body) != nil {
			return refuse(request, wire.StatusInvalidCommand)
		}
		_, stream := b.stream(body.Stream)
		if stream == nil {
			return refuse(request, wire.StatusStreamIDNotFound)
		}
		settings := wire.DefaultTopicSettings()
		if err := settings.Apply(body.Options, false); err != nil {
			return refuse(request, wire.StatusOf(err))
		}
		topic := &brokerTopic{name: body.Name, options: append(wire.Headers(nil), body.Options...)}
		for range body.PartitionsCount {
			topic.partitions = append(topic.partitions, &brokerPartition{})
		}
		stream.topics = append(stream.topics, topic)
		return reply(request, topicDetails(topic, uint32(len(stream.topics)-1)))
	}
	var body wire.TopicTarget
	_ = wire.DecodeAll(&body, request.Body)
	topic, id := b.topic(body.Stream, body.Topic)
	if topic == nil {
		return reply(request, nil)
	}
	return reply(request, topicDetails(topic, id))
}

func topicDetails(topic *brokerTopic, id uint32) *wire.TopicDetails {
	details := &wire.TopicDetails{TopicInfo: wire.TopicInfo{ID: id, Name: topic.name,
		PartitionsCount: uint32(len(topic.partitions)), Options: topic.options}}
	for index, partition := range topic.partitions {
		details.MessagesCount += partition.next
		details.Partitions = append(details.Partitions, wire.PartitionInfo{ID: uint32(index),
			MessagesCount: partition.next, CurrentOffset: max(partition.next, 1) - 1})
	}
	return details
}

func (b *broker) onGroup(request *wire.Request) []byte {
	code := request.Header.CommandCode()
	if code == wire.CodeGetConsumerGroups || code == wire.CodeCreateConsumerGroup {
		var body wire.CreateConsumerGroup
		var target wire.TopicTarget
		if code == wire.CodeCreateConsumerGroup {
			_ = wire.DecodeAll(&body, request.Body)
			target = wire.TopicTarget{Stream: body.Stream, Topic: body.Topic}
		} else {
			_ = wire.DecodeAll(&target, request.Body)
		}
		topic, _ := b.topic(target.Stream, target.Topic)
		if topic == nil {
			return refuse(request, wire.StatusTopicIDNotFound)
		}
		if code == wire.CodeCreateConsumerGroup {
			topic.groups = append(topic.groups, &brokerGroup{name: body.Name, stored: map[uint32]uint64{}})
			return reply(request, &wire.ConsumerGroupInfo{ID: uint32(len(topic.groups) - 1), Name: body.Name})
		}
		list := wire.ConsumerGroupList{}
		for index, group := range topic.groups {
			list = append(list, wire.ConsumerGroupInfo{ID: uint32(index), Name: group.name})
		}
		return reply(request, &list)
	}
	var target wire.GroupTarget
	_ = wire.DecodeAll(&target, request.Body)
	topic, _ := b.topic(target.Stream, target.Topic)
	if topic == nil || !target.Group.IsNumeric() || int(target.Group.ID) >= len(topic.groups) {
		return refuse(request, wire.StatusConsumerGroupIDNotFound)
	}
	group := topic.groups[target.Group.ID]
	client := request.Header.Client
	if code == wire.CodeJoinConsumerGroup {
		group.members = append(group.members, client)
		return reply(request, nil)
	}
	return reply(request, &wire.GroupAssignment{Generation: uint64(len(group.members)),
		Partitions: group.assigned(client, len(topic.partitions))})
}

// assigned deals partitions round-robin over the members, in join order.
func (g *brokerGroup) assigned(client wire.Uint128, partitions int) []uint32 {
	var owned []uint32
	for index, member := range g.members {
		if member != client {
			continue
		}
		for partition := index; partition < partitions; partition += len(g.members) {
			owned = append(owned, uint32(partition))
		}
	}
	return owned
}

func (b *broker) leaveAll(client wire.Uint128) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, stream := range b.streams {
		if stream == nil {
			continue
		}
		for _, topic := range stream.topics {
			for _, group := range topic.groups {
				kept := group.members[:0]
				for _, member := range group.members {
					if member != client {
						kept = append(kept, member)
					}
				}
				group.members = kept
			}
		}
	}
}

func (b *broker) onSend(request *wire.Request) []byte {
	if b.sendsLeft > 0 {
		if b.sendsLeft--; b.sendsLeft == 0 {
			b.sendsLeft = -1
		}
	} else if b.sendsLeft < 0 {
		return refuse(request, wire.StatusFeatureUnavailable)
	}
	var body wire.SendMessages
	if wire.DecodeAll(&body, request.Body) != nil {
		return refuse(request, wire.StatusInvalidCommand)
	}
	topic, topicID := b.topic(body.Stream, body.Topic)
	if topic == nil {
		return refuse(request, wire.StatusResourceNotFound)
	}
	if _, err := wire.ValidateBatch(body.Batch); err != nil {
		b.fail("invalid batch: " + err.Error())
		return refuse(request, wire.StatusInvalidCommand)
	}
	partitionID := body.Partitioning.Select(uint32(len(topic.partitions)), topic.cursor)
	topic.cursor++
	if int(partitionID) >= len(topic.partitions) {
		return refuse(request, wire.StatusResourceNotFound)
	}
	partition := topic.partitions[partitionID]
	stored := append([]byte(nil), body.Batch...)
	base := partition.next
	wire.StampBatch(stored, uint64(partitionID), base, uint64(time.Now().UnixMicro()))
	partition.batches = append(partition.batches, stored)
	partition.bases = append(partition.bases, base)
	partition.next += uint64(body.MessagesCount)
	streamIndex, _ := b.stream(body.Stream)
	confirmations := wire.SendConfirmations{{StreamID: uint32(streamIndex), TopicID: topicID,
		PartitionID: partitionID, BaseOffset: base}}
	return reply(request, &confirmations)
}

func (b *broker) onPoll(request *wire.Request) []byte {
	var body wire.PollMessages
	if wire.DecodeAll(&body, request.Body) != nil {
		return refuse(request, wire.StatusInvalidCommand)
	}
	topic, _ := b.topic(body.Stream, body.Topic)
	if topic == nil || int(body.Partition.ID) >= len(topic.partitions) {
		return refuse(request, wire.StatusPartitionNotFound)
	}
	partition := topic.partitions[body.Partition.ID]
	var group *brokerGroup
	start := body.Strategy.Value
	if body.Consumer.Kind == wire.ConsumerGroup {
		group = topic.groups[body.Consumer.ID.ID]
		if !contains(group.assigned(request.Header.Client, len(topic.partitions)), body.Partition.ID) {
			return reply(request, &wire.PolledMessages{PartitionID: wire.PollPartitionResync})
		}
		if body.Strategy.Kind == wire.StrategyNext {
			start = 0
			if stored, ok := group.stored[body.Partition.ID]; ok {
				start = stored + 1
			}
		}
	}
	polled := partition.read(body.Partition.ID, start, body.Count)
	if group != nil && body.AutoCommit && polled.MessagesCount > 0 {
		group.stored[body.Partition.ID] = start + uint64(polled.MessagesCount) - 1
	}
	return reply(request, polled)
}

func contains(values []uint32, value uint32) bool {
	for _, candidate := range values {
		if candidate == value {
			return true
		}
	}
	return false
}

// read serves up to count messages from offset start, slicing batches.
func (p *brokerPartition) read(partitionID uint32, start uint64, count uint32) *wire.PolledMessages {
	polled := &wire.PolledMessages{PartitionID: partitionID, CurrentOffset: max(p.next, 1) - 1}
	first, _ := slices.BinarySearch(p.bases, start+1)
	for _, batch := range p.batches[max(first-1, 0):] {
		if polled.MessagesCount >= count {
			break
		}
		slice, ok := wire.SliceBatch(batch, start, count-polled.MessagesCount)
		if !ok {
			continue
		}
		polled.Records = append(polled.Records, slice.Header[:]...)
		polled.Records = append(polled.Records, slice.Frames...)
		polled.MessagesCount += slice.MessageCount
		start = slice.OffsetLast + 1
	}
	return polled
}

func (b *broker) onGetOffset(request *wire.Request) []byte {
	var body wire.GetConsumerOffset
	_ = wire.DecodeAll(&body, request.Body)
	topic, _ := b.topic(body.Stream, body.Topic)
	if topic == nil || body.Consumer.Kind != wire.ConsumerGroup || int(body.Consumer.ID.ID) >= len(topic.groups) {
		return reply(request, nil)
	}
	stored, ok := topic.groups[body.Consumer.ID.ID].stored[body.Partition.ID]
	if !ok {
		return reply(request, nil)
	}
	return reply(request, &wire.ConsumerOffsetInfo{PartitionID: body.Partition.ID, StoredOffset: stored})
}

// topicOption returns an option of a stream's first topic as sent.
func (b *broker) topicOption(stream, key string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, found := b.stream(wire.NamedID(stream))
	if found == nil || len(found.topics) == 0 {
		return "", false
	}
	value, ok := found.topics[0].options.Lookup(key)
	return string(value.Value), ok
}
