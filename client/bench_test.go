package client

import (
	"bufio"
	"context"
	"net"
	"strconv"
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

// BenchmarkSendPaths compares, per batch shape, a SendMessages round trip
// to a loopback peer written from one copied frame (flat) and from a
// vector over the caller's payloads (vector); VectoredSendBytesMin is
// where the vector starts to win.
func BenchmarkSendPaths(b *testing.B) {
	shapes := []struct{ count, payloadBytes int }{{10, 100}, {10, 1000}, {120, 1000}, {250, 1000}, {500, 1000},
		{1000, 1000}, {500, 2000}, {250, 4000}, {10000, 100}, {3, 10000}, {12, 10000}, {25, 10000}, {100, 10000},
		{1, 1 << 20}}
	client := leanPeerClient(b)
	for _, shape := range shapes {
		messages := make([]wire.OutgoingMessage, shape.count)
		for i := range messages {
			messages[i] = wire.OutgoingMessage{Payload: make([]byte, shape.payloadBytes)}
		}
		body := &wire.OutgoingMessages{Stream: stream1, Topic: topicOrders, Partitioning: wire.PartitionID(0),
			Messages: messages}
		name := strconv.Itoa(shape.count) + "x" + strconv.Itoa(shape.payloadBytes) + "/"
		for _, vectored := range []bool{false, true} {
			b.Run(name+map[bool]string{false: "flat", true: "vector"}[vectored], func(b *testing.B) {
				current, err := client.liveConn()
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(wire.RequestBytes(body)))
				b.ReportAllocs()
				for b.Loop() {
					pending, err := client.prepare(wire.CodeSendMessages, body, wire.RequestBytes(body), vectored)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := client.exchange(context.Background(), current, pending); err != nil {
						b.Fatal(err)
					}
					pending.release()
				}
			})
		}
	}
}

// leanPeerClient dials a loopback peer that confirms every send while
// reading frames into one reused buffer, so the peer's allocations do not
// drown the client's costs, and returns the client (closed with b).
func leanPeerClient(b *testing.B) *Client {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = listener.Close() })
	go func() {
		netConn, err := listener.Accept()
		if err != nil {
			return
		}
		defer netConn.Close()
		reader := bufio.NewReaderSize(netConn, 1<<16)
		var buffer []byte
		confirmation := wire.SendConfirmations{{PartitionID: 0}}
		for {
			frame, err := readFrame(reader, func(size int) []byte {
				if cap(buffer) < size {
					buffer = make([]byte, size)
				}
				return buffer[:size]
			})
			if err != nil {
				return
			}
			if _, err := netConn.Write(replyFrame(b, frame, confirmation)); err != nil {
				return
			}
		}
	}()
	client, err := Dial(context.Background(), testOptions(listener.Addr().String()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { client.Close() })
	return client
}
