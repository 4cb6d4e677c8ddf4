package shard

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/ring"
)

// uringBackend is the io_uring Backend: a single-issuer ring with deferred
// task work (completions run only when the shard enters the kernel, so the
// loop is never interrupted), multishot accept and multishot recv into a
// provided-buffer ring, and one batched submit per Wait. Peers wake it with
// MSG_RING; other threads through an eventfd it keeps a read armed on.
type uringBackend struct {
	ring     *ring.Ring
	features *ring.Features
	recvRing *ring.BufRing
	recycle  []uint16 // provided buffers handed out by the last Wait
	memory   uringMemory
	ops      uringOps          // in flight, by token
	cancels  map[uint64]uint64 // cancel ID → target token, while the cancel is in flight
	cancelID uint64
	opsFree  []*uringOp
	vecsFree []*uringVec // SENDMSG messages (SendVec) not in flight
	cqes     []ring.CQE
	closed   bool

	eventFD       int
	eventPool     *ring.Pool // one page: the eventfd read's 8 bytes
	eventBuf      ring.Buf
	eventArmed    bool
	multishotOK   bool // the kernel keeps a recv armed across receives
	recvRearms    int  // receives re-armed after the kernel ended them (buffer ring dry)
	cancelRetries int  // cancels sent again after finding nothing

	stats     *stats       // the shard's counters (attach), else the backend's own
	logger    *slog.Logger // nil until attach
	fixedErr  error        // why the fixed-buffer table is missing, or nil
	fixWarned bool         // a failed slot fill was logged
}

// uringOp is what the backend remembers of an op until its final CQE: the
// buffer it lent (to reclaim), a bounce buffer (to free, or copy out of),
// and for multishot ops what it needs to re-arm.
type uringOp struct {
	kind      tokenKind
	fd        int
	lent      ring.Buf
	hasLent   bool
	bounce    []byte    // pooled copy of a caller slice the pools do not own
	vec       *uringVec // SendVec's message, until the CQE
	target    []byte    // Read into a bounce: where the bytes go
	cancelled bool
	timeout   bool
	once      bool // a buffer-select receive that ends with its first bytes
}

// Internal user_data values: the top byte 0xff is no token kind.
const (
	uringInternal    = uint64(0xff) << tokenKindShift
	uringWakeData    = uringInternal | 1 // MSG_RING posted by a peer
	uringSentData    = uringInternal | 2 // our own MSG_RING's completion
	uringCancelData  = uringInternal | 3 // an ASYNC_CANCEL's own completion, | its cancel ID << 8
	uringEventFDData = uringInternal | 4 // the eventfd read
)

// uringAvailable reports whether this process can run the io_uring
// backend: nil, or an error naming the cause (ring.ErrUnavailable with the
// kernel's reason, or a missing feature).
func uringAvailable() error {
	if err := ring.Available(); err != nil {
		return err
	}
	features, err := ring.Probe()
	if err != nil {
		return err
	}
	if !features.BufferRings {
		return errors.New("shard: io_uring lacks provided-buffer rings (Linux 5.19)")
	}
	if !features.Supports(ring.OpAsyncCancel) || !features.Supports(ring.OpRecv) || !features.Supports(ring.OpSend) {
		return errors.New("shard: io_uring lacks RECV, SEND or ASYNC_CANCEL (Linux 5.6)")
	}
	return nil
}

func newURingBackend() (Backend, error) {
	return newURingBackendSized(recvBufferCount, recvBufferBytes)
}

// newURingBackendSized opens the backend with a buffer ring of count
// buffers of bufferBytes (tests shrink it to make it run dry).
func newURingBackendSized(count, bufferBytes int) (*uringBackend, error) {
	r, err := ring.New(ring.Options{})
	if err != nil {
		return nil, err
	}
	b := &uringBackend{ring: r, features: r.Features(), eventFD: -1, stats: &stats{},
		cancels: make(map[uint64]uint64), cqes: make([]ring.CQE, completionsPerTurnMax)}
	b.multishotOK = b.features.RecvMultishot
	if err := b.setup(count, bufferBytes); err != nil {
		_ = b.Close() // the setup error is the one to report
		return nil, err
	}
	return b, nil
}

