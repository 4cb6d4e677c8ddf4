package shard

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// TestRequestLatencyBuckets places requests of a read (named by its
// code) and a replicated write (named by its operation) in the buckets
// their durations fall in, and leaves unknown frames out.
func TestRequestLatencyBuckets(t *testing.T) {
	server := &Server{latency: newRequestLatencies(2)}
	frame := func(operation wire.Operation, code wire.Code) []byte {
		out := make([]byte, wire.HeaderBytes)
		out[offsetRequestOperation] = byte(operation)
		binary.LittleEndian.PutUint32(out[offsetRequestCode:], uint32(code))
		return out
	}
	poll := frame(wire.OperationNonReplicated, wire.CodePollMessages)
	server.latency[1].observe(poll, 3*time.Microsecond) // 3 µs: bucket 2 (< 4 µs)
	server.latency[1].observe(poll, 0)                  // bucket 0
	server.latency[0].observe(poll, 10*time.Second)     // overflow bucket
	server.latency[0].observe(frame(wire.OperationSendMessages, 0), 1500*time.Microsecond)
	server.latency[0].observe(frame(wire.OperationNonReplicated, 9999), time.Millisecond) // unknown code
	server.latency[0].observe([]byte{1, 2, 3}, time.Millisecond)                          // too short

	got := map[[2]int]RequestLatency{}
	for _, entry := range server.RequestLatencies() {
		got[[2]int{entry.Shard, int(entry.Code)}] = entry
	}
	if len(got) != 3 {
		t.Fatalf("%d histograms, want 3: %+v", len(got), got)
	}
	polls := got[[2]int{1, int(wire.CodePollMessages)}]
	if polls.Counts[2] != 1 || polls.Counts[0] != 1 || polls.SumNanos != 3000 {
		t.Fatalf("shard 1 polls %+v", polls)
	}
	if slow := got[[2]int{0, int(wire.CodePollMessages)}]; slow.Counts[LatencyBucketCount-1] != 1 {
		t.Fatalf("a 10 s poll is not in the overflow bucket: %+v", slow)
	}
	sends := got[[2]int{0, int(wire.CodeSendMessages)}]
	if sends.Counts[11] != 1 || LatencyBucketBound(11) != 2048*time.Microsecond {
		t.Fatalf("a 1.5 ms send is not under the 2.048 ms bound: %+v", sends)
	}
}
