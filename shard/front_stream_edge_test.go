package shard

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// Edge cases of streamed sends: streams that outlive their partition,
// and requests that meet a stream of another connection.

// waitStreams waits until at least count streams opened on server.
func waitStreams(t *testing.T, server *Server, count uint64) {
	t.Helper()
	waitStreamCounter(t, "opened", count, func() uint64 { opened, _ := streamCounters(server); return opened })
}

// waitAborted waits until count streams were dropped on server.
func waitAborted(t *testing.T, server *Server, count uint64) {
	t.Helper()
	waitStreamCounter(t, "dropped", count, func() uint64 { _, aborted := streamCounters(server); return aborted })
}

// waitStreamCounter waits up to 5 s until read returns at least count.
func waitStreamCounter(t *testing.T, what string, count uint64, read func() uint64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if read() >= count {
			return
		}
	}
	t.Fatalf("%d streams %s, want %d", read(), what, count)
}

// readSend reads a send's reply and returns its status and base offset.
func (c *moveClient) readSend() (wire.Status, uint64) {
	c.t.Helper()
	reply, _, err := wire.DecodeReply(exchange(c.t, c.conn, nil, c.reply))
	if err != nil {
		c.t.Fatal(err)
	}
	if reply.Header.Status != wire.StatusOK {
		return reply.Header.Status, 0
	}
	var confirmations wire.SendConfirmations
	if err := wire.DecodeAll(&confirmations, reply.Payload); err != nil || len(confirmations) != 1 {
		c.t.Fatalf("send confirmation: %v (%d)", err, len(confirmations))
	}
	return wire.StatusOK, confirmations[0].BaseOffset
}

// TestStreamedSendOutlivesItsPartition: a connection streams into
// partition 1, which is deleted and created again (the same id) while
// the rest of its frame is on its way; another connection then streams
// into the new partition. The first connection's bytes never reach the
// second one's stream: both sends are stored whole and intact.
func TestStreamedSendOutlivesItsPartition(t *testing.T) {
	server := startStreamServer(t, BackendIOURing)
	random := rand.New(rand.NewPCG(11, 12))
	admin, early, late := dialMove(t, server, 30), dialMove(t, server, 31), dialMove(t, server, 32)
	admin.setup(2)
	if status, _ := admin.sendLarge(largeBatch(7000), wire.PartitionID(1), random); status != wire.StatusOK {
		t.Fatalf("send to the first partition 1: %v", status) // and it is open
	}
	opened, _ := streamCounters(server)
	earlyFrame := early.sendFrame(largeBatch(0), wire.PartitionID(1))
	early.writeSlowly(earlyFrame[:len(earlyFrame)*3/4], random)
	waitStreams(t, server, opened+1)
	change := &wire.PartitionsChange{Stream: wire.NumericID(0), Topic: wire.NumericID(0), PartitionsCount: 1}
	admin.call(wire.OperationDeletePartitions, 0, change, nil)
	admin.call(wire.OperationCreatePartitions, 0, change, nil)
	if status, _ := admin.sendLarge(largeBatch(9000), wire.PartitionID(1), random); status != wire.StatusOK {
		t.Fatalf("send to the new partition: %v", status)
	}
	opened, _ = streamCounters(server)
	lateFrame := late.sendFrame(largeBatch(5000), wire.PartitionID(1))
	late.writeSlowly(lateFrame[:len(lateFrame)/4], random)
	waitStreams(t, server, opened+1)
	early.writeSlowly(earlyFrame[len(earlyFrame)*3/4:], random)
	earlyStatus, _ := early.readSend()
	late.writeSlowly(lateFrame[len(lateFrame)/4:], random)
	lateStatus, _ := late.readSend()
	if earlyStatus != wire.StatusOK || lateStatus != wire.StatusOK {
		t.Fatalf("sends around the partition's re-creation: %v and %v, want OK", earlyStatus, lateStatus)
	}
	payloads := admin.pollAll(1)
	if len(payloads) != 3000 {
		t.Fatalf("the new partition holds %d messages, want 3000", len(payloads))
	}
	for _, first := range []string{"m000000000", "m000005000"} {
		found := false
		for index := 1000; index < 3000; index += 1000 {
			found = found || payloads[index] == first
		}
		if !found {
			t.Fatalf("the batch starting with %q is not stored", first)
		}
	}
}

