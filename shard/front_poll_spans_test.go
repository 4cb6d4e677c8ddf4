package shard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// spansPayload is the payload of the message at offset of a partition:
// its offset, then a byte pattern of a length both derive from it.
func spansPayload(partition uint32, offset uint64) []byte {
	payload := bytes.Repeat([]byte{byte(offset*31 + uint64(partition)*7 + 5)}, 16+int((offset*7919+uint64(partition))%3000))
	binary.LittleEndian.PutUint64(payload, offset)
	binary.LittleEndian.PutUint32(payload[8:], partition)
	return payload
}

// startSpansServer starts a two-shard server with a cache budget of
// cacheBytes, and a topic of two partitions.
func startSpansServer(t *testing.T, backend string, cacheBytes int) (*Server, func(net.Conn, wire.Uint128) func(wire.Operation, wire.Code, wire.Body) []byte) {
	t.Helper()
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	server := serveForTest(t, ServerOptions{Runtime: Options{CPUs: cpus[:min(2, len(cpus))], Backend: backend,
		Listen: "127.0.0.1:0"}, DataPath: t.TempDir(), Durability: 1 /* written */, CacheBytes: cacheBytes})
	session := func(conn net.Conn, client wire.Uint128) func(wire.Operation, wire.Code, wire.Body) []byte {
		login := loginIggy(t, conn, client)
		id := uint64(0)
		return func(operation wire.Operation, code wire.Code, body wire.Body) []byte {
			id++
			out := make([]byte, wire.RequestBytes(body))
			wire.EncodeRequest(out, wire.RequestHeader{Client: client, Operation: operation, Code: code,
				Session: login.Session, Request: id}, body)
			return out
		}
	}
	return server, session
}

// spansPoll is a poll of partition from offset.
func spansPoll(partition uint32, offset uint64, count uint32) *wire.PollMessages {
	return &wire.PollMessages{Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(1)},
		Stream: wire.NumericID(0), Topic: wire.NumericID(0), Partition: wire.PartitionOf(partition),
		Strategy: wire.Strategy{Kind: wire.StrategyOffset, Value: offset}, Count: count}
}

// checkSpansReply checks a poll reply holds messages from offset on, each
// with its payload, and returns how many.
func checkSpansReply(t *testing.T, frame []byte, partition uint32, offset uint64) int {
	decoded, _, err := wire.DecodeReply(frame)
	if err != nil || decoded.Err() != nil {
		t.Errorf("poll of partition %d at %d: %v %v", partition, offset, err, decoded.Err())
		return 0
	}
	var polled wire.PolledMessages
	if err := wire.DecodeAll(&polled, decoded.Payload); err != nil {
		t.Errorf("poll of partition %d at %d: %v", partition, offset, err)
		return 0
	}
	iterator := polled.Messages()
	count := 0
	for message, ok := iterator.Next(); ok; message, ok = iterator.Next() {
		want := offset + uint64(count)
		if message.Offset != want || !bytes.Equal(message.Payload, spansPayload(partition, want)) {
			t.Errorf("partition %d: message %d of a poll at %d has offset %d or other bytes", partition, count, offset,
				message.Offset)
			return count
		}
		count++
	}
	return count
}

// TestFrontPollSpansUnderPressure: poll replies sent from the cache in
// place carry the right bytes while the cache is under pressure. Method:
// a 4 MiB budget over two shards, a producer appending batches of random
// sizes to two partitions (one per shard, so both caches grow, the budget
// goes past its limit and the caches trim, and they wrap and evict), and
// three consumers polling random ranges of what is acknowledged, each
// message checked byte for byte against its offset's payload. Some polls
// must have gone out in place, and once every reply is sent no record is
// left pinned.
func TestFrontPollSpansUnderPressure(t *testing.T) {
	for _, backend := range spansBackends(t) {
		t.Run(backend, func(t *testing.T) { pollSpansUnderPressure(t, backend) })
	}
}

// spansBackends are the backends this kernel runs.
func spansBackends(t *testing.T) []string {
	if err := uringAvailable(); err != nil {
		t.Logf("io_uring: %v; epoll only", err)
		return []string{BackendEpoll}
	}
	return []string{BackendIOURing, BackendEpoll}
}

