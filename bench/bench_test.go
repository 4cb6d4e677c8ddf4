package bench

import (
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkRecorderBatch is the cost the bench adds per measured batch.
func BenchmarkRecorderBatch(b *testing.B) {
	recorder := NewRecorder(SamplingTimeDefault)
	start := time.Unix(0, 0)
	recorder.Start(start)
	b.ReportAllocs()
	index := 0
	for b.Loop() {
		index++
		recorder.Batch(start.Add(time.Duration(index)*time.Millisecond), 500*time.Microsecond, 1000, 1_000_000, 1_048_256)
	}
}

// BenchmarkBatcherNext is the cost of building one default batch.
func BenchmarkBatcherNext(b *testing.B) {
	batcher := newBatcher(newPayloadPool(rand.New(rand.NewPCG(1, 1))), 1, 1, Fixed(1000), Fixed(1000))
	origin := time.Now()
	b.ReportAllocs()
	b.SetBytes(1_000_000)
	for b.Loop() {
		batcher.next(batcher.drawCount(), origin)
	}
}

// BenchmarkReadPoll is the cost of walking one polled batch of 1000.
func BenchmarkReadPoll(b *testing.B) {
	t := &testing.T{}
	reply := pollReply(t, 0, 1000, time.Now())
	b.ReportAllocs()
	b.SetBytes(int64(len(reply.Records)))
	for b.Loop() {
		if _, err := readPoll(reply); err != nil {
			b.Fatal(err)
		}
	}
}
