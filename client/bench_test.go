package client

import (
	"context"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// BenchmarkPipelinedSend measures SendMessages round trips of 10 × 1 KiB
// messages from concurrent callers sharing one loopback connection.
func BenchmarkPipelinedSend(b *testing.B) {
	client, messages := sendBenchClient(b, 1024)
	b.SetBytes(int64(10 * 1024))
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := client.SendMessages(context.Background(), stream1, topicOrders, wire.PartitionID(0),
				messages); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkSerialSend measures one caller's SendMessages round trips of
// 10 × 1000-byte messages, one request in flight: the client's own cost
// per request (encode, write, reply hand-off) plus a loopback peer's.
func BenchmarkSerialSend(b *testing.B) {
	client, messages := sendBenchClient(b, 1000)
	b.SetBytes(int64(10 * 1000))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := client.SendMessages(context.Background(), stream1, topicOrders, wire.PartitionID(0),
			messages); err != nil {
			b.Fatal(err)
		}
	}
}

// sendBenchClient dials a loopback peer confirming every send and returns
// the client (closed with the benchmark) and 10 messages of payloadBytes.
func sendBenchClient(b *testing.B, payloadBytes int) (*Client, []wire.OutgoingMessage) {
	p := startPeer(b, func(_ int, frame []byte) ([][]byte, bool) {
		return [][]byte{replyFrame(b, frame, wire.SendConfirmations{{PartitionID: 0}})}, false
	})
	client, err := Dial(context.Background(), testOptions(p.address()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { client.Close() })
	messages := make([]wire.OutgoingMessage, 10)
	for i := range messages {
		messages[i] = wire.OutgoingMessage{Payload: make([]byte, payloadBytes)}
	}
	return client, messages
}