func pollSpansUnderPressure(t *testing.T, backend string) {
	server, session := startSpansServer(t, backend, 4<<20)
	producer, err := net.Dial("tcp", server.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	request := session(producer, wire.Uint128{Lo: 1})
	reply := make([]byte, 16<<20)
	spansSetup(t, producer, request, 2)
	var mu sync.Mutex
	acked := [2]uint64{}
	rounds := 240
	if testing.Short() {
		rounds = 80
	}
	done := make(chan struct{})
	var consumers sync.WaitGroup
	for consumer := range 3 {
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			spansConsume(t, server, session, uint64(consumer+1), &mu, &acked, done)
		}()
	}
	random := rand.New(rand.NewPCG(41, 42))
	for round := range rounds {
		partition := uint32(round % 2)
		mu.Lock()
		next := acked[partition]
		mu.Unlock()
		messages := make([]wire.OutgoingMessage, 1+random.IntN(150))
		for index := range messages {
			messages[index].Payload = spansPayload(partition, next+uint64(index))
		}
		batch := make([]byte, wire.BatchBytes(messages))
		wire.EncodeBatch(batch, messages)
		send := request(wire.OperationSendMessages, 0, &wire.SendMessages{Stream: wire.NumericID(0),
			Topic: wire.NumericID(0), Partitioning: wire.PartitionID(partition), MessagesCount: uint32(len(messages)), Batch: batch})
		if decoded, _, err := wire.DecodeReply(exchange(t, producer, send, reply)); err != nil || decoded.Err() != nil {
			t.Fatalf("round %d send: %v %v", round, err, decoded.Err())
		}
		mu.Lock()
		acked[partition] += uint64(len(messages))
		mu.Unlock()
	}
	close(done)
	consumers.Wait()
	inPlace := spansInPlace(server)
	t.Logf("%d bytes sent in place; %d + %d messages", inPlace, acked[0], acked[1])
	if inPlace == 0 {
		t.Fatal("no byte was sent in place")
	}
	// A client has its last reply once the bytes are in its socket; the
	// server hears its send complete a moment later.
	waitSpansPinned(t, server, func(pinned uint64) bool { return pinned == 0 }, "no record pinned once every reply is sent")
}

// spansConsume polls random ranges of the acknowledged messages until
// done, then polls once more, checking each reply.
func spansConsume(t *testing.T, server *Server, session func(net.Conn, wire.Uint128) func(wire.Operation, wire.Code, wire.Body) []byte,
	seed uint64, mu *sync.Mutex, acked *[2]uint64, done <-chan struct{}) {
	conn, err := net.Dial("tcp", server.Addr().String())
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close()
	request := session(conn, wire.Uint128{Lo: 100 + seed})
	random := rand.New(rand.NewPCG(seed, 7))
	reply := make([]byte, 16<<20)
	for polls := 0; ; polls++ {
		select {
		case <-done:
			return
		default:
		}
		partition := uint32(random.IntN(2))
		mu.Lock()
		available := acked[partition]
		mu.Unlock()
		if available == 0 {
			time.Sleep(time.Millisecond) // the producer's first batch is on its way
			continue
		}
		offset := uint64(random.IntN(int(available)))
		if random.IntN(2) == 0 { // half the polls read the newest, which the cache holds
			offset = available - min(available, uint64(1+random.IntN(400)))
		}
		count := uint32(1 + random.IntN(1500))
		got := checkSpansReply(t, exchangeBig(t, conn, request(wire.OperationNonReplicated, wire.CodePollMessages,
			spansPoll(partition, offset, count)), reply), partition, offset)
		if got == 0 || t.Failed() {
			t.Errorf("poll %d of partition %d at %d (of %d) got nothing", polls, partition, offset, available)
			return
		}
	}
}

// exchangeBig is exchange for a test goroutine: errors end the test
// without Fatal.
func exchangeBig(t *testing.T, conn net.Conn, frame, reply []byte) []byte {
	if _, err := conn.Write(frame); err != nil {
		t.Error(err)
		return nil
	}
	if _, err := io.ReadFull(conn, reply[:wire.HeaderBytes]); err != nil {
		t.Error(err)
		return nil
	}
	size := int(binary.LittleEndian.Uint32(reply[48:]))
	if _, err := io.ReadFull(conn, reply[wire.HeaderBytes:size]); err != nil {
		t.Error(err)
		return nil
	}
	return reply[:size]
}

// TestFrontPollSpansReleasedOnClose: a connection that closes while poll
// replies sent from the cache in place are in flight (the client reads
// nothing, so the first reply's send cannot finish) or queued behind it
// leaves no record pinned, and the cache takes new records in that
// memory again. Method: 4 partitions of about 9 MB each; a client with a
// 4 KiB receive buffer pipelines a poll of each one's newest 3 MB (one at
// least is served on its connection's shard, in place), waits until
// records are pinned,
// then resets the connection; the pins must drop to zero, and after
// enough appends to wrap the cache the newest records are sent in place.
func TestFrontPollSpansReleasedOnClose(t *testing.T) {
	for _, backend := range spansBackends(t) {
		t.Run(backend, func(t *testing.T) { pollSpansReleasedOnClose(t, backend) })
	}
}

