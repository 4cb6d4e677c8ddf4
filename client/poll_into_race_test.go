package client

import (
	"bytes"
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// TestPollMessagesIntoConcurrentCancels: callers sharing one client, each
// reusing its own buffer, some giving up at random moments, never see
// another call's reply, and the reader never writes into a buffer its
// caller took back (under -race a late write is a reported race; without
// it the scribbled pattern is checked). Method: four goroutines poll with
// per-call deadlines from 0 to 2 ms against a peer that answers each poll
// with messages derived from the requested offset.
func TestPollMessagesIntoConcurrentCancels(t *testing.T) {
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) {
		request, _, err := wire.DecodeRequest(frame)
		if err != nil {
			return nil, true
		}
		var poll wire.PollMessages
		if err := wire.DecodeAll(&poll, request.Body); err != nil {
			return nil, true
		}
		base := poll.Strategy.Value
		return [][]byte{replyFrame(t, frame, &wire.PolledMessages{MessagesCount: poll.Count,
			CurrentOffset: base + uint64(poll.Count) - 1, Records: pollRecords(int(poll.Count), 100, base)})}, false
	})
	client, err := Dial(testContext(t), testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var callers sync.WaitGroup
	for caller := range 4 {
		callers.Add(1)
		go func() {
			defer callers.Done()
			random := rand.New(rand.NewPCG(uint64(caller), 3))
			buffer := make([]byte, 0, 8<<10)
			var polled wire.PolledMessages
			for round := range 300 {
				base := uint64(caller*100000 + round*100)
				count := 1 + random.IntN(60)
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(random.IntN(2000))*time.Microsecond)
				next, err := client.PollMessagesInto(ctx, pollFrom(base, uint32(count), false), &polled, buffer)
				cancel()
				if err == nil && !polledFrom(&polled, count, base) {
					t.Errorf("caller %d round %d: a reply of other messages than the %d asked from %d", caller, round, count, base)
					return
				}
				scribble := next[:cap(next)]
				for index := range scribble {
					scribble[index] = 0xee
				}
				buffer = next[:0]
				time.Sleep(time.Duration(random.IntN(300)) * time.Microsecond)
				if !bytes.Equal(scribble, bytes.Repeat([]byte{0xee}, len(scribble))) {
					t.Errorf("caller %d round %d: a late reply landed in a buffer its caller took back", caller, round)
					return
				}
			}
		}()
	}
	callers.Wait()
}

// polledFrom reports whether polled holds count messages from base, with
// pollRecords' payloads.
func polledFrom(polled *wire.PolledMessages, count int, base uint64) bool {
	iterator := polled.Messages()
	index := 0
	for message, ok := iterator.Next(); ok; message, ok = iterator.Next() {
		want := bytes.Repeat([]byte{byte(base) + byte(index)}, 100)
		if message.Offset != base+uint64(index) || !bytes.Equal(message.Payload, want) {
			return false
		}
		index++
	}
	return index == count && int(polled.MessagesCount) == count
}
