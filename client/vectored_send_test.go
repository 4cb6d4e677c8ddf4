package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// sendBatch returns count messages of payloadBytes seeded random bytes,
// every third with a user-header block and every fifth with an empty
// payload.
func sendBatch(random *rand.Rand, count, payloadBytes int) []wire.OutgoingMessage {
	headers := wire.Headers{wire.StringHeader("trace", "abc")}
	encodedHeaders := make([]byte, headers.EncodedSize())
	headers.Encode(encodedHeaders)
	messages := make([]wire.OutgoingMessage, count)
	for i := range messages {
		payload := make([]byte, payloadBytes)
		if i%5 == 4 {
			payload = nil
		}
		for j := range payload {
			payload[j] = byte(random.Uint32())
		}
		messages[i] = wire.OutgoingMessage{ID: wire.Uint128{Lo: random.Uint64()}, OriginTimestamp: 1_700_000_000_000_000 +
			uint64(i), Payload: payload}
		if i%3 == 0 {
			messages[i].UserHeaders = encodedHeaders
		}
	}
	return messages
}

// flatSendFrame is the frame the copying path writes for messages, with
// the session fields the received frame carries.
func flatSendFrame(t *testing.T, received []byte, messages []wire.OutgoingMessage) []byte {
	header, _ := decodeRequest(t, received)
	body := &wire.OutgoingMessages{Stream: stream1, Topic: topicOrders, Partitioning: wire.PartitionID(0),
		Messages: messages}
	frame := make([]byte, wire.RequestBytes(body))
	wire.EncodeRequest(frame, wire.RequestHeader{Operation: wire.OperationSendMessages}, body)
	wire.StampRequest(frame, header.Client, header.Request, header.Session)
	return frame
}

// recordingPeer confirms every send and keeps a copy of each frame.
func recordingPeer(t *testing.T, listener net.Listener) (*peer, func() [][]byte) {
	var mu sync.Mutex
	var frames [][]byte
	p := startPeerOn(t, listener, func(_ int, frame []byte) ([][]byte, bool) {
		mu.Lock()
		frames = append(frames, frame)
		mu.Unlock()
		return [][]byte{replyFrame(t, frame, wire.SendConfirmations{{PartitionID: 0}})}, false
	})
	return p, func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return frames
	}
}

// sendAndCompare sends batches of several shapes on client and checks that
// the peer received, for each, exactly the frame the copying path writes.
// It returns whether the connection wrote any of them from a vector.
func sendAndCompare(t *testing.T, client *Client, received func() [][]byte) bool {
	random := rand.New(rand.NewPCG(11, 12))
	shapes := []struct{ count, payloadBytes int }{{10, 100}, {1000, 1000}, {3, 300_000}, {200, 0}, {1, 1}}
	vectored := false
	for index, shape := range shapes {
		messages := sendBatch(random, shape.count, shape.payloadBytes)
		if _, err := client.SendMessages(testContext(t), stream1, topicOrders, wire.PartitionID(0),
			messages); err != nil {
			t.Fatalf("shape %d: %v", index, err)
		}
		frames := received()
		if len(frames) != index+1 {
			t.Fatalf("shape %d: the peer has %d frames", index, len(frames))
		}
		if want := flatSendFrame(t, frames[index], messages); !bytes.Equal(frames[index], want) {
			t.Fatalf("shape %d: the frame sent differs from the copied frame (%d and %d bytes)", index,
				len(frames[index]), len(want))
		}
		current, err := client.liveConn()
		if err != nil {
			t.Fatal(err)
		}
		current.writeMu.Lock()
		vectored = vectored || cap(current.pieces) > 0
		for _, piece := range current.pieces[:cap(current.pieces)] {
			if piece != nil {
				t.Fatalf("shape %d: the connection keeps a view of a payload after the write", index)
			}
		}
		current.writeMu.Unlock()
	}
	return vectored
}

