package client

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/whippetio/whippet/wire"
)

// pollRecords encodes count messages whose payloads are payloadBytes of
// their index, stamped from base.
func pollRecords(count int, payloadBytes int, base uint64) []byte {
	messages := make([]wire.OutgoingMessage, count)
	for index := range messages {
		messages[index].Payload = bytes.Repeat([]byte{byte(base) + byte(index)}, payloadBytes)
	}
	records := make([]byte, wire.BatchBytes(messages))
	wire.EncodeBatch(records, messages)
	wire.StampBatch(records, 0, base, 1)
	return records
}

// TestPollMessagesIntoReusesBuffer: a reply that fits lands in the
// caller's buffer, decoded in place; one that does not gets a new buffer,
// which the caller keeps; the next reply fits it. Payloads are checked
// byte for byte after each reuse.
func TestPollMessagesIntoReusesBuffer(t *testing.T) {
	sizes := []int{10, 10, 400, 10}
	served := 0
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) {
		count := sizes[served]
		base := uint64(served * 1000)
		served++
		return [][]byte{replyFrame(t, frame, &wire.PolledMessages{MessagesCount: uint32(count),
			CurrentOffset: base + uint64(count) - 1, Records: pollRecords(count, 100, base)})}, false
	})
	client, err := Dial(testContext(t), testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	buffer := make([]byte, 0, 16<<10)
	var polled wire.PolledMessages
	for round, count := range sizes {
		offered := unsafe.SliceData(buffer)
		next, err := client.PollMessagesInto(testContext(t), pollFrom(0, uint32(count), false), &polled, buffer)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		fits := cap(buffer) >= wire.HeaderBytes+wire.PollPrefixBytes+len(pollRecords(count, 100, 0))
		if same := unsafe.SliceData(next) == offered; same != fits {
			t.Fatalf("round %d: reply in the offered buffer %v, fits %v", round, same, fits)
		}
		buffer = next
		checkPolled(t, round, &polled, count, uint64(round*1000))
	}
}

func checkPolled(t *testing.T, round int, polled *wire.PolledMessages, count int, base uint64) {
	t.Helper()
	if int(polled.MessagesCount) != count {
		t.Fatalf("round %d: %d messages, want %d", round, polled.MessagesCount, count)
	}
	iterator := polled.Messages()
	index := 0
	for message, ok := iterator.Next(); ok; message, ok = iterator.Next() {
		want := bytes.Repeat([]byte{byte(base) + byte(index)}, 100)
		if message.Offset != base+uint64(index) || !bytes.Equal(message.Payload, want) {
			t.Fatalf("round %d message %d: offset %d, payload differs %v", round, index, message.Offset,
				!bytes.Equal(message.Payload, want))
		}
		index++
	}
	if index != count {
		t.Fatalf("round %d: walked %d messages, want %d", round, index, count)
	}
}

// TestPollMessagesIntoCancelled: a caller that gives up before its reply
// arrives gets its buffer back untouched; the late reply is received into
// a buffer of the connection's own and dropped, and the next poll on the
// same connection is answered correctly.
func TestPollMessagesIntoCancelled(t *testing.T) {
	p, arrived := startHoldingPeer(t, func(index int, frame []byte) []byte {
		base := uint64(index * 1000)
		return replyFrame(t, frame, &wire.PolledMessages{MessagesCount: 5, CurrentOffset: base + 4,
			Records: pollRecords(5, 100, base)})
	})
	client, err := Dial(testContext(t), testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithCancel(testContext(t))
	abandoned := make([]byte, 4<<10)
	first := make(chan error, 1)
	go func() {
		var polled wire.PolledMessages
		_, err := client.PollMessagesInto(ctx, pollFrom(0, 5, false), &polled, abandoned)
		first <- err
	}()
	<-arrived
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled poll: %v", err)
	}
	for index := range abandoned {
		abandoned[index] = 0xee // the caller owns it again: the late reply must not land here
	}
	var polled wire.PolledMessages
	buffer, err := client.PollMessagesInto(testContext(t), pollFrom(0, 5, false), &polled, make([]byte, 4<<10))
	if err != nil || len(buffer) == 0 {
		t.Fatalf("second poll: %v", err)
	}
	checkPolled(t, 1, &polled, 5, 1000)
	if !bytes.Equal(abandoned, bytes.Repeat([]byte{0xee}, len(abandoned))) {
		t.Fatal("the reply of an abandoned poll was written into its caller's buffer")
	}
}

// TestPollMessagesIntoTimeoutMidFrame: a reply that stops half-way while
// the reader receives it into the caller's buffer times out, and the
// caller gets its error only once the reader let go of the buffer (it
// must not write into it after the call returned). Method: the peer sends
// the first half of a poll reply and stalls; the reply timeout fails the
// connection; the call returns an error, and the connection's reader has
// exited by then.
func TestPollMessagesIntoTimeoutMidFrame(t *testing.T) {
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) {
		whole := replyFrame(t, frame, &wire.PolledMessages{MessagesCount: 50, CurrentOffset: 49,
			Records: pollRecords(50, 100, 0)})
		return [][]byte{whole[:len(whole)/2]}, false
	})
	options := testOptions(p.address())
	options.ReplyTimeout = 200 * time.Millisecond
	client, err := Dial(testContext(t), options)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	current, err := client.liveConn()
	if err != nil {
		t.Fatal(err)
	}
	var polled wire.PolledMessages
	if _, err := client.PollMessagesInto(testContext(t), pollFrom(0, 50, false), &polled, make([]byte, 64<<10)); err == nil {
		t.Fatal("a reply cut half-way was accepted")
	}
	select {
	case <-current.done:
	default:
		t.Fatal("the call returned while the reader could still write into its buffer")
	}
}
