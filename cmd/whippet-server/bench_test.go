package main

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// BenchmarkSendMessages measures end-to-end sends through the real
// binary: concurrent producers on one connection (pipelined), each
// sending batches of 100 messages of 100 bytes to its own partition.
func BenchmarkSendMessages(b *testing.B) {
	s := startServer(b, "WHIPPET_SYSTEM_TOPIC_DURABILITY=written")
	c := s.dial(b)
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, "bench", nil); err != nil {
		b.Fatal(err)
	}
	const producers, batchMessages, payloadBytes = 8, 100, 100
	if _, err := c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: producers, Name: "t"}); err != nil {
		b.Fatal(err)
	}
	batch := make([]wire.OutgoingMessage, batchMessages)
	for i := range batch {
		batch[i] = wire.OutgoingMessage{Payload: make([]byte, payloadBytes)}
	}
	b.SetBytes(batchMessages * payloadBytes)
	b.ReportAllocs()
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for producer := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if _, err := c.SendMessages(ctx, id(0), id(0), wire.PartitionID(uint32(producer)), batch); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N*batchMessages)/b.Elapsed().Seconds(), "msgs/s")
}
