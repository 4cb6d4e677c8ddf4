package bench

import (
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/whippetio/whippet/internal/invariant"
)

// Recorder collects one actor's measured batches: totals, an HdrHistogram
// and raw samples of latency, and the time-series buckets. It is safe for
// concurrent use (open-loop completions record from several goroutines).
type Recorder struct {
	mu        sync.Mutex
	start     time.Time
	last      time.Duration // elapsed at the latest traffic record
	histogram *hdrhistogram.Histogram
	samples   []float64 // µs, for iggy-bench's interpolated percentiles
	buckets   buckets
	totals    Totals
}

// Totals are an actor's cumulative counts over the measured phase.
type Totals struct {
	Messages      uint64 `json:"total_messages"`
	Batches       uint64 `json:"total_message_batches"`
	UserDataBytes uint64 `json:"total_user_data_bytes"`
	TotalBytes    uint64 `json:"total_bytes"`
}

// NewRecorder returns a recorder whose series use buckets of width.
func NewRecorder(width time.Duration) *Recorder {
	return &Recorder{histogram: newHistogram(), buckets: newBuckets(width)}
}

// Start sets the origin of elapsed time (the end of the warmup).
func (r *Recorder) Start(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	invariant.Assert(r.start.IsZero(), "a recorder starts once")
	r.start = at
}

// Traffic counts one batch sent or received at now: it adds to the totals
// and the throughput series without a latency sample.
func (r *Recorder) Traffic(now time.Time, messages, userBytes, totalBytes uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trafficLocked(now, messages, userBytes, totalBytes)
}

// Batch counts one batch and its latency.
func (r *Recorder) Batch(now time.Time, latency time.Duration, messages, userBytes, totalBytes uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	elapsed := r.trafficLocked(now, messages, userBytes, totalBytes)
	recordLatency(r.histogram, latency)
	if len(r.samples) < LatencySamplesMax {
		r.samples = append(r.samples, float64(latency.Microseconds()))
	}
	r.buckets.addLatency(elapsed, latency)
}

func (r *Recorder) trafficLocked(now time.Time, messages, userBytes, totalBytes uint64) time.Duration {
	invariant.Assert(!r.start.IsZero(), "a recorder counts only after Start")
	elapsed := max(now.Sub(r.start), r.last)
	r.buckets.addTraffic(r.last, elapsed, float64(userBytes), float64(messages))
	r.last = elapsed
	r.totals.Messages += messages
	r.totals.Batches++
	r.totals.UserDataBytes += userBytes
	r.totals.TotalBytes += totalBytes
	return elapsed
}

// Totals returns the counts so far.
func (r *Recorder) Totals() Totals {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.totals
}

// Elapsed returns the time from Start to the latest record.
func (r *Recorder) Elapsed() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}
