package client

import (
	"context"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// TestStatusOfAllocations: every call asks StatusOf of its error, nil on
// success; that must cost no allocation, and a refusal still reports its
// status.
func TestStatusOfAllocations(t *testing.T) {
	if allocs := testing.AllocsPerRun(100, func() { _ = StatusOf(nil) }); allocs != 0 {
		t.Fatalf("StatusOf(nil) allocates %v times", allocs)
	}
	refusal := &Error{Command: wire.CodeSendMessages, Status: wire.StatusPartitionNotFound}
	if got := StatusOf(refusal); got != wire.StatusPartitionNotFound {
		t.Fatalf("StatusOf(refusal) = %v", got)
	}
}

// TestSerialCallsKeepPendingArray: with one request in flight at a time,
// the reply leaves the connection's pending queue empty at the start of
// its array, so the next request queues without allocating a new one.
func TestSerialCallsKeepPendingArray(t *testing.T) {
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) {
		return [][]byte{replyFrame(t, frame, wire.SendConfirmations{{PartitionID: 0}})}, false
	})
	client, err := Dial(context.Background(), testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	messages := []wire.OutgoingMessage{{Payload: []byte("serial")}}
	for round := range 3 {
		if _, err := client.SendMessages(context.Background(), stream1, topicOrders, wire.PartitionID(0),
			messages); err != nil {
			t.Fatal(err)
		}
		current, err := client.liveConn()
		if err != nil {
			t.Fatal(err)
		}
		current.mu.Lock()
		length, capacity := len(current.pending), cap(current.pending)
		current.mu.Unlock()
		if length != 0 || capacity == 0 {
			t.Fatalf("round %d: pending queue len %d cap %d after the reply, want empty with its array kept",
				round, length, capacity)
		}
	}
}