func (b *uringBackend) setup(count, bufferBytes int) error {
	var err error
	if b.recvRing, err = b.ring.NewBufRing(count, bufferBytes); err != nil {
		return err
	}
	// Blocking: io_uring answers a read of a nonblocking fd with EAGAIN.
	if b.eventFD, err = unix.Eventfd(0, unix.EFD_CLOEXEC); err != nil {
		return fmt.Errorf("shard: eventfd: %w", err)
	}
	if b.eventPool, err = ring.NewPool(1, ring.PageBytes); err != nil {
		return err
	}
	b.eventBuf, _ = b.eventPool.Acquire()
	b.armEventFD()
	if pools := b.memory.mapFixed(); len(pools) > 0 {
		// Without a table every file op is a plain READ or WRITE: slower
		// (pages pinned per op), never wrong.
		b.fixedErr = b.ring.RegisterBuffersSparse(pools...)
	} else {
		b.fixedErr = errors.New("shard: no fixed-buffer class could be mapped")
	}
	return nil
}

// attach points the backend's counters at its shard's and logs, once,
// why file ops cannot use fixed buffers.
func (b *uringBackend) attach(counters *stats, logger *slog.Logger) {
	b.stats, b.logger = counters, logger
	if b.fixedErr != nil {
		logger.Warn("shard: io_uring fixed buffers unavailable, file I/O uses plain READ/WRITE", "cause", b.fixedErr.Error())
	}
}

func (b *uringBackend) Name() string { return BackendIOURing }

func (b *uringBackend) Alloc(size int) []byte {
	bytes, pooled := b.memory.alloc(size)
	if !pooled {
		bump(&b.stats.allocsHeap, 1)
	}
	return bytes
}

func (b *uringBackend) Free(buf []byte) { b.memory.free(buf) }

func (b *uringBackend) Trim() { b.memory.trim() }

func (b *uringBackend) Direct(buf []byte) bool {
	_, _, ok := b.memory.find(buf)
	return ok
}

// sqe returns a free submission entry, submitting what is queued when the
// SQ is full.
func (b *uringBackend) sqe() *ring.SQE {
	sqe, ok := b.ring.SQE()
	if !ok {
		if _, err := b.ring.Submit(); err != nil {
			invariant.Assert(false, "a full SQ submits")
		}
		sqe, ok = b.ring.SQE()
	}
	invariant.Assert(ok, "an SQE is free after a submit")
	return sqe
}

func (b *uringBackend) track(token uint64, kind tokenKind, fd int) *uringOp {
	var op *uringOp
	if last := len(b.opsFree) - 1; last >= 0 {
		op = b.opsFree[last]
		b.opsFree = b.opsFree[:last]
	} else {
		op = new(uringOp)
	}
	*op = uringOp{kind: kind, fd: fd}
	b.ops.put(token, op)
	return op
}

func (b *uringBackend) untrack(token uint64, op *uringOp) {
	b.ops.remove(token)
	*op = uringOp{}
	b.opsFree = append(b.opsFree, op)
}

func (b *uringBackend) Accept(listener int, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	b.track(token, tokenAccept, listener)
	b.armAccept(listener, token)
	return nil
}

func (b *uringBackend) armAccept(listener int, token uint64) {
	sqe := b.sqe()
	if b.features.MultishotAccept {
		sqe.PrepAcceptMultishot(int32(listener), unix.SOCK_CLOEXEC)
	} else {
		sqe.PrepAccept(int32(listener), unix.SOCK_CLOEXEC)
	}
	sqe.SetUserData(token)
}

func (b *uringBackend) Recv(fd int, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	b.armRecv(b.track(token, tokenRecv, fd), token)
	return nil
}

// RecvOnce arms one buffer-select receive: a single CQE with up to one
// provided buffer of bytes, after which the caller picks the next receive.
func (b *uringBackend) RecvOnce(fd int, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	op := b.track(token, tokenRecv, fd)
	op.once = true
	b.armRecv(op, token)
	return nil
}

