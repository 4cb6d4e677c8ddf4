package shard

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// Tests of sends appended while they arrive (front_stream.go,
// data_stream.go, engine stream.go), end to end: a real server on one
// shard (every partition is the connection's), raw 0.9 requests of ~1 MB
// over TCP, and the server's counters to tell a streamed batch from one
// appended whole. A send is written by the test in several writes with
// short pauses, so that the server receives it in pieces as a client's
// kernel would hand it over a real network.

// startStreamServer runs a one-shard server on backend.
func startStreamServer(t *testing.T, backend string) *Server {
	t.Helper()
	return startStreamServerIn(t, backend, t.TempDir())
}

// startStreamServerIn runs a one-shard server on backend over directory.
func startStreamServerIn(t *testing.T, backend, directory string) *Server {
	t.Helper()
	return startStreamServerWith(t, backend, directory, false)
}

// startStreamServerWith runs a one-shard server, streaming sends or not.
func startStreamServerWith(t *testing.T, backend, directory string, streamingOff bool) *Server {
	t.Helper()
	cpus := skipUnlessTwoShards(t, backend)
	return serveForTest(t, ServerOptions{Runtime: Options{CPUs: cpus[:1], Backend: backend, Listen: "127.0.0.1:0"},
		DataPath: directory, Durability: 1 /* written */, Logger: testLogger(), SendStreamingOff: streamingOff})
}

// largeBatch encodes 1000 messages of 1000 bytes whose payloads name
// serial .. serial+999.
func largeBatch(serial int) []byte {
	messages := make([]wire.OutgoingMessage, 1000)
	for index := range messages {
		payload := make([]byte, 1000)
		copy(payload, fmt.Sprintf("m%09d", serial+index))
		messages[index] = wire.OutgoingMessage{Payload: payload, OriginTimestamp: 1}
	}
	batch := make([]byte, wire.BatchBytes(messages))
	wire.EncodeBatch(batch, messages)
	return batch
}

// sendFrame encodes a SendMessages request of batch to stream 0, topic 0.
func (c *moveClient) sendFrame(batch []byte, partitioning wire.Partitioning) []byte {
	header := wire.RequestHeader{Client: c.client, Operation: wire.OperationSendMessages, Session: c.session,
		Request: c.request}
	c.request++
	body := &wire.SendMessages{Stream: wire.NumericID(0), Topic: wire.NumericID(0), Partitioning: partitioning,
		MessagesCount: binary.LittleEndian.Uint32(batch[48:]), Batch: batch}
	frame := make([]byte, wire.RequestBytes(body))
	wire.EncodeRequest(frame, header, body)
	return frame
}

// writeSlowly writes frame in chunks of up to 128 KiB with short pauses.
func (c *moveClient) writeSlowly(frame []byte, random *rand.Rand) {
	c.t.Helper()
	for at := 0; at < len(frame); {
		end := min(len(frame), at+1+random.IntN(128<<10))
		if _, err := c.conn.Write(frame[at:end]); err != nil {
			c.t.Fatal(err)
		}
		at = end
		time.Sleep(time.Duration(random.IntN(200)) * time.Microsecond)
	}
}

// sendLarge sends batch and returns the reply's status and confirmation;
// with a nil random the frame goes out in one write.
func (c *moveClient) sendLarge(batch []byte, partitioning wire.Partitioning, random *rand.Rand) (wire.Status, wire.SendConfirmation) {
	c.t.Helper()
	frame := c.sendFrame(batch, partitioning)
	if random != nil {
		c.writeSlowly(frame, random)
	} else if _, err := c.conn.Write(frame); err != nil {
		c.t.Fatal(err)
	}
	reply, _, err := wire.DecodeReply(exchange(c.t, c.conn, nil, c.reply))
	if err != nil {
		c.t.Fatal(err)
	}
	if reply.Header.Status != wire.StatusOK {
		return reply.Header.Status, wire.SendConfirmation{}
	}
	var confirmations wire.SendConfirmations
	if err := wire.DecodeAll(&confirmations, reply.Payload); err != nil || len(confirmations) != 1 {
		c.t.Fatalf("send confirmation: %v (%d)", err, len(confirmations))
	}
	return wire.StatusOK, confirmations[0]
}

