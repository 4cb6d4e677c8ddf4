package shard

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// appendLatency is a shard's end-to-end append histogram: from the
// front handing a SendMessages batch to the data plane to the op coming
// back after the topic's durability point (for a persisted topic, after
// the fdatasync), cross-shard hops included. Buckets are those of
// RequestLatency; only the shard's thread writes.
type appendLatency struct {
	counts [LatencyBucketCount]atomic.Uint64
	sum    atomic.Uint64
}

func (l *appendLatency) observe(elapsed time.Duration) {
	elapsed = max(elapsed, 0)
	bucket := min(bits.Len64(uint64(elapsed/time.Microsecond)), LatencyBucketCount-1)
	counter := &l.counts[bucket]
	counter.Store(counter.Load() + 1)
	l.sum.Store(l.sum.Load() + uint64(elapsed))
}

// AppendLatency is one shard's end-to-end append histogram (appends its
// connections started, whichever shard owns the partition).
type AppendLatency struct {
	Shard    int
	Counts   [LatencyBucketCount]uint64 // per bucket, not cumulative
	SumNanos uint64
}

// AppendLatencies returns every shard's append histogram; safe from any
// goroutine.
func (s *Server) AppendLatencies() []AppendLatency {
	out := make([]AppendLatency, len(s.fronts))
	for i, f := range s.fronts {
		out[i].Shard = i
		out[i].SumNanos = f.appendLatency.sum.Load()
		for bucket := range out[i].Counts {
			out[i].Counts[bucket] = f.appendLatency.counts[bucket].Load()
		}
	}
	return out
}