func pollSpansReleasedOnClose(t *testing.T, backend string) {
	const partitions, batches, batchMessages = 4, 30, 200
	pinned := pinByStuckPolls(t, backend, partitions, batches, batchMessages)
	server, session, blocked, produce := pinned.server, pinned.session, pinned.stuck, pinned.produce
	if err := blocked.(*net.TCPConn).SetLinger(0); err != nil {
		t.Fatal(err)
	}
	_ = blocked.Close() // a reset: the server's send fails
	waitSpansPinned(t, server, func(pinned uint64) bool { return pinned == 0 }, "no record pinned after the close")
	for partition := range uint32(partitions) {
		produce(partition, batches) // wraps every partition's share of the cache
	}
	consumer, err := net.Dial("tcp", server.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	pollNewestInPlace(t, server, consumer, session(consumer, wire.Uint128{Lo: 3}), produce(0, 0), batchMessages)
}

// stuckPolls is what pinByStuckPolls leaves: the server, its session
// maker, the client that reads nothing, the producer and the partitions'
// next offsets when the polls went out.
type stuckPolls struct {
	server  *Server
	session func(net.Conn, wire.Uint128) func(wire.Operation, wire.Code, wire.Body) []byte
	stuck   net.Conn
	produce func(partition uint32, count int) []uint64
	next    []uint64
}

// pinByStuckPolls starts a server with a 32 MB cache, appends batches
// batches of batchMessages to each partition, then has a client with a
// 4 KiB receive buffer (closed at the test's end) pipeline a poll of each
// partition's newest third of those messages, once the newest batches go
// out in place, and waits until the stuck replies pin records.
func pinByStuckPolls(t *testing.T, backend string, partitions, batches, batchMessages int) stuckPolls {
	t.Helper()
	server, session := startSpansServer(t, backend, 32<<20)
	producer, err := net.Dial("tcp", server.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = producer.Close() })
	produce := spansProducer(t, producer, session(producer, wire.Uint128{Lo: 1}), partitions, batchMessages)
	for partition := range uint32(partitions) {
		produce(partition, batches)
	}
	stuck := dialSmallReceiveBuffer(t, server.Addr().String())
	t.Cleanup(func() { _ = stuck.Close() })
	pollRequest := session(stuck, wire.Uint128{Lo: 2})
	pollNewestInPlace(t, server, stuck, pollRequest, produce(0, 0), uint64(batchMessages))
	next := produce(0, 0)
	polled := uint64(batches / 3 * batchMessages)
	for partition := range uint32(partitions) {
		if _, err := stuck.Write(pollRequest(wire.OperationNonReplicated, wire.CodePollMessages,
			spansPoll(partition, next[partition]-polled, uint32(3*polled)))); err != nil {
			t.Fatal(err)
		}
	}
	waitSpansPinned(t, server, func(pinned uint64) bool { return pinned > 0 }, "records pinned by the stuck replies")
	return stuckPolls{server: server, session: session, stuck: stuck, produce: produce, next: next}
}

// pollNewestInPlace polls the last batch of each partition, checking its
// bytes, until one goes out in place: until the shards copied the written
// journals into their arenas the newest batches are served from the
// journals, copied.
func pollNewestInPlace(t *testing.T, server *Server, conn net.Conn,
	request func(wire.Operation, wire.Code, wire.Body) []byte, next []uint64, batchMessages uint64) {
	t.Helper()
	reply := make([]byte, 16<<20)
	for deadline := time.Now().Add(10 * time.Second); ; {
		inPlace := spansInPlace(server)
		for partition := range uint32(len(next)) {
			offset := next[partition] - batchMessages
			got := checkSpansReply(t, exchange(t, conn, request(wire.OperationNonReplicated, wire.CodePollMessages,
				spansPoll(partition, offset, uint32(3*batchMessages))), reply), partition, offset) // room for the batch whole
			if uint64(got) != batchMessages {
				t.Fatalf("partition %d: %d of the newest %d messages", partition, got, batchMessages)
			}
		}
		if spansInPlace(server) > inPlace {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no poll of the newest batches went out in place in 10 s")
		}
	}
}