// setupWithLarge creates a stream, a topic and one partition, and sends
// batch to the partition (a large one streams), failing the test unless
// it is stored: the partition is open from then on.
func (c *moveClient) setupWithLarge(batch []byte, random *rand.Rand) {
	c.t.Helper()
	c.setup(1)
	if status, _ := c.sendLarge(batch, wire.PartitionID(0), random); status != wire.StatusOK {
		c.t.Fatalf("first send: %v", status)
	}
}

// pollAll returns every payload prefix of partition, in offset order,
// checking that offsets run from 0.
func (c *moveClient) pollAll(partition uint32) []string {
	c.t.Helper()
	var payloads []string
	for {
		body := &wire.PollMessages{Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(1)},
			Stream: wire.NumericID(0), Topic: wire.NumericID(0), Partition: wire.PartitionOf(partition),
			Strategy: wire.Strategy{Kind: wire.StrategyOffset, Value: uint64(len(payloads))}, Count: 1000}
		var polled wire.PolledMessages
		c.call(wire.OperationNonReplicated, wire.CodePollMessages, body, &polled)
		if polled.MessagesCount == 0 {
			return payloads
		}
		it := polled.Messages()
		for message, ok := it.Next(); ok; message, ok = it.Next() {
			if message.Offset != uint64(len(payloads)) {
				c.t.Fatalf("poll: offset %d after %d messages", message.Offset, len(payloads))
			}
			payloads = append(payloads, string(message.Payload[:10]))
		}
	}
}

func streamCounters(server *Server) (opened, aborted uint64) {
	for _, sh := range server.Runtime().shards {
		stats := sh.Stats()
		opened += stats.StreamsOpened
		aborted += stats.StreamsAborted
	}
	return opened, aborted
}

// TestStreamedSends: large sends are appended while they arrive and get
// the offsets a whole append gets; a send whose frame fails its checksum
// in the second half of the batch is refused with the status admission
// gives (InvalidMessageChecksum) and stores nothing; the partition
// accepts and serves the sends after it; Balanced partitioning chooses
// each partition once per send, in turn; a send after a small request
// streams too.
func TestStreamedSends(t *testing.T) {
	for _, backend := range []string{BackendIOURing, BackendEpoll} {
		t.Run(backend, func(t *testing.T) {
			server := startStreamServer(t, backend)
			random := rand.New(rand.NewPCG(1, 2))
			c := dialMove(t, server, 7)
			c.setup(3)
			serial := 0
			for round := range 6 {
				if round == 3 {
					broken := largeBatch(serial)
					broken[len(broken)*2/3] ^= 0xff // inside a payload: its frame's checksum fails
					if status, _ := c.sendLarge(broken, wire.PartitionID(1), random); status != wire.StatusInvalidMessageChecksum {
						t.Fatalf("corrupt send: status %v, want InvalidMessageChecksum", status)
					}
				}
				status, confirmation := c.sendLarge(largeBatch(serial), wire.PartitionID(1), random)
				if status != wire.StatusOK || confirmation.PartitionID != 1 || confirmation.BaseOffset != uint64(serial) {
					t.Fatalf("send %d: status %v, %+v", round, status, confirmation)
				}
				serial += 1000
			}
			payloads := c.pollAll(1)
			for index, payload := range payloads {
				if payload != fmt.Sprintf("m%09d", index) {
					t.Fatalf("offset %d holds %q", index, payload)
				}
			}
			if len(payloads) != serial {
				t.Fatalf("partition holds %d messages, want %d", len(payloads), serial)
			}
			// Streams need file writes that start within the turn (io_uring);
			// on epoll every send goes the whole way, with the same results.
			opened, aborted := streamCounters(server)
			t.Logf("%s: %d streamed, %d of them dropped", backend, opened, aborted)
			if backend == BackendIOURing && opened != 7 || backend == BackendEpoll && opened != 0 {
				t.Fatalf("%s: %d of 7 large sends streamed", backend, opened)
			}
			if backend == BackendIOURing && aborted != 1 {
				t.Fatalf("%d streams counted as ended without storing, want the corrupt one", aborted)
			}
			first := uint32(99)
			for round := range 6 {
				// A small request first, and the send in one write: its head is
				// read by the multishot receive, which may copy much or all of
				// the frame out of receive buffers; it streams all the same.
				c.me()
				status, confirmation := c.sendLarge(largeBatch(round), wire.Balanced(), nil)
				if first == 99 {
					first = confirmation.PartitionID
				}
				if status != wire.StatusOK || confirmation.PartitionID != (first+uint32(round))%3 {
					t.Fatalf("balanced send %d: status %v, partition %d (first %d)", round, status, confirmation.PartitionID, first)
				}
			}
			if opened, _ := streamCounters(server); backend == BackendIOURing && opened != 13 {
				t.Fatalf("%d of 13 large sends streamed", opened)
			}
		})
	}
}

