package client

import (
	"testing"
	"time"
)

// TestReplyTimeoutPerCall: the deadline belongs to each call, not to the
// connection: calls answered in 60% of ReplyTimeout keep succeeding for
// several timeouts in a row (the watchdog re-arms to the oldest pending
// call), and the connection stays the same.
func TestReplyTimeoutPerCall(t *testing.T) {
	const timeout = 200 * time.Millisecond
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) {
		time.Sleep(timeout * 6 / 10) // a slow server, within the bound
		return [][]byte{replyFrame(t, frame, nil)}, false
	})
	options := testOptions(p.address())
	options.ReplyTimeout = timeout
	client, err := Dial(testContext(t), options)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	first, _ := client.liveConn()
	for call := range 4 {
		if err := client.Ping(testContext(t)); err != nil {
			t.Fatalf("ping %d: %v", call, err)
		}
	}
	if current, _ := client.liveConn(); current != first || current == nil {
		t.Fatal("the connection was replaced while every reply came in time")
	}
}
