package replicalog

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/ring"
)

// ringStorage runs reads, writes and fdatasyncs on an io_uring ring,
// bouncing the log's Go-heap buffers through ring pool memory (as the
// shard's storage does), and the namespace ops as blocking calls through
// DirectStorage. It is a benchmark adapter; shard owns the real wiring.
type ringStorage struct {
	tb       testing.TB
	ring     *ring.Ring
	bounce   *ring.Pool
	direct   *engine.DirectStorage
	inflight map[uint64]ringOp
	nextTag  uint64
	reaped   []ring.CQE
}

type ringOp struct {
	op     *engine.Op
	buffer ring.Buf
	bounce bool
}

const ringBounceBytes = 8 << 20

func newRingStorage(tb testing.TB) *ringStorage {
	if err := ring.Available(); err != nil {
		tb.Skipf("io_uring not available: %v", err)
	}
	runtime.LockOSThread()
	tb.Cleanup(runtime.UnlockOSThread)
	r, err := ring.New(ring.Options{})
	if err != nil {
		tb.Skipf("io_uring setup: %v", err)
	}
	bounce, err := ring.NewPool(16, ringBounceBytes)
	if err != nil {
		tb.Fatal(err)
	}
	s := &ringStorage{tb: tb, ring: r, bounce: bounce, direct: engine.NewDirectStorage(),
		inflight: make(map[uint64]ringOp), reaped: make([]ring.CQE, 256)}
	tb.Cleanup(func() {
		_ = r.Close() // the benchmark is over
		bounce.Close()
	})
	return s
}

func (s *ringStorage) Submit(op *engine.Op) {
	onRing := op.Code == engine.OpRead || op.Code == engine.OpWrite ||
		op.Code == engine.OpSync && op.Flags&engine.OpenDirectory == 0
	pending := ringOp{op: op}
	if onRing && op.Code != engine.OpSync {
		buffer, ok := s.bounce.Acquire()
		if !ok || len(op.Buffer) > ringBounceBytes {
			onRing = false
		} else {
			pending.buffer, pending.bounce = buffer, true
		}
	}
	if !onRing {
		s.direct.Submit(op)
		return
	}
	sqe, ok := s.ring.SQE()
	if !ok {
		if _, err := s.ring.Submit(); err != nil {
			s.tb.Fatal(err)
		}
		sqe, _ = s.ring.SQE()
	}
	s.nextTag++
	switch op.Code {
	case engine.OpSync:
		sqe.PrepFsync(int32(op.File), ring.FsyncDatasync)
	case engine.OpWrite:
		copy(pending.buffer.Bytes(), op.Buffer)
		sqe.PrepWrite(int32(op.File), pending.buffer, 0, len(op.Buffer), uint64(op.Position))
	default:
		sqe.PrepRead(int32(op.File), pending.buffer, 0, len(op.Buffer), uint64(op.Position))
	}
	sqe.SetUserData(s.nextTag)
	s.inflight[s.nextTag] = pending
}

func (s *ringStorage) drain() {
	for len(s.inflight) > 0 || s.direct.Pending() > 0 {
		s.direct.Poll(1 << 20)
		if len(s.inflight) == 0 {
			continue
		}
		if _, err := s.ring.SubmitAndWait(1, 50*time.Millisecond); err != nil && !errors.Is(err, ring.ErrTimeout) {
			s.tb.Fatal(err)
		}
		count := s.ring.ReapInto(s.reaped)
		for _, cqe := range s.reaped[:count] {
			s.complete(cqe)
		}
	}
}

func (s *ringStorage) complete(cqe ring.CQE) {
	pending, ok := s.inflight[cqe.UserData]
	if !ok {
		s.tb.Fatalf("completion for unknown tag %d", cqe.UserData)
	}
	delete(s.inflight, cqe.UserData)
	op := pending.op
	op.Result, op.Err = int64(cqe.Res), cqe.Err()
	if pending.bounce {
		s.bounce.Reclaim(pending.buffer)
		if op.Code == engine.OpRead && op.Err == nil {
			copy(op.Buffer, pending.buffer.Bytes()[:op.Result])
		}
		s.bounce.Release(pending.buffer)
	}
	if op.Err != nil {
		op.Result = 0
	} else if op.Code == engine.OpWrite && op.Result != int64(len(op.Buffer)) {
		op.Err = fmt.Errorf("short write: %d of %d bytes", op.Result, len(op.Buffer))
	}
	op.Callback(op)
}

// BenchmarkPersist1MiBRing is BenchmarkPersist1MiB with the journal and
// superblock writes and fdatasyncs on io_uring, where the two files'
// writes and syncs of one Persist overlap.
func BenchmarkPersist1MiBRing(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			benchmarkPersist(b, newRingStorage(b), sync, true)
		})
	}
}