func (b *uringBackend) armRecv(op *uringOp, token uint64) {
	sqe := b.sqe()
	if b.multishotOK && !op.once {
		sqe.PrepRecvMultishot(int32(op.fd), b.recvRing, 0)
	} else {
		sqe.PrepRecvSelect(int32(op.fd), b.recvRing, 0)
	}
	sqe.SetUserData(token)
}

// RecvInto lends buf (or a bounce) for one RECV with MSG_WAITALL: the
// kernel keeps receiving until it is full, one CQE for the whole span.
func (b *uringBackend) RecvInto(fd int, buf []byte, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	invariant.Assert(len(buf) > 0, "a receive into a buffer has room")
	op := b.track(token, tokenRecvInto, fd)
	lent, start, end := b.lendable(op, buf, false)
	if op.bounce != nil {
		op.target = buf
	}
	sqe := b.sqe()
	sqe.PrepRecv(int32(fd), lent, start, end, unix.MSG_WAITALL)
	sqe.SetUserData(token)
	op.lent, op.hasLent = lent, true
	return nil
}

// RecvIntoOwned is RecvInto into buf in place (RECV with MSG_WAITALL).
func (b *uringBackend) RecvIntoOwned(fd int, buf []byte, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	b.track(token, tokenRecvInto, fd)
	sqe := b.sqe()
	sqe.PrepRecvOwned(int32(fd), buf, unix.MSG_WAITALL)
	sqe.SetUserData(token)
	return nil
}

func (b *uringBackend) Send(fd int, data []byte, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	invariant.Assert(len(data) > 0, "send has bytes")
	op := b.track(token, tokenSend, fd)
	buf, start, end := b.lendable(op, data, true)
	sqe := b.sqe()
	sqe.PrepSend(int32(fd), buf, start, end, unix.MSG_NOSIGNAL)
	sqe.SetUserData(token)
	op.lent, op.hasLent = buf, true
	return nil
}

// lendable returns the pooled span to lend the kernel for data: data
// itself when a pool owns it, else a pooled bounce buffer (holding a copy
// of data when copyIn), which may be shorter than data: sockets and files
// both report how much of it moved.
func (b *uringBackend) lendable(op *uringOp, data []byte, copyIn bool) (ring.Buf, int, int) {
	if buf, start, ok := b.memory.find(data); ok {
		return buf, start, start + len(data)
	}
	op.bounce = b.memory.allocPooled(len(data))
	buf, start, ok := b.memory.find(op.bounce)
	invariant.Assert(ok, "a bounce buffer comes from a pool")
	if copyIn {
		copy(op.bounce, data)
	}
	return buf, start, start + len(op.bounce)
}

// Submit hands the queued SQEs to the kernel without waiting; their
// completions are reaped by the next Wait.
func (b *uringBackend) Submit() error {
	if b.closed {
		return ErrClosed
	}
	_, err := b.ring.Submit()
	return err
}

func (b *uringBackend) Read(fd int, buf []byte, position int64, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	op := b.track(token, tokenFile, fd)
	lent, start, end := b.lendable(op, buf, false)
	if op.bounce != nil {
		op.target = buf
	}
	sqe := b.sqe()
	if b.fixable(lent) {
		sqe.PrepReadFixed(int32(fd), lent, start, end, uint64(position))
	} else {
		sqe.PrepRead(int32(fd), lent, start, end, uint64(position))
	}
	sqe.SetUserData(token)
	op.lent, op.hasLent = lent, true
	return nil
}

func (b *uringBackend) Write(fd int, buf []byte, position int64, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	op := b.track(token, tokenFile, fd)
	lent, start, end := b.lendable(op, buf, true)
	sqe := b.sqe()
	if b.fixable(lent) {
		sqe.PrepWriteFixed(int32(fd), lent, start, end, uint64(position))
	} else {
		sqe.PrepWrite(int32(fd), lent, start, end, uint64(position))
	}
	sqe.SetUserData(token)
	op.lent, op.hasLent = lent, true
	return nil
}

