package shard

// appendLatency is a shard's end-to-end append histogram: from the
// front handing a SendMessages batch to the data plane to the op coming
// back after the topic's durability point (for a persisted topic, after
// the fdatasync), cross-shard hops included. Buckets are those of
// RequestLatency; only the shard's thread writes.
type appendLatency = latencyHistogram

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
		out[i].SumNanos, _ = f.appendLatency.load(&out[i].Counts)
	}
	return out
}
