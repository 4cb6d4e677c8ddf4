package shard

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// uringVec is one SENDMSG's message header and iovec array, which the
// kernel reads at submit (and an async retry reads its copy of): the
// backend keeps it, reachable from its op, until the CQE, then reuses it.
type uringVec struct {
	header unix.Msghdr
	iovecs []unix.Iovec
}

// SendVec sends spans with one SENDMSG; the kernel reads each span in
// place (no bounce), so the caller keeps them unchanged and mapped, and
// reachable, until the CQE.
func (b *uringBackend) SendVec(fd int, spans [][]byte, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	invariant.Assert(len(spans) > 0, "a vectored send has spans")
	invariant.Assert(len(spans) <= sendSpansMax, "a vectored send stays within sendSpansMax")
	op := b.track(token, tokenSend, fd)
	op.vec = b.takeVec()
	op.vec.iovecs = appendIovecs(op.vec.iovecs, spans)
	op.vec.header = unix.Msghdr{Iov: unsafe.SliceData(op.vec.iovecs)}
	op.vec.header.SetIovlen(len(op.vec.iovecs))
	sqe := b.sqe()
	sqe.PrepSendmsgOwned(int32(fd), &op.vec.header, unix.MSG_NOSIGNAL)
	sqe.SetUserData(token)
	return nil
}

// takeVec returns an empty message from the backend's free list.
func (b *uringBackend) takeVec() *uringVec {
	if last := len(b.vecsFree) - 1; last >= 0 {
		vec := b.vecsFree[last]
		b.vecsFree = b.vecsFree[:last]
		return vec
	}
	return &uringVec{iovecs: make([]unix.Iovec, 0, sendSpansMax)}
}

// putVec takes back the message of a completed SENDMSG.
func (b *uringBackend) putVec(vec *uringVec) {
	clear(vec.iovecs) // drop the pointers into the spans
	vec.iovecs = vec.iovecs[:0]
	vec.header = unix.Msghdr{}
	b.vecsFree = append(b.vecsFree, vec)
}
