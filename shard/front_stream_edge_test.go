package shard

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// Edge cases of streamed sends: streams that outlive their partition,
// and requests that meet a stream of another connection.

// waitStreams waits until at least count streams opened on server.
func waitStreams(t *testing.T, server *Server, count uint64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if opened, _ := streamCounters(server); opened >= count {
			return
		}
	}
	opened, _ := streamCounters(server)
	t.Fatalf("%d streams opened, want %d", opened, count)
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
	admin.setup(1)
	if status, _ := admin.sendLarge(largeBatch(7000), wire.PartitionID(0), random); status != wire.StatusOK {
		t.Fatalf("first send: %v", status) // and the partition is open
	}
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