// TestStreamedSendStalledDoesNotHoldFlushOrPurge: a client that stops in
// the middle of a streamed send holds its partition for at most
// streamHoldMax while a FlushUnsavedBuffer (fsync) or a PurgeTopic waits
// for it, as an append does: both are answered while the stalled
// request is still incomplete, and the request, once whole, is appended
// whole.
func TestStreamedSendStalledDoesNotHoldFlushOrPurge(t *testing.T) {
	server := startStreamServer(t, BackendIOURing)
	random := rand.New(rand.NewPCG(13, 14))
	admin := dialMove(t, server, 40)
	admin.setupWithLarge(largeBatch(7000), random)
	for round, wait := range []struct {
		operation wire.Operation
		code      wire.Code
		body      wire.Body
	}{
		{wire.OperationNonReplicated, wire.CodeFlushUnsavedBuffer, &wire.FlushUnsavedBuffer{Stream: wire.NumericID(0),
			Topic: wire.NumericID(0), PartitionID: 0, Fsync: true}},
		{wire.OperationPurgeTopic, 0, &wire.TopicTarget{Stream: wire.NumericID(0), Topic: wire.NumericID(0)}},
	} {
		slow := dialMove(t, server, uint64(41+round))
		opened, _ := streamCounters(server)
		frame := slow.sendFrame(largeBatch(0), wire.PartitionID(0))
		slow.writeSlowly(frame[:len(frame)/2], random)
		waitStreams(t, server, opened+1)
		if err := admin.conn.SetDeadline(time.Now().Add(3 * time.Second)); err != nil {
			t.Fatal(err)
		}
		admin.call(wait.operation, wait.code, wait.body, nil) // fails the test on the deadline
		if err := admin.conn.SetDeadline(time.Time{}); err != nil {
			t.Fatal(err)
		}
		slow.writeSlowly(frame[len(frame)/2:], random)
		if status, _ := slow.readSend(); status != wire.StatusOK {
			t.Fatalf("round %d: the stalled send: %v", round, status)
		}
	}
	if payloads := admin.pollAll(0); len(payloads) != 1000 {
		t.Fatalf("the purged partition holds %d messages, want the 1000 sent after the purge", len(payloads))
	}
}

