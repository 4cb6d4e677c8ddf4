package shard

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/ring"
)

// uringVec is one SENDMSG's message header and iovec array, which the
// kernel reads at submit (and an async retry reads its copy of): the
// backend keeps it, reachable from its op, until the CQE, then reuses it.
type uringVec struct {
	header unix.Msghdr
	iovecs []unix.Iovec
}

// sqeHead mirrors the leading fields of struct io_uring_sqe, the kernel's
// ABI that ring.SQE is laid out as. ring prepares SENDMSG only over its
// own pools' buffers (ring.Vec lends each one, at most once per Vec); a
// poll reply's spans lie in the engine cache's arena, which no ring pool
// owns, and several may lie in one region, so the backend fills the entry
// itself.
type sqeHead struct {
	opcode   uint8
	flags    uint8
	ioprio   uint16
	fd       int32
	off      uint64
	addr     uint64
	len      uint32
	msgFlags uint32
}

// The entry is 64 bytes and the mirrored fields lie at the kernel's
// offsets: opcode 0, fd 4, addr 16, len 24, msg_flags 28.
var _ = [1]struct{}{}[unsafe.Sizeof(ring.SQE{})-64]
var _ = [1]struct{}{}[unsafe.Offsetof(sqeHead{}.addr)-16]
var _ = [1]struct{}{}[unsafe.Offsetof(sqeHead{}.msgFlags)-28]

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
	for _, span := range spans {
		invariant.Assert(len(span) > 0, "a span has bytes")
		iovec := unix.Iovec{Base: unsafe.SliceData(span)}
		iovec.SetLen(len(span))
		op.vec.iovecs = append(op.vec.iovecs, iovec)
	}
	op.vec.header = unix.Msghdr{Iov: unsafe.SliceData(op.vec.iovecs)}
	op.vec.header.SetIovlen(len(op.vec.iovecs))
	sqe := b.sqe()
	head := (*sqeHead)(unsafe.Pointer(sqe))
	head.opcode = uint8(ring.OpSendmsg)
	head.fd = int32(fd)
	head.addr = uint64(uintptr(unsafe.Pointer(&op.vec.header)))
	head.len = 1
	head.msgFlags = unix.MSG_NOSIGNAL
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