// TestStreamedSendReceivedIntoItsRoom: once its stream is open, a send's
// bytes are received straight into the region that is its partition's
// journal, to the frame's last byte. Method: each send after a large one
// is read first by one receive of one provided buffer, which opens the
// stream (or, when it brought too little, by one more step into the
// frame); the server counts every byte received into a room, and the
// rest must be no more than those receives could hold. The batches read
// back whole.
func TestStreamedSendReceivedIntoItsRoom(t *testing.T) {
	server := startStreamServer(t, BackendIOURing)
	c := dialMove(t, server, 9)
	c.setupWithLarge(largeBatch(0), nil)
	for round := 1; round <= 4; round++ {
		before := bytesIntoRooms(server)
		frameBytes := len(c.sendFrame(largeBatch(1000*round), wire.PartitionID(0)))
		if status, confirmation := c.sendLarge(largeBatch(1000*round), wire.PartitionID(0), nil); status != wire.StatusOK ||
			confirmation.BaseOffset != uint64(1000*round) {
			t.Fatalf("send %d: %v at %d", round, status, confirmation.BaseOffset)
		}
		if elsewhere := frameBytes - int(bytesIntoRooms(server)-before); elsewhere > recvBufferBytes+progressRecvBytes {
			t.Fatalf("send %d: %d of its %d bytes were not received into its room", round, elsewhere, frameBytes)
		}
	}
	payloads := c.pollAll(0)
	for index, payload := range payloads {
		if payload != fmt.Sprintf("m%09d", index) {
			t.Fatalf("offset %d holds %q", index, payload)
		}
	}
	if len(payloads) != 5000 {
		t.Fatalf("partition holds %d messages, want 5000", len(payloads))
	}
}

