package shard

import "time"

// FileOpKind names what a FileOp did, for its latency histogram.
type FileOpKind uint8

// File op kinds.
const (
	FileRead FileOpKind = iota
	FileWrite
	FileFsync
	FileAllocate
	fileOpKindCount
)

// String is the kind's metric label.
func (k FileOpKind) String() string {
	switch k {
	case FileRead:
		return "read"
	case FileWrite:
		return "write"
	case FileFsync:
		return "fsync"
	case FileAllocate:
		return "allocate"
	}
	return "unknown"
}

// fileLatency is a shard's file op latency table: per kind, the
// LatencyBucketCount buckets of RequestLatency and a sum. Only the
// shard's thread writes.
type fileLatency [fileOpKindCount]latencyHistogram

func (l *fileLatency) observe(kind FileOpKind, elapsed time.Duration) { l[kind].observe(elapsed) }

// FileLatency is one shard's histogram of one kind of file op, from
// submission to completion: segment writes are the append path's disk
// time, fsyncs its durability wait.
type FileLatency struct {
	Kind     FileOpKind
	Counts   [LatencyBucketCount]uint64 // per bucket, not cumulative
	SumNanos uint64
}

// FileLatencies returns the shard's file op histograms, one per kind;
// safe from any goroutine.
func (sh *Shard) FileLatencies() []FileLatency {
	out := make([]FileLatency, fileOpKindCount)
	for kind := range fileOpKindCount {
		out[kind].Kind = kind
		out[kind].SumNanos, _ = sh.fileLatency[kind].load(&out[kind].Counts)
	}
	return out
}
