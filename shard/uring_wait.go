package shard

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/ring"
)

// Wait recycles the receive buffers the last Wait handed out, submits
// everything queued, waits (entering the kernel also runs the deferred
// completions; a Wait that need not block enters only when there is
// something to submit or collect), and translates the CQEs.
func (b *uringBackend) Wait(out []Completion, timeout time.Duration) (int, error) {
	if b.closed {
		return 0, ErrClosed
	}
	invariant.Assert(len(out) > 0, "wait has room for a completion")
	for _, id := range b.recycle {
		b.recvRing.Recycle(id)
	}
	b.recycle = b.recycle[:0]
	var err error
	if timeout != 0 && b.ring.CQReady() == 0 {
		_, err = b.ring.SubmitAndWait(1, max(timeout, 0))
	} else {
		// Submit enters the kernel only when SQEs are queued or it holds
		// completions back: a spinning or busy loop polls the CQ for free.
		_, err = b.ring.Submit()
	}
	if err != nil && !errors.Is(err, ring.ErrTimeout) {
		return 0, err
	}
	reaped := b.ring.ReapInto(b.cqes[:len(out)])
	count := 0
	for _, cqe := range b.cqes[:reaped] {
		if b.translate(cqe, &out[count]) {
			count++
		}
	}
	return count, nil
}

// translate turns one CQE into the caller's completion; it returns false
// for CQEs the backend consumes itself (wakes, cancels, re-armed
// multishots that ran dry).
func (b *uringBackend) translate(cqe ring.CQE, out *Completion) bool {
	if cqe.UserData&uringInternal == uringInternal {
		if cqe.UserData&0xff == uringCancelData&0xff {
			b.onCancelDone(cqe)
		}
		if cqe.UserData == uringEventFDData {
			b.eventPool.Reclaim(b.eventBuf)
			b.eventArmed = false
			if !b.closed {
				b.armEventFD()
			}
		}
		return false
	}
	op := b.ops.get(cqe.UserData)
	invariant.Assert(op != nil, "a CQE names an op in flight")
	*out = Completion{Token: cqe.UserData, Result: max(int(cqe.Res), 0)}
	if cqe.Res < 0 {
		out.Errno = unix.Errno(-cqe.Res)
	}
	switch op.kind {
	case tokenRecv:
		return b.translateRecv(cqe, op, out)
	case tokenAccept:
		return b.translateAccept(cqe, op, out)
	}
	if op.hasLent {
		op.lent.Pool().Reclaim(op.lent)
	}
	if op.target != nil && cqe.Res > 0 {
		copy(op.target, op.bounce[:cqe.Res])
	}
	if op.bounce != nil {
		b.memory.free(op.bounce)
	}
	if op.vec != nil {
		b.putVec(op.vec)
	}
	b.untrack(cqe.UserData, op)
	return true
}

func (b *uringBackend) translateRecv(cqe ring.CQE, op *uringOp, out *Completion) bool {
	if cqe.Flags&ring.CQEFlagBuffer != 0 {
		id, data := b.recvRing.Take(cqe)
		b.recycle = append(b.recycle, id)
		out.Data = data
	}
	out.More = cqe.More()
	if out.More {
		return true
	}
	// The receive ended. Unless it failed for good (or was cancelled), the
	// caller still wants bytes: re-arm, and report what came as more; a
	// RecvOnce that brought bytes is over.
	rearm := !op.cancelled && (cqe.Res > 0 && !op.once || out.Errno == unix.ENOBUFS)
	if rearm {
		b.recvRearms++
		b.armRecv(op, cqe.UserData)
		out.More = true
		return cqe.Res > 0
	}
	if out.Errno == unix.ENOBUFS {
		out.Errno = unix.ECANCELED // cancelled while the ring ran dry
	}
	b.untrack(cqe.UserData, op)
	return true
}

func (b *uringBackend) translateAccept(cqe ring.CQE, op *uringOp, out *Completion) bool {
	out.More = cqe.More()
	if out.More {
		return true
	}
	if cqe.Res >= 0 && !op.cancelled {
		b.armAccept(op.fd, cqe.UserData)
		out.More = true
		return true
	}
	b.untrack(cqe.UserData, op)
	return true
}

func (b *uringBackend) armEventFD() {
	invariant.Assert(!b.eventArmed, "one eventfd read armed")
	sqe := b.sqe()
	sqe.PrepRead(int32(b.eventFD), b.eventBuf, 0, 8, ^uint64(0))
	sqe.SetUserData(uringEventFDData)
	b.eventArmed = true
}

// Wake posts a CQE straight into a peer ring (MSG_RING), which wakes it
// from its wait without a syscall on its side; without MSG_RING, or for a
// peer on another backend, it writes the peer's eventfd.
func (b *uringBackend) Wake(target Backend) error {
	peer, ok := target.(*uringBackend)
	if !ok || !b.features.MsgRing {
		return target.Notify()
	}
	sqe := b.sqe()
	sqe.PrepMsgRing(int32(peer.ring.FD()), 0, uringWakeData)
	sqe.SetUserData(uringSentData)
	_, err := b.ring.Submit() // a wake waits for no loop turn
	return err
}

// Notify writes the eventfd the ring keeps a read armed on; any thread.
func (b *uringBackend) Notify() error { return notifyEventFD(b.eventFD) }

func (b *uringBackend) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	var first error
	if b.recvRing != nil {
		first = b.recvRing.Close()
	}
	if err := b.ring.Close(); err != nil && first == nil {
		first = err
	}
	// The ring is gone: no op holds a buffer any more.
	b.ops.each(func(op *uringOp) {
		if op.hasLent {
			op.lent.Pool().Reclaim(op.lent)
		}
	})
	if b.eventPool != nil {
		if b.eventArmed {
			b.eventPool.Reclaim(b.eventBuf)
		}
		b.eventPool.Release(b.eventBuf)
		b.eventPool.Close()
	}
	b.memory.close()
	if b.eventFD >= 0 {
		if err := unix.Close(b.eventFD); err != nil && first == nil {
			first = err
		}
	}
	return first
}