// TestVectoredSendFrames: over plain TCP, small batches travel copied and
// large ones as vectors, and the peer receives exactly the frames the
// copying path writes (empty payloads, user headers, one large payload).
func TestVectoredSendFrames(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	p, received := recordingPeer(t, listener)
	client, err := Dial(testContext(t), testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if !sendAndCompare(t, client, received) {
		t.Fatal("no batch was written from a vector")
	}
}

// TestVectoredSendOverTLS: through TLS (no writev) large batches are
// copied into one frame, and the frames are the same.
func TestVectoredSendOverTLS(t *testing.T) {
	var received func() [][]byte
	client, _ := dialOverTLS(t, func(secure net.Listener) { _, received = recordingPeer(t, secure) })
	if sendAndCompare(t, client, received) {
		t.Fatal("a batch was written from a vector through TLS")
	}
}

// TestVectoredSendReplay: a vectored send refused with 57
// TransientNotCommitted is replayed with the same bytes and request id.
func TestVectoredSendReplay(t *testing.T) {
	var frames [][]byte
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) {
		frames = append(frames, frame)
		if len(frames) == 1 {
			return [][]byte{statusFrame(t, frame, wire.StatusTransientNotCommitted)}, false
		}
		return [][]byte{replyFrame(t, frame, wire.SendConfirmations{{PartitionID: 0}})}, false
	})
	client, err := Dial(testContext(t), testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	messages := sendBatch(rand.New(rand.NewPCG(13, 14)), 20, 20_000)
	body := &wire.OutgoingMessages{Stream: stream1, Topic: topicOrders, Partitioning: wire.PartitionID(0),
		Messages: messages}
	if current, err := client.liveConn(); err != nil || !vectoredSend(current, body, wire.RequestBytes(body)) {
		t.Fatalf("the batch would not be sent from a vector (%v)", err)
	}
	if _, err := client.SendMessages(testContext(t), stream1, topicOrders, wire.PartitionID(0), messages); err != nil {
		t.Fatal(err)
	}
	if len(frames) != 2 || !bytes.Equal(frames[0], frames[1]) {
		t.Fatalf("%d frames; the replay equals the first: %v", len(frames), len(frames) == 2 &&
			bytes.Equal(frames[0], frames[1]))
	}
	if !bytes.Equal(frames[1], flatSendFrame(t, frames[1], messages)) {
		t.Fatal("the replayed frame differs from the copied frame")
	}
}

// TestSendLeavesPayloadsOnReturn: a send whose write is stuck (the peer
// does not read) ends on the caller's deadline or on the reply timeout;
// once SendMessages has returned the test overwrites the payloads, and
// every payload byte the peer then drains must still be the original. Run
// with -race, the detector also sees any goroutine still reading them.
func TestSendLeavesPayloadsOnReturn(t *testing.T) {
	cases := []struct {
		name         string
		deadline     time.Duration
		replyTimeout time.Duration
		want         error
	}{
		{"context deadline", 200 * time.Millisecond, 20 * time.Second, context.DeadlineExceeded},
		{"reply timeout", 0, 200 * time.Millisecond, errTimeout},
	}
	for _, test := range cases {
		t.Run(test.name, func(t *testing.T) {
			checkStuckSend(t, test.deadline, test.replyTimeout, test.want)
		})
	}
}

const stuckPayloadBytes = 4 << 20

func checkStuckSend(t *testing.T, deadline, replyTimeout time.Duration, want error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	defer listener.Close()
	drained := make(chan []byte, 1)
	returned := make(chan struct{})
	go func() {
		netConn, err := listener.Accept()
		if err != nil {
			drained <- nil
			return
		}
		defer netConn.Close()
		<-returned // read nothing until the send has returned
		stream, _ := io.ReadAll(netConn)
		drained <- stream
	}()
	options := testOptions(listener.Addr().String())
	options.ReplyTimeout = replyTimeout
	client, err := Dial(testContext(t), withoutRetries(options))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	messages := make([]wire.OutgoingMessage, 12) // 48 MiB: more than loopback buffers hold
	for i := range messages {
		messages[i].Payload = bytes.Repeat([]byte{0x5a}, stuckPayloadBytes)
	}
	ctx := context.Background()
	if deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, deadline)
		defer cancel()
	}
	_, err = client.SendMessages(ctx, stream1, topicOrders, wire.PartitionID(0), messages)
	for i := range messages {
		for j := range messages[i].Payload {
			messages[i].Payload[j] = 0xa5
		}
	}
	close(returned)
	if !errors.Is(err, want) {
		t.Fatalf("stuck send: %v, want %v", err, want)
	}
	checkDrainedPayloads(t, <-drained, len(messages))
}

// checkDrainedPayloads checks that every payload byte within stream (a
// prefix of the frame of messages of stuckPayloadBytes each) is 0x5a.
func checkDrainedPayloads(t *testing.T, stream []byte, count int) {
	body := &wire.OutgoingMessages{Stream: stream1, Topic: topicOrders, Partitioning: wire.PartitionID(0),
		Messages: make([]wire.OutgoingMessage, count)}
	position := wire.SendHeadBytes(body) - count*wire.MessageHeaderBytes
	frameBytes := position + count*(wire.MessageHeaderBytes+stuckPayloadBytes)
	defer func() {
		if len(stream) >= frameBytes && !t.Failed() {
			t.Skipf("the socket buffers took the whole %d-byte frame, so no write was stuck", frameBytes)
		}
	}()
	for range count {
		position += wire.MessageHeaderBytes
		end := min(position+stuckPayloadBytes, len(stream))
		if position < end {
			if at := bytes.IndexByte(stream[position:end], 0xa5); at >= 0 {
				t.Fatalf("payload byte %d of the stream was written after SendMessages returned", position+at)
			}
		}
		position += stuckPayloadBytes
	}
	t.Logf("the peer drained %d bytes of the stuck frame", len(stream))
}