// WriteInPlace writes buf, memory outside the pools that the caller
// keeps mapped, without lending or bouncing it.
func (b *uringBackend) WriteInPlace(fd int, buf []byte, position int64, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	b.track(token, tokenFile, fd)
	bump(&b.stats.inPlaceFileOps, 1)
	sqe := b.sqe()
	sqe.PrepWriteOwned(int32(fd), buf, uint64(position))
	sqe.SetUserData(token)
	return nil
}

// fixable reports whether a file op on buf can name it as a fixed buffer,
// filling its slot on first use, and counts the op either way. A slot that
// cannot be filled (ENOMEM past RLIMIT_MEMLOCK without CAP_IPC_LOCK) makes
// a plain op, logged once.
func (b *uringBackend) fixable(buf ring.Buf) bool {
	if buf.Pool().Registered() {
		err := buf.Fix()
		if err == nil {
			bump(&b.stats.fixedFileOps, 1)
			return true
		}
		if !b.fixWarned && b.logger != nil {
			b.fixWarned = true
			b.logger.Warn("shard: io_uring fixed buffer unavailable, file I/O falls back to plain READ/WRITE", "cause", err.Error())
		}
	}
	bump(&b.stats.plainFileOps, 1)
	return false
}

func (b *uringBackend) Fdatasync(fd int, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	b.track(token, tokenFile, fd)
	sqe := b.sqe()
	sqe.PrepFsync(int32(fd), ring.FsyncDatasync)
	sqe.SetUserData(token)
	return nil
}

// Fallocate allocates fd's space up to size; the kernel runs it on its
// own worker, never on the shard's thread.
func (b *uringBackend) Fallocate(fd int, size int64, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	b.track(token, tokenFile, fd)
	sqe := b.sqe()
	sqe.PrepFallocate(int32(fd), 0, 0, uint64(size))
	sqe.SetUserData(token)
	return nil
}

func (b *uringBackend) Timeout(d time.Duration, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	b.track(token, tokenTimeout, -1).timeout = true
	sqe := b.sqe()
	b.ring.PrepTimeout(sqe, d, 0, 0)
	sqe.SetUserData(token)
	return nil
}

func (b *uringBackend) Cancel(fd int, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	op := b.ops.get(token)
	if op == nil || op.cancelled {
		return nil // already finished, or already being cancelled
	}
	op.cancelled = true
	b.prepCancel(token, op)
	return nil
}

// prepCancel asks the kernel to cancel the op; the cancel's own CQE
// carries an ID that names the target, so that a cancel which found
// nothing can be retried (see onCancelDone).
func (b *uringBackend) prepCancel(token uint64, op *uringOp) {
	b.cancelID++
	invariant.Assert(b.cancelID < 1<<(tokenKindShift-8), "cancel IDs fit below the internal marker")
	b.cancels[b.cancelID] = token
	sqe := b.sqe()
	if op.timeout {
		sqe.PrepTimeoutRemove(token)
	} else {
		sqe.PrepCancel(token, 0)
	}
	sqe.SetUserData(uringCancelData | b.cancelID<<8)
}

// onCancelDone handles a cancel's own CQE. ENOENT while the target is
// still in flight means the kernel could not find it at that instant: with
// deferred task work a multishot receive whose wake-up is queued as task
// work is in no cancel table until that work runs and re-arms it. Such a
// receive would post with CQE_F_MORE for ever and never end, so the cancel
// is sent again.
func (b *uringBackend) onCancelDone(cqe ring.CQE) {
	id := (cqe.UserData &^ uringInternal) >> 8
	token, ok := b.cancels[id]
	invariant.Assert(ok, "a cancel CQE names a cancel in flight")
	delete(b.cancels, id)
	op := b.ops.get(token)
	if cqe.Res == -int32(unix.ENOENT) && op != nil && op.cancelled && !b.closed {
		b.cancelRetries++
		b.prepCancel(token, op)
	}
}