// TestLargeFramesReceivedStraightIn: a large frame received in steps
// whose stream has no room to lend (without a cache its journal comes
// from the storage's pools) is received straight into its buffer to its
// last byte, so the next one starts with one receive of one provided
// buffer rather than a multishot receive copying it out of receive
// buffers. Method: the server counts the bytes received straight into
// frames; of each send after the first, no more than one buffer's worth
// may be missing from that count.
func TestLargeFramesReceivedStraightIn(t *testing.T) {
	cpus := skipUnlessTwoShards(t, BackendIOURing)
	server := serveForTest(t, ServerOptions{Runtime: Options{CPUs: cpus[:1], Backend: BackendIOURing, Listen: "127.0.0.1:0"},
		DataPath: t.TempDir(), Durability: 1 /* written */, Logger: testLogger(), CacheBytes: -1})
	c := dialMove(t, server, 10)
	c.setupWithLarge(largeBatch(0), nil)
	direct := func() (count uint64) {
		for _, sh := range server.Runtime().shards {
			count += sh.Stats().BytesDirect
		}
		return count
	}
	for round := 1; round <= 4; round++ {
		before := direct()
		frameBytes := len(c.sendFrame(largeBatch(1000*round), wire.PartitionID(0)))
		if status, _ := c.sendLarge(largeBatch(1000*round), wire.PartitionID(0), nil); status != wire.StatusOK {
			t.Fatalf("send %d: %v", round, status)
		}
		if copied := frameBytes - int(direct()-before); copied > recvBufferBytes {
			t.Fatalf("send %d: %d of its %d bytes were copied out of receive buffers", round, copied, frameBytes)
		}
	}
	if payloads := c.pollAll(0); len(payloads) != 5000 || payloads[4999] != "m000004999" {
		t.Fatalf("partition holds %d messages", len(payloads))
	}
	if opened, _ := streamCounters(server); opened != 5 || bytesIntoRooms(server) != 0 {
		t.Fatalf("%d of 5 sends streamed, %d bytes into rooms; want all streamed into their frames", opened, bytesIntoRooms(server))
	}
}

// TestStreamedSendConnectionClosed: a connection closed in the middle of
// a streamed send drops the stream; the partition takes the next sends
// at the offsets that follow the stored ones, and nothing of the dropped
// batch is served. Each dropped stream is waited for, and then a flush,
// which is answered once the partition is idle again (the dropped
// stream's pieces and the cut of its tail done): a stream still draining
// would refuse the next attempt's (ErrBusy), and its send would not
// stream at all.
func TestStreamedSendConnectionClosed(t *testing.T) {
	server := startStreamServer(t, BackendIOURing)
	random := rand.New(rand.NewPCG(3, 4))
	c := dialMove(t, server, 8)
	c.setupWithLarge(largeBatch(0), random)
	flush := &wire.FlushUnsavedBuffer{Stream: wire.NumericID(0), Topic: wire.NumericID(0), PartitionID: 0}
	for attempt := range 3 {
		gone := dialMove(t, server, uint64(20+attempt))
		openedBefore, abortedBefore := streamCounters(server)
		frame := gone.sendFrame(largeBatch(1000), wire.PartitionID(0))
		gone.writeSlowly(frame[:len(frame)*3/4], random)
		waitStreams(t, server, openedBefore+1)
		if err := gone.conn.Close(); err != nil {
			t.Fatal(err)
		}
		waitAborted(t, server, abortedBefore+1)
		c.call(wire.OperationNonReplicated, wire.CodeFlushUnsavedBuffer, flush, nil)
	}
	if _, aborted := streamCounters(server); aborted == 0 {
		t.Fatal("no stream was dropped with its connection")
	}
	for round := 1; round < 3; round++ {
		status, confirmation := c.sendLarge(largeBatch(round*1000), wire.PartitionID(0), random)
		if status != wire.StatusOK || confirmation.BaseOffset != uint64(round*1000) {
			t.Fatalf("send %d after the closed ones: status %v, base %d", round, status, confirmation.BaseOffset)
		}
	}
	if payloads := c.pollAll(0); len(payloads) != 3000 || payloads[2999] != fmt.Sprintf("m%09d", 2999) {
		t.Fatalf("partition holds %d messages", len(payloads))
	}
}