// dialSmallReceiveBuffer connects with a 4 KiB receive buffer, set before
// the handshake so the window stays small.
func dialSmallReceiveBuffer(t *testing.T, address string) net.Conn {
	dialer := net.Dialer{Control: func(_, _ string, raw syscall.RawConn) error {
		var setErr error
		err := raw.Control(func(fd uintptr) { setErr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return errors.Join(err, setErr)
	}}
	conn, err := dialer.Dial("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

func spansInPlace(server *Server) uint64 {
	total := uint64(0)
	for _, sh := range server.Runtime().Shards() {
		total += sh.Stats().BytesInPlace
	}
	return total
}

// waitSpansPinned waits until the shards' pinned records satisfy ok.
func waitSpansPinned(t *testing.T, server *Server, ok func(pinned uint64) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pinned := uint64(0)
		for _, sh := range server.Runtime().Shards() {
			pinned += sh.Stats().SpansPinned
		}
		if ok(pinned) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d pinned after 10 s", what, pinned)
		}
		time.Sleep(time.Millisecond) // the shards' threads act on their own
	}
}

// TestFrontPollSpansCopiedOutForSlowReader: a client that stops reading
// while its poll replies hold records pinned does not keep the cache from
// taking new ones: once the cache finds a pinned record in its way, the
// shard copies those replies' records out (cancelling the send in
// flight), the pins go, and the client, reading again, gets every reply
// whole and in order. Method: as in TestFrontPollSpansReleasedOnClose,
// then appends that wrap the cache, then the stuck client reads its
// replies and checks every message.
func TestFrontPollSpansCopiedOutForSlowReader(t *testing.T) {
	for _, backend := range spansBackends(t) {
		t.Run(backend, func(t *testing.T) { pollSpansCopiedOut(t, backend) })
	}
}

func pollSpansCopiedOut(t *testing.T, backend string) {
	const partitions, batches, batchMessages = 4, 30, 200
	pinned := pinByStuckPolls(t, backend, partitions, batches, batchMessages)
	server, slow, produce, next := pinned.server, pinned.stuck, pinned.produce, pinned.next
	const polled = batches / 3 * batchMessages
	for partition := range uint32(partitions) {
		produce(partition, batches) // the cache needs the pinned records' room
	}
	waitSpansPinned(t, server, func(pinned uint64) bool { return pinned == 0 }, "no record pinned once copied out")
	copied := uint64(0)
	for _, sh := range server.Runtime().Shards() {
		copied += sh.Stats().RepliesCopied
	}
	if copied == 0 {
		t.Fatal("no reply was copied out")
	}
	reply := make([]byte, 16<<20)
	for partition := range uint32(partitions) {
		frame := readReply(t, slow, reply)
		if got := checkSpansReply(t, frame, partition, next[partition]-polled); got != polled {
			t.Fatalf("partition %d: %d of %d messages after the copy out", partition, got, polled)
		}
	}
}

// spansSetup creates stream 0 and its topic 0 of partitions partitions.
func spansSetup(t *testing.T, conn net.Conn, request func(wire.Operation, wire.Code, wire.Body) []byte, partitions int) {
	t.Helper()
	reply := make([]byte, 1<<20)
	for _, step := range []struct {
		operation wire.Operation
		body      wire.Body
	}{
		{wire.OperationCreateStream, &wire.CreateStream{Name: "s"}},
		{wire.OperationCreateTopic, &wire.CreateTopic{Stream: wire.NumericID(0), PartitionsCount: uint32(partitions), Name: "t"}},
	} {
		if decoded, _, _ := wire.DecodeReply(exchange(t, conn, request(step.operation, 0, step.body), reply)); decoded.Err() != nil {
			t.Fatalf("setup: %v", decoded.Err())
		}
	}
}

// spansProducer returns a function that appends count batches of
// batchMessages to a partition and returns every partition's next offset.
func spansProducer(t *testing.T, conn net.Conn, request func(wire.Operation, wire.Code, wire.Body) []byte,
	partitions int, batchMessages int) func(partition uint32, count int) []uint64 {
	spansSetup(t, conn, request, partitions)
	reply := make([]byte, 1<<20)
	next := make([]uint64, partitions)
	return func(partition uint32, count int) []uint64 {
		for range count {
			messages := make([]wire.OutgoingMessage, batchMessages)
			for index := range messages {
				messages[index].Payload = spansPayload(partition, next[partition]+uint64(index))
			}
			batch := make([]byte, wire.BatchBytes(messages))
			wire.EncodeBatch(batch, messages)
			send := request(wire.OperationSendMessages, 0, &wire.SendMessages{Stream: wire.NumericID(0), Topic: wire.NumericID(0),
				Partitioning: wire.PartitionID(partition), MessagesCount: uint32(batchMessages), Batch: batch})
			if decoded, _, err := wire.DecodeReply(exchange(t, conn, send, reply)); err != nil || decoded.Err() != nil {
				t.Fatalf("send: %v %v", err, decoded.Err())
			}
			next[partition] += uint64(batchMessages)
		}
		return slices.Clone(next)
	}
}

// readReply reads one reply frame into reply.
func readReply(t *testing.T, conn net.Conn, reply []byte) []byte {
	t.Helper()
	if _, err := io.ReadFull(conn, reply[:wire.HeaderBytes]); err != nil {
		t.Fatal(err)
	}
	size := int(binary.LittleEndian.Uint32(reply[48:]))
	if _, err := io.ReadFull(conn, reply[wire.HeaderBytes:size]); err != nil {
		t.Fatal(err)
	}
	return reply[:size]
}
