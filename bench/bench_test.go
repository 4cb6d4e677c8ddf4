package bench

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
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

// BenchmarkReadPoll is the cost of decoding and reading one polled batch
// of 1000, as a consumer does for each reply.
func BenchmarkReadPoll(b *testing.B) {
	payload := pollPayload(1000, pollRecord(0, 1000, time.Now()))
	var reply wire.PolledMessages
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		if err := wire.DecodeAll(&reply, payload); err != nil {
			b.Fatal(err)
		}
		if _, err := readPoll(&reply); err != nil {
			b.Fatal(err)
		}
	}
}