// TestStreamedSendHeldTooLong: a client that stops in the middle of a
// streamed send holds its partition for at most streamHoldMax while
// another client's send waits; that send lands first, and the held
// request, once whole, is appended whole after it.
func TestStreamedSendHeldTooLong(t *testing.T) {
	server := startStreamServer(t, BackendIOURing)
	random := rand.New(rand.NewPCG(5, 6))
	slow, quick := dialMove(t, server, 9), dialMove(t, server, 10)
	slow.setup(1)
	frame := slow.sendFrame(largeBatch(0), wire.PartitionID(0))
	started := time.Now() // before the stream opens
	slow.writeSlowly(frame[:len(frame)/2], random)
	waitStreams(t, server, 1)
	if opened, _ := streamCounters(server); opened != 1 {
		t.Fatalf("%d streams open, want the slow client's", opened)
	}
	status, confirmation := quick.sendLarge(largeBatch(0), wire.PartitionID(0), random)
	if status != wire.StatusOK || confirmation.BaseOffset != 0 {
		t.Fatalf("the waiting send: status %v, base %d", status, confirmation.BaseOffset)
	}
	if waited := time.Since(started); waited < streamHoldMax {
		t.Fatalf("the waiting send landed %v after the stream opened, before the hold limit", waited)
	}
	if _, aborted := streamCounters(server); aborted != 1 {
		t.Fatalf("%d streams dropped, want the held one", aborted)
	}
	slow.writeSlowly(frame[len(frame)/2:], random)
	reply, _, err := wire.DecodeReply(exchange(t, slow.conn, nil, slow.reply))
	var confirmations wire.SendConfirmations
	if err != nil || reply.Header.Status != wire.StatusOK || wire.DecodeAll(&confirmations, reply.Payload) != nil ||
		confirmations[0].BaseOffset != 1000 {
		t.Fatalf("the held send: %v, status %v, %+v", err, reply.Header.Status, confirmations)
	}
	if payloads := quick.pollAll(0); len(payloads) != 2000 {
		t.Fatalf("partition holds %d messages", len(payloads))
	}
}

// TestStreamedSendServerStop: a server stopping while a send streams
// drops the stream and stops in time; restarted on the same directory it
// holds the acknowledged batch and nothing of the dropped one.
func TestStreamedSendServerStop(t *testing.T) {
	directory := t.TempDir()
	server := startStreamServerIn(t, BackendIOURing, directory)
	random := rand.New(rand.NewPCG(7, 8))
	c := dialMove(t, server, 11)
	c.setupWithLarge(largeBatch(0), random)
	frame := c.sendFrame(largeBatch(1000), wire.PartitionID(0))
	c.writeSlowly(frame[:len(frame)/2], random)
	waitStreams(t, server, 2)
	if opened, _ := streamCounters(server); opened != 2 {
		t.Fatalf("%d streams opened, want 2", opened)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := server.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with a stream open: %v", err)
	}
	restarted := startStreamServerIn(t, BackendIOURing, directory)
	again := dialMove(t, restarted, 12)
	if payloads := again.pollAll(0); len(payloads) != 1000 {
		t.Fatalf("restarted partition holds %d messages, want 1000", len(payloads))
	}
	status, confirmation := again.sendLarge(largeBatch(1000), wire.PartitionID(0), random)
	if status != wire.StatusOK || confirmation.BaseOffset != 1000 {
		t.Fatalf("send after the restart: status %v, base %d", status, confirmation.BaseOffset)
	}
}

// TestStreamedSendsOff: with SendStreamingOff no send streams, and large
// sends land as ever.
func TestStreamedSendsOff(t *testing.T) {
	server := startStreamServerWith(t, BackendIOURing, t.TempDir(), true)
	random := rand.New(rand.NewPCG(9, 10))
	c := dialMove(t, server, 13)
	c.setup(1)
	for round := range 3 {
		status, confirmation := c.sendLarge(largeBatch(round*1000), wire.PartitionID(0), random)
		if status != wire.StatusOK || confirmation.BaseOffset != uint64(round*1000) {
			t.Fatalf("send %d: status %v, base %d", round, status, confirmation.BaseOffset)
		}
	}
	if opened, _ := streamCounters(server); opened != 0 {
		t.Fatalf("%d sends streamed with streaming off", opened)
	}
}
