package shard

import (
	"encoding/binary"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
)

// LatencyBucketCount is the number of request latency buckets: bucket i
// counts requests served in under 2^i µs, the last one everything slower
// (2^(LatencyBucketCount-2) µs ≈ 0.5 s and up).
const LatencyBucketCount = 21

// LatencyBucketBound is the upper bound of bucket i (the last has none).
func LatencyBucketBound(i int) time.Duration {
	invariant.Assert(i >= 0 && i < LatencyBucketCount-1, "shard: a bounded latency bucket")
	return time.Microsecond << i
}

// RequestLatency is one shard's latency histogram of one command: from
// the moment the front starts a request to the moment its reply is ready.
type RequestLatency struct {
	Shard    int
	Code     wire.Code
	Counts   [LatencyBucketCount]uint64 // per bucket, not cumulative
	SumNanos uint64
}

// requestLatency is a shard's table of histograms, one row per known
// command. Only the shard's thread writes, so a bump is a load and a
// store; readers on other threads see each counter atomically.
type requestLatency struct {
	codes []wire.Code
	// row is 1 + the row of a code, 0 for an unknown one: a slice indexed
	// by code rather than a map, because every request looks it up.
	// Read-only after construction, shared by every shard.
	row []int32
	// byOperation is 1 + the row of a replicated request, whose frame
	// names its operation rather than its code (the first code of each
	// operation: a PAT login counts as LoginRegister).
	byOperation *[256]int32
	rows        []latencyHistogram
}

// latencyHistogram counts durations in the LatencyBucketCount buckets and
// sums them. Only the shard's thread writes, so a bump is a load and a
// store; readers on other threads see each counter atomically.
type latencyHistogram struct {
	counts [LatencyBucketCount]atomic.Uint64
	sum    atomic.Uint64
}

func (h *latencyHistogram) observe(elapsed time.Duration) {
	elapsed = max(elapsed, 0)
	bucket := min(bits.Len64(uint64(elapsed/time.Microsecond)), LatencyBucketCount-1)
	counter := &h.counts[bucket]
	counter.Store(counter.Load() + 1)
	h.sum.Store(h.sum.Load() + uint64(elapsed))
}

// load copies the counts into counts and returns the sum and the total
// count; any goroutine.
func (h *latencyHistogram) load(counts *[LatencyBucketCount]uint64) (sumNanos, total uint64) {
	for bucket := range counts {
		counts[bucket] = h.counts[bucket].Load()
		total += counts[bucket]
	}
	return h.sum.Load(), total
}

func newRequestLatencies(shardCount int) []*requestLatency {
	codes := wire.Codes()
	codeMax := wire.Code(0)
	for _, code := range codes {
		codeMax = max(codeMax, code)
	}
	invariant.Assert(codeMax < 1<<16, "shard: command codes index a small table")
	row := make([]int32, codeMax+1)
	byOperation := new([256]int32)
	for i, code := range codes {
		row[code] = int32(i) + 1
		operation := code.Operation()
		if byOperation[operation] == 0 && operation != wire.OperationNonReplicated && operation != wire.OperationReserved {
			byOperation[operation] = int32(i) + 1
		}
	}
	out := make([]*requestLatency, shardCount)
	for i := range out {
		out[i] = &requestLatency{codes: codes, row: row, byOperation: byOperation,
			rows: make([]latencyHistogram, len(codes))}
	}
	return out
}

// observe records one request of frame (a 0.9 request frame) that took
// elapsed; frames without a known code are not counted.
func (l *requestLatency) observe(frame []byte, elapsed time.Duration) {
	if len(frame) < offsetRequestCode+4 {
		return
	}
	operation := wire.Operation(frame[offsetRequestOperation])
	row := l.byOperation[operation]
	if operation == wire.OperationNonReplicated {
		row = 0
		if code := binary.LittleEndian.Uint32(frame[offsetRequestCode:]); code < uint32(len(l.row)) {
			row = l.row[code]
		}
	}
	if row == 0 {
		return
	}
	l.rows[row-1].observe(elapsed)
}

// RequestLatencies returns every shard's histogram of every command that
// has been served at least once; safe from any goroutine.
func (s *Server) RequestLatencies() []RequestLatency {
	var out []RequestLatency
	for shardID, table := range s.latency {
		for index, code := range table.codes {
			entry := RequestLatency{Shard: shardID, Code: code}
			sum, total := table.rows[index].load(&entry.Counts)
			entry.SumNanos = sum
			if total > 0 {
				out = append(out, entry)
			}
		}
	}
	return out
}
