package shard

import (
	"bytes"
	"net"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// TestFrontPollFromCache: through the real server (two shards, written
// durability), a consumer that polls each 1 MB batch right after its send
// gets the bytes sent, and the server reads nothing from disk: the polls
// are served from the cache (the held journal or the arena). Method: ten
// send-then-poll rounds of 1000 messages of 1000 bytes each, comparing
// every payload, then the shards' file-read counts. It logs the partial
// sends (a 1 MB reply is normally one send on loopback).
func TestFrontPollFromCache(t *testing.T) {
	server := startTestServer(t)
	conn, err := net.Dial("tcp", server.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	request := frontTestSession(t, conn)
	reply := make([]byte, 4<<20)
	readsBefore, _ := frontFileReads(server) // the metadata log's, at start
	payload := func(round, index int) []byte {
		return bytes.Repeat([]byte{byte(round*7 + index)}, 1000)
	}
	const rounds, count = 10, 1000
	for round := range rounds {
		messages := make([]wire.OutgoingMessage, count)
		for index := range messages {
			messages[index] = wire.OutgoingMessage{Payload: payload(round, index)}
		}
		batch := make([]byte, wire.BatchBytes(messages))
		wire.EncodeBatch(batch, messages)
		send := request(wire.OperationSendMessages, 0, &wire.SendMessages{Stream: wire.NumericID(0), Topic: wire.NumericID(0),
			Partitioning: wire.PartitionID(0), MessagesCount: count, Batch: batch})
		if decoded, _, err := wire.DecodeReply(exchange(t, conn, send, reply)); err != nil || decoded.Err() != nil {
			t.Fatalf("round %d send: %v %v", round, err, decoded.Err())
		}
		poll := request(wire.OperationNonReplicated, wire.CodePollMessages, &wire.PollMessages{
			Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(1)}, Stream: wire.NumericID(0),
			Topic: wire.NumericID(0), Partition: wire.PartitionOf(0),
			Strategy: wire.Strategy{Kind: wire.StrategyOffset, Value: uint64(round * count)}, Count: count})
		decoded, _, err := wire.DecodeReply(exchange(t, conn, poll, reply))
		if err != nil || decoded.Err() != nil {
			t.Fatalf("round %d poll: %v %v", round, err, decoded.Err())
		}
		var polled wire.PolledMessages
		if err := wire.DecodeAll(&polled, decoded.Payload); err != nil || polled.MessagesCount != count {
			t.Fatalf("round %d: %d messages polled, %v", round, polled.MessagesCount, err)
		}
		iterator := polled.Messages()
		for index := 0; ; index++ {
			message, ok := iterator.Next()
			if !ok {
				break
			}
			if message.Offset != uint64(round*count+index) || !bytes.Equal(message.Payload, payload(round, index)) {
				t.Fatalf("round %d message %d: offset %d or its payload differs", round, index, message.Offset)
			}
		}
	}
	reads, partial := frontFileReads(server)
	reads -= readsBefore
	inPlace := uint64(0)
	for _, sh := range server.Runtime().Shards() {
		inPlace += sh.Stats().BytesInPlace
	}
	t.Logf("%d file reads, %d partial sends, %d bytes sent from the cache in place for %d polls of 1 MB",
		reads, partial, inPlace, rounds)
	if reads != 0 {
		t.Fatalf("%d file reads: polls of what was just written went to disk", reads)
	}
}

// frontFileReads sums the shards' file reads and partial sends.
func frontFileReads(server *Server) (reads uint64, partial uint64) {
	for _, sh := range server.Runtime().Shards() {
		for _, count := range sh.FileLatencies()[FileRead].Counts {
			reads += count
		}
		partial += sh.Stats().SendsPartial
	}
	return reads, partial
}

// frontTestSession logs in on conn and creates stream 0 with topic 0 of
// one partition; it returns an encoder of the session's requests (code
// names a non-replicated operation's command, 0 for replicated ones).
func frontTestSession(t *testing.T, conn net.Conn) func(wire.Operation, wire.Code, wire.Body) []byte {
	t.Helper()
	client := wire.Uint128{Lo: 9}
	session := loginIggy(t, conn, client)
	reply := make([]byte, 1<<20)
	id := uint64(0)
	request := func(operation wire.Operation, code wire.Code, body wire.Body) []byte {
		id++
		out := make([]byte, wire.RequestBytes(body))
		wire.EncodeRequest(out, wire.RequestHeader{Client: client, Operation: operation, Code: code,
			Session: session.Session, Request: id}, body)
		return out
	}
	setup := []struct {
		operation wire.Operation
		body      wire.Body
	}{
		{wire.OperationCreateStream, &wire.CreateStream{Name: "s"}},
		{wire.OperationCreateTopic, &wire.CreateTopic{Stream: wire.NumericID(0), PartitionsCount: 1, Name: "t"}},
	}
	for _, step := range setup {
		if decoded, _, _ := wire.DecodeReply(exchange(t, conn, request(step.operation, 0, step.body), reply)); decoded.Err() != nil {
			t.Fatalf("setup: %v", decoded.Err())
		}
	}
	return request
}