// TestStreamedSendStalledYieldsItsCacheRegion: a client that stops in the
// middle of a streamed send holds the cache region its batch is received
// into; once another partition's sends come round the shard's 8 MiB
// cache to that region, the tick drops the stalled stream, with nothing
// else waiting on its partition, and the request, once whole, is
// appended whole. Method: the cache evicts nothing while the region is
// its oldest record, so the first eviction the shard counts, with the
// client still holding half of its frame back, shows the yield. The
// stalled half arrives after the yield, into the frame.
func TestStreamedSendStalledYieldsItsCacheRegion(t *testing.T) {
	cpus := skipUnlessTwoShards(t, BackendIOURing)
	server := serveForTest(t, ServerOptions{Runtime: Options{CPUs: cpus[:1], Backend: BackendIOURing,
		Listen: "127.0.0.1:0"}, DataPath: t.TempDir(), Durability: 1 /* written */, Logger: testLogger(),
		CacheBytes: 8 << 20})
	random := rand.New(rand.NewPCG(15, 16))
	slow, busy := dialMove(t, server, 60), dialMove(t, server, 61)
	slow.setup(2)
	frame := slow.sendFrame(largeBatch(0), wire.PartitionID(0))
	slow.writeSlowly(frame[:len(frame)/2], random)
	waitStreams(t, server, 1)
	evicted := func() (count uint64) {
		for _, sh := range server.Runtime().shards {
			count += sh.Stats().CacheEvicted
		}
		return count
	}
	// The stalled region is the cache's oldest record: until it goes, the
	// cache evicts nothing and the busy partition's batches go uncached.
	deadline := time.Now().Add(10 * time.Second) // a tick comes every 10 ms, and publishes the cache's counts
	for round := 0; evicted() == 0; round++ {
		if time.Now().After(deadline) {
			t.Fatalf("%d MB through an 8 MiB cache and nothing was evicted past the stalled stream's region", round)
		}
		if round < 40 {
			if status, _ := busy.sendLarge(largeBatch(1000*round), wire.PartitionID(1), nil); status != wire.StatusOK {
				t.Fatalf("busy send %d: %v", round, status)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The stalled client's bytes went straight into the region, so the
	// yield cancelled that receive to take the region back, and the
	// stream's end is counted without waiting for the client.
	if room := bytesIntoRooms(server); room == 0 {
		t.Fatal("no byte of the stalled send was received into its region")
	}
	waitAborted(t, server, 1)
	slow.writeSlowly(frame[len(frame)/2:], random)
	if status, base := slow.readSend(); status != wire.StatusOK || base != 0 {
		t.Fatalf("the stalled send, once whole: %v at %d", status, base)
	}
	if _, aborted := streamCounters(server); aborted != 1 {
		t.Fatalf("%d streams counted dropped, want the stalled one", aborted)
	}
	if payloads := slow.pollAll(0); len(payloads) != 1000 || payloads[999] != "m000000999" {
		t.Fatalf("partition 0 holds %d messages", len(payloads))
	}
}

// bytesIntoRooms counts the bytes the server's connections received
// straight into streamed batches' journals.
func bytesIntoRooms(server *Server) (count uint64) {
	for _, sh := range server.Runtime().shards {
		count += sh.Stats().BytesRoom
	}
	return count
}

// smallBatch encodes count messages of 100 bytes whose payloads name
// serial .. serial+count-1.
func smallBatch(serial, count int) []byte {
	messages := make([]wire.OutgoingMessage, count)
	for index := range messages {
		payload := make([]byte, 100)
		copy(payload, fmt.Sprintf("m%09d", serial+index))
		messages[index] = wire.OutgoingMessage{Payload: payload, OriginTimestamp: 1}
	}
	batch := make([]byte, wire.BatchBytes(messages))
	wire.EncodeBatch(batch, messages)
	return batch
}

// TestStreamedSendsConcurrentProducers: three connections send large
// (streamed) and small batches to one partition at once while a fourth
// drops streams in the middle and a fifth polls: every confirmed batch
// is stored whole at its confirmed offset, offsets are contiguous, each
// producer's batches keep their order, and no poll ever returns a
// message of a dropped stream.
func TestStreamedSendsConcurrentProducers(t *testing.T) {
	server := startStreamServer(t, BackendIOURing)
	admin := dialMove(t, server, 50)
	admin.reply = make([]byte, 8<<20) // a poll of 1000 messages may span large batches
	admin.setupWithLarge(largeBatch(900_000), rand.New(rand.NewPCG(1, 1)))
	type sent struct{ base, first, count int }
	results := make([][]sent, 3)
	var wg sync.WaitGroup
	for producer := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dialMove(t, server, uint64(51+producer))
			random := rand.New(rand.NewPCG(uint64(producer), 9))
			serial := (producer + 1) * 100_000
			for round := range 6 {
				batch, count := largeBatch(serial), 1000
				if round%2 == 1 {
					count = 1 + random.IntN(20)
					batch = smallBatch(serial, count)
				}
				status, confirmation := c.sendLarge(batch, wire.PartitionID(0), random)
				if status != wire.StatusOK {
					t.Errorf("producer %d round %d: %v", producer, round, status)
					return
				}
				results[producer] = append(results[producer], sent{int(confirmation.BaseOffset), serial, count})
				serial += count
			}
		}()
	}
	var dropped atomic.Bool
	stop := make(chan struct{})
	polled := make(chan int, 1)
	go func() {
		c := dialMove(t, server, 60)
		c.reply = make([]byte, 8<<20)
		count := 0
		for {
			select {
			case <-stop:
				polled <- count
				return
			default:
			}
			for _, payload := range c.pollAll(0) {
				if strings.HasPrefix(payload, "m0005") {
					dropped.Store(true)
				}
			}
			count++
		}
	}()
	random := rand.New(rand.NewPCG(77, 78))
	for attempt := range 3 {
		gone := dialMove(t, server, uint64(70+attempt))
		frame := gone.sendFrame(largeBatch(500_000), wire.PartitionID(0))
		gone.writeSlowly(frame[:len(frame)/2], random)
		if err := gone.conn.Close(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(stop)
	opened, aborted := streamCounters(server)
	t.Logf("%d polls during the sends; %d streams, %d dropped", <-polled, opened, aborted)
	if opened < 2 {
		t.Fatalf("%d streams opened: the sends did not stream", opened)
	}
	payloads := admin.pollAll(0)
	total := 1000
	for producer, batches := range results {
		for index, batch := range batches {
			if index > 0 && batch.base <= batches[index-1].base {
				t.Fatalf("producer %d: batch %d at %d after %d", producer, index, batch.base, batches[index-1].base)
			}
			for message := range batch.count {
				if batch.base+message >= len(payloads) || payloads[batch.base+message] != fmt.Sprintf("m%09d", batch.first+message) {
					t.Fatalf("producer %d batch %d: offset %d does not hold its message", producer, index, batch.base+message)
				}
			}
			total += batch.count
		}
	}
	if len(payloads) != total || dropped.Load() {
		t.Fatalf("partition holds %d messages, want %d; a dropped stream's message polled: %v", len(payloads), total, dropped.Load())
	}
	for _, payload := range payloads {
		if strings.HasPrefix(payload, "m0005") {
			t.Fatalf("a dropped stream's message is stored: %s", payload)
		}
	}
}
