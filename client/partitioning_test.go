package client

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// TestClientSidePartitioning: Balanced sends go round robin over the
// topic's partitions and keyed sends to XXH32(key) mod count, both sent
// as explicit partition ids, after one GetTopic (the Go SDK's behaviour).
func TestClientSidePartitioning(t *testing.T) {
	var mu sync.Mutex
	var chosen []uint32
	topicReads := 0
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) {
		header, body := decodeRequest(t, frame)
		switch header.CommandCode() {
		case wire.CodeGetTopic:
			mu.Lock()
			topicReads++
			mu.Unlock()
			return [][]byte{replyFrame(t, frame, &wire.TopicDetails{TopicInfo: wire.TopicInfo{Name: "orders",
				PartitionsCount: 3}, Partitions: make([]wire.PartitionInfo, 3)})}, false
		case wire.CodeSendMessages:
			var send wire.SendMessages
			if err := wire.DecodeAll(&send, body); err != nil || send.Partitioning.Kind != wire.PartitioningPartitionID {
				t.Errorf("send %+v: %v", send.Partitioning, err)
			}
			mu.Lock()
			chosen = append(chosen, send.Partitioning.PartitionID)
			mu.Unlock()
			return [][]byte{replyFrame(t, frame, wire.SendConfirmations{{PartitionID: send.Partitioning.PartitionID}})}, false
		}
		return [][]byte{replyFrame(t, frame, nil)}, false
	})
	ctx := testContext(t)
	client, err := Dial(ctx, testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	message := []wire.OutgoingMessage{{Payload: []byte("x")}}
	for range 4 {
		if _, err := client.SendMessages(ctx, stream1, topicOrders, wire.Balanced(), message); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.SendMessages(ctx, stream1, topicOrders, wire.MessagesKey([]byte("user-42")), message); err != nil {
		t.Fatal(err)
	}
	want := []uint32{0, 1, 2, 0, 2} // "user-42" → 2 of 3 (messages_batch.json)
	if len(chosen) != len(want) || topicReads != 1 {
		t.Fatalf("partitions %v after %d topic reads, want %v after 1", chosen, topicReads, want)
	}
	for i := range want {
		if chosen[i] != want[i] {
			t.Fatalf("partitions %v, want %v", chosen, want)
		}
	}
}

// TestDesynchronizedReply: a reply carrying another request id drops the
// connection instead of being handed to the wrong caller.
func TestDesynchronizedReply(t *testing.T) {
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) {
		reply := replyFrame(t, frame, nil)
		reply[200]++ // request @200
		return [][]byte{reply}, false
	})
	client, err := Dial(testContext(t), testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := client.Ping(testContext(t)); !errors.Is(err, ErrDesynchronized) {
		t.Fatalf("ping: %v, want ErrDesynchronized", err)
	}
}

// TestReplyTimeout: a server that never answers fails the call after
// ReplyTimeout and the connection is dropped.
func TestReplyTimeout(t *testing.T) {
	p := startPeer(t, func(int, []byte) ([][]byte, bool) { return nil, false })
	options := testOptions(p.address())
	options.ReplyTimeout = 50 * time.Millisecond
	client, err := Dial(testContext(t), options)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := client.Ping(testContext(t)); !errors.Is(err, errTimeout) {
		t.Fatalf("ping: %v, want a timeout", err)
	}
	if current, _ := client.liveConn(); current != nil {
		t.Fatal("connection kept after a timeout")
	}
}

// TestOptionsValidate names the field that is out of range.
func TestOptionsValidate(t *testing.T) {
	rows := []struct {
		options Options
		valid   bool
	}{
		{Options{}, true},
		{Options{Address: "10.0.0.1:8090", Username: "iggy", Password: "iggy"}, true},
		{Options{PipelineDepth: PipelineDepthMax + 1}, false},
		{Options{ReplyTimeout: -1}, false},
		{Options{Username: "iggy", Token: "t"}, false},
		{Options{Address: "no-port"}, false},
		{Options{Token: string(make([]byte, 256))}, false},
	}
	for i, row := range rows {
		err := row.options.Validate()
		if (err == nil) != row.valid || (err != nil && !errors.Is(err, ErrInvalidOptions)) {
			t.Errorf("row %d: %v, want valid=%v", i, err, row.valid)
		}
	}
}

// TestLimits asserts how the client's limits relate.
func TestLimits(t *testing.T) {
	if PipelineDepthDefault > PipelineDepthMax || ClusterNodesMax != wire.ClusterNodesMax {
		t.Error("pipeline default above its max, or the roster cap differs from wire's")
	}
	if ReconnectBackoffMin > ReconnectBackoffMax || TransientReplayInterval >= TransientReplayDuration {
		t.Error("a backoff or replay window is empty")
	}
	if LeaderWaitInterval >= LeaderWaitDuration || RedirectsMax < 1 {
		t.Error("leader wait or redirect budget is empty")
	}
	if VectoredMessageBytesMin > VectoredSendBytesMin || VectoredSendBytesMin > wire.FrameBytesMax {
		t.Error("a vectored send needs room for one average message, and fits a frame")
	}
}

// TestUnencodableInput: names and identifiers the wire cannot carry are
// refused before anything is sent.
func TestUnencodableInput(t *testing.T) {
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) { return [][]byte{replyFrame(t, frame, nil)}, false })
	client, err := Dial(testContext(t), testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	long := string(make([]byte, 256))
	if _, err := client.CreateStream(testContext(t), long, nil); !errors.Is(err, wire.StatusInvalidFormat) {
		t.Fatalf("long stream name: %v", err)
	}
	if _, err := client.GetStream(testContext(t), wire.NamedID("")); !errors.Is(err, wire.StatusInvalidIdentifier) {
		t.Fatalf("empty identifier: %v", err)
	}
	if err := client.DeleteUser(testContext(t), wire.Identifier{Kind: 9}); !errors.Is(err, wire.StatusInvalidIdentifier) {
		t.Fatalf("unknown identifier kind: %v", err)
	}
}
