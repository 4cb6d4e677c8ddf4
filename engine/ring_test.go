package engine_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
	"github.com/whippetio/whippet/ring"
)

// ringBackend runs reads, writes and fdatasyncs on a real io_uring ring,
// with the partition's buffers allocated from a ring.Pool (what shard
// does through PartitionOptions.Allocate), and the metadata ops (open,
// list, truncate, ...) as blocking calls through DirectStorage. It is a
// test adapter: shard owns the production wiring.
type ringBackend struct {
	t        testing.TB
	ring     *ring.Ring
	pool     *ring.Pool // buffers the engine allocates
	scratch  *ring.Pool // bounce buffers for Go-heap buffers (recovery)
	direct   *engine.DirectStorage
	inflight map[uint64]ringOp
	nextTag  uint64
	reaped   []ring.CQE
	timeouts int
	noKick   bool // hide Kick: the partition writes whole groups only
}

type ringOp struct {
	op     *engine.Op
	buffer ring.Buf
	pool   *ring.Pool
	bounce bool
}

const ringBufferBytes = 8 << 20

func newRingBackend(t testing.TB) *ringBackend {
	if err := ring.Available(); err != nil {
		t.Skipf("io_uring not available: %v", err)
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	r, err := ring.New(ring.Options{})
	if err != nil {
		t.Skipf("io_uring setup: %v", err)
	}
	pool, err := ring.NewPool(24, ringBufferBytes)
	if err != nil {
		t.Fatal(err)
	}
	scratch, err := ring.NewPool(4, ringBufferBytes)
	if err != nil {
		t.Fatal(err)
	}
	b := &ringBackend{t: t, ring: r, pool: pool, scratch: scratch, direct: engine.NewDirectStorage(),
		inflight: make(map[uint64]ringOp), reaped: make([]ring.CQE, 256)}
	t.Cleanup(func() {
		_ = r.Close() // the test is over
		pool.Close()
		scratch.Close()
	})
	return b
}

// release returns a buffer allocate handed out.
func (b *ringBackend) release(data []byte) {
	buffer, start, ok := b.pool.Find(data)
	if !ok || start != 0 {
		b.t.Fatal("released buffer is not a pool buffer")
	}
	b.pool.Release(buffer)
}

// allocate hands the engine a whole pool buffer.
func (b *ringBackend) allocate(bytes int) []byte {
	if bytes > ringBufferBytes {
		b.t.Fatalf("ring test pool buffers hold %d bytes, %d asked", ringBufferBytes, bytes)
	}
	buffer, ok := b.pool.Acquire()
	if !ok {
		b.t.Fatal("ring test pool exhausted")
	}
	return buffer.Bytes()
}

func (b *ringBackend) Submit(op *engine.Op) {
	if op.Code != engine.OpRead && op.Code != engine.OpWrite && op.Code != engine.OpSync {
		b.direct.Submit(op)
		return
	}
	sqe, ok := b.ring.SQE()
	if !ok {
		if _, err := b.ring.Submit(); err != nil {
			b.t.Fatal(err)
		}
		sqe, _ = b.ring.SQE()
	}
	b.nextTag++
	pending := ringOp{op: op}
	if op.Code == engine.OpSync {
		sqe.PrepFsync(int32(op.File), ring.FsyncDatasync)
	} else {
		buffer, start, found := b.pool.Find(op.Buffer)
		pending.pool = b.pool
		if !found {
			buffer, _ = b.scratch.Acquire()
			start, pending.pool, pending.bounce = 0, b.scratch, true
			copy(buffer.Bytes(), op.Buffer)
		}
		pending.buffer = buffer
		if op.Code == engine.OpWrite {
			sqe.PrepWrite(int32(op.File), buffer, start, start+len(op.Buffer), uint64(op.Position))
		} else {
			sqe.PrepRead(int32(op.File), buffer, start, start+len(op.Buffer), uint64(op.Position))
		}
	}
	sqe.SetUserData(b.nextTag)
	b.inflight[b.nextTag] = pending
}

// Kicks and Kick make the adapter an engine.Kicker, as the shard's
// io_uring Storage is: large batches are written in pieces.
func (b *ringBackend) Kicks() bool { return !b.noKick }

func (b *ringBackend) Kick() {
	if _, err := b.ring.Submit(); err != nil {
		b.t.Fatal(err)
	}
}

func (b *ringBackend) drain() {
	for len(b.inflight) > 0 || b.direct.Pending() > 0 {
		b.direct.Poll(1 << 20)
		if len(b.inflight) == 0 {
			continue
		}
		if _, err := b.ring.SubmitAndWait(1, 50*time.Millisecond); err != nil && !errors.Is(err, ring.ErrTimeout) {
			b.t.Fatal(err)
		} else if err != nil {
			b.timeouts++
		}
		count := b.ring.ReapInto(b.reaped)
		for _, cqe := range b.reaped[:count] {
			b.complete(cqe)
		}
	}
}

func (b *ringBackend) complete(cqe ring.CQE) {
	pending, ok := b.inflight[cqe.UserData]
	if !ok {
		b.t.Fatalf("completion for unknown tag %d", cqe.UserData)
	}
	delete(b.inflight, cqe.UserData)
	op := pending.op
	op.Result, op.Err = int64(cqe.Res), cqe.Err()
	if op.Code != engine.OpSync {
		pending.pool.Reclaim(pending.buffer)
		if pending.bounce {
			if op.Code == engine.OpRead && op.Err == nil {
				copy(op.Buffer, pending.buffer.Bytes()[:op.Result])
			}
			pending.pool.Release(pending.buffer)
		}
	}
	if op.Err != nil {
		op.Result = 0
	} else if op.Code == engine.OpWrite && op.Result != int64(len(op.Buffer)) {
		op.Err = fmt.Errorf("short write: %d of %d bytes", op.Result, len(op.Buffer))
	}
	op.Callback(op)
}

// TestRingDifferential runs the differential suite with reads, writes and
// fdatasyncs on io_uring and buffers from a ring pool.
func TestRingDifferential(t *testing.T) {
	steps := 1500
	if testing.Short() {
		steps = 500
	}
	seed := testSeed(t)
	for _, durability := range []engine.Durability{engine.DurabilityPersisted, engine.DurabilityMemory} {
		t.Run(durability.String(), func(t *testing.T) {
			backend := newRingBackend(t)
			runDifferential(t, seed, backend, t.TempDir(), durability, steps)
		})
	}
}

// TestRingPieces appends 1 MiB batches written in pieces on a real
// io_uring ring and file (buffers from a ring pool, so each piece lends
// its part of the journal to the kernel), small batches between them,
// then reopens: recovery verifies every checksum, and the polls return
// every message at its offset.
func TestRingPieces(t *testing.T) {
	for _, durability := range []engine.Durability{engine.DurabilityWritten, engine.DurabilityPersisted} {
		t.Run(durability.String(), func(t *testing.T) {
			storage := newRingBackend(t)
			options := engine.PartitionOptions{
				Directory: t.TempDir(), SegmentBytes: 4 << 20, Durability: durability, Logger: quiet,
				Allocate: storage.allocate, Release: storage.release,
			}
			p := mustOpen(t, storage, options)
			serial := uint64(0)
			for batch := 0; batch < 6; batch++ {
				large := enginetest.Batch(1, largeMessages(&serial, 90)...)
				if _, err := appendBatch(t, storage, p, large, uint64(10+batch)); err != nil {
					t.Fatal(err)
				}
				small := enginetest.Batch(1, largeMessages(&serial, 1)...)
				if _, err := appendBatch(t, storage, p, small, uint64(10+batch)); err != nil {
					t.Fatal(err)
				}
			}
			if p.PiecedBatches() != 6 || p.SegmentCount() != 2 {
				t.Fatalf("%d batches written in pieces, %d segments", p.PiecedBatches(), p.SegmentCount())
			}
			closePartition(t, storage, p)
			reopened := mustOpen(t, storage, options)
			if reopened.TornBytes() != 0 {
				t.Fatalf("clean close left %d torn bytes", reopened.TornBytes())
			}
			checkMessages(t, storage, reopened, 0, serial)
			closePartition(t, storage, reopened)
		})
	}
}
