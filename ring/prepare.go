package ring

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// Prep methods fill an SQE taken from Ring.SQE (which zeroes it). Each names
// its liburing counterpart. Ops that take a Buf or Vec lend its buffers to
// the kernel until the caller reclaims them after the final CQE.

// SetUserData sets the value the CQE carries back (see UserData).
// liburing: io_uring_sqe_set_data64.
func (s *SQE) SetUserData(userData uint64) { s.userData = userData }

// SetFlags adds SQE flags (FlagIOLink, FlagFixedFile, …).
// liburing: io_uring_sqe_set_flags.
func (s *SQE) SetFlags(flags uint8) { s.flags |= flags }

// Link makes the next SQE start only after this one succeeds (IOSQE_IO_LINK).
// liburing: io_uring_sqe_set_flags(sqe, IOSQE_IO_LINK).
func (s *SQE) Link() { s.flags |= FlagIOLink }

// Opcode is the operation the SQE was prepared for.
func (s *SQE) Opcode() Op { return Op(s.opcode) }

// prepRW fills the fields every read/write-shaped op shares.
// liburing: io_uring_prep_rw.
func (s *SQE) prepRW(op Op, fd int32, address uint64, length uint32, offset uint64) {
	s.opcode = uint8(op)
	s.fd = fd
	s.addr = address
	s.len = length
	s.off = offset
}

// PrepNop prepares a no-op. liburing: io_uring_prep_nop.
func (s *SQE) PrepNop() { s.prepRW(OpNop, -1, 0, 0, 0) }

// PrepRead reads into [start, end) of b from position of fd (^uint64(0):
// the current file position, for pipes and sockets). liburing:
// io_uring_prep_read.
func (s *SQE) PrepRead(fd int32, b Buf, start, end int, position uint64) {
	s.prepRW(OpRead, fd, b.pool.lend(b, start, end), uint32(end-start), position)
}

// PrepWrite writes [start, end) of b at position of fd. liburing:
// io_uring_prep_write.
func (s *SQE) PrepWrite(fd int32, b Buf, start, end int, position uint64) {
	s.prepRW(OpWrite, fd, b.pool.lend(b, start, end), uint32(end-start), position)
}

// PrepWriteOwned writes data at position of fd, memory the caller owns
// outside any pool (e.g. an mmap region): the kernel reads it in place,
// so the caller keeps it unchanged and mapped until the CQE. liburing:
// io_uring_prep_write.
func (s *SQE) PrepWriteOwned(fd int32, data []byte, position uint64) {
	invariant.Assert(len(data) > 0, "an owned write has bytes")
	s.prepRW(OpWrite, fd, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(data)))), uint32(len(data)), position)
}

// PrepReadFixed reads into [start, end) of b, whose pool is registered with
// the ring. liburing: io_uring_prep_read_fixed.
func (s *SQE) PrepReadFixed(fd int32, b Buf, start, end int, position uint64) {
	invariant.Assert(b.Fixed(), "READ_FIXED from a buffer not in the fixed table")
	s.prepRW(OpReadFixed, fd, b.pool.lend(b, start, end), uint32(end-start), position)
	s.bufIndex = uint16(b.FixedIndex())
}

// PrepWriteFixed writes [start, end) of b, whose pool is registered with the
// ring. liburing: io_uring_prep_write_fixed.
func (s *SQE) PrepWriteFixed(fd int32, b Buf, start, end int, position uint64) {
	invariant.Assert(b.Fixed(), "WRITE_FIXED from a buffer not in the fixed table")
	s.prepRW(OpWriteFixed, fd, b.pool.lend(b, start, end), uint32(end-start), position)
	s.bufIndex = uint16(b.FixedIndex())
}

// PrepReadv reads into the spans of v. liburing: io_uring_prep_readv.
func (s *SQE) PrepReadv(fd int32, v *Vec, position uint64) {
	s.prepRW(OpReadv, fd, v.lend(), uint32(v.Len()), position)
}

// PrepWritev writes the spans of v. liburing: io_uring_prep_writev.
func (s *SQE) PrepWritev(fd int32, v *Vec, position uint64) {
	s.prepRW(OpWritev, fd, v.lend(), uint32(v.Len()), position)
}

// PrepFsync flushes fd; flags FsyncDatasync gives fdatasync(2).
// liburing: io_uring_prep_fsync.
func (s *SQE) PrepFsync(fd int32, flags uint32) {
	s.prepRW(OpFsync, fd, 0, 0, 0)
	s.opFlags = flags
}

// PrepFallocate allocates fd's space [offset, offset+length) with
// fallocate(2) mode flags (0: allocate, growing the file's size).
// liburing: io_uring_prep_fallocate.
func (s *SQE) PrepFallocate(fd int32, mode uint32, offset, length uint64) {
	s.prepRW(OpFallocate, fd, length, mode, offset)
}

// PrepSend sends [start, end) of b. liburing: io_uring_prep_send.
func (s *SQE) PrepSend(fd int32, b Buf, start, end int, msgFlags int) {
	s.prepRW(OpSend, fd, b.pool.lend(b, start, end), uint32(end-start), 0)
	s.opFlags = uint32(msgFlags)
}

// PrepSendZC sends [start, end) of b without copying it. The first CQE
// carries the byte count; when it has CQEFlagMore, the buffer stays lent
// until a second CQE with CQEFlagNotif. liburing: io_uring_prep_send_zc.
func (s *SQE) PrepSendZC(fd int32, b Buf, start, end int, msgFlags int, zcFlags uint16) {
	s.prepRW(OpSendZC, fd, b.pool.lend(b, start, end), uint32(end-start), 0)
	s.opFlags = uint32(msgFlags)
	s.ioprio = zcFlags
}

// PrepSendmsg sends the spans of v as one message. liburing:
// io_uring_prep_sendmsg.
func (s *SQE) PrepSendmsg(fd int32, v *Vec, msgFlags int) {
	v.lend()
	v.header = unix.Msghdr{Iov: &v.iovecs[0]}
	v.header.SetIovlen(v.Len())
	s.PrepSendmsgOwned(fd, &v.header, msgFlags)
}

// PrepSendmsgOwned sends message, whose iovecs point into memory the
// caller owns outside any pool (e.g. an mmap region): the kernel reads
// the header and every span in place, so the caller keeps all of them
// unchanged, mapped and reachable until the CQE. liburing:
// io_uring_prep_sendmsg.
func (s *SQE) PrepSendmsgOwned(fd int32, message *unix.Msghdr, msgFlags int) {
	s.prepRW(OpSendmsg, fd, uint64(uintptr(unsafe.Pointer(message))), 1, 0)
	s.opFlags = uint32(msgFlags)
}

// PrepRecv receives into [start, end) of b. liburing: io_uring_prep_recv.
func (s *SQE) PrepRecv(fd int32, b Buf, start, end int, msgFlags int) {
	s.prepRW(OpRecv, fd, b.pool.lend(b, start, end), uint32(end-start), 0)
	s.opFlags = uint32(msgFlags)
}

// PrepRecvOwned receives into buf, memory the caller owns outside any
// pool (e.g. an mmap region): the kernel writes it in place, so the
// caller keeps it mapped and untouched until the CQE. liburing:
// io_uring_prep_recv.
func (s *SQE) PrepRecvOwned(fd int32, buf []byte, msgFlags int) {
	invariant.Assert(len(buf) > 0, "an owned receive has room")
	s.prepRW(OpRecv, fd, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))), uint32(len(buf)), 0)
	s.opFlags = uint32(msgFlags)
}

// PrepRecvSelect receives once into a buffer the kernel picks from br.
// liburing: io_uring_prep_recv with IOSQE_BUFFER_SELECT.
func (s *SQE) PrepRecvSelect(fd int32, br *BufRing, msgFlags int) {
	s.prepRW(OpRecv, fd, 0, 0, 0)
	s.opFlags = uint32(msgFlags)
	s.flags |= FlagBufferSelect
	s.bufIndex = br.group
}

// PrepRecvMultishot receives repeatedly into buffers the kernel picks from
// br: one CQE per receive, each with CQEFlagMore while the SQE stays armed.
// It ends with a CQE without CQEFlagMore (EOF, error, ENOBUFS when br ran
// dry, or cancellation). liburing: io_uring_prep_recv_multishot.
func (s *SQE) PrepRecvMultishot(fd int32, br *BufRing, msgFlags int) {
	s.PrepRecvSelect(fd, br, msgFlags)
	s.ioprio |= recvMultishot
}

// PrepAccept accepts one connection; flags are accept4(2) flags
// (unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC). The peer address is not returned.
// liburing: io_uring_prep_accept.
func (s *SQE) PrepAccept(fd int32, flags int) {
	s.prepRW(OpAccept, fd, 0, 0, 0)
	s.opFlags = uint32(flags)
}

// PrepAcceptMultishot accepts connections until cancelled, one CQE each
// (with CQEFlagMore while armed). liburing: io_uring_prep_multishot_accept.
func (s *SQE) PrepAcceptMultishot(fd int32, flags int) {
	s.PrepAccept(fd, flags)
	s.ioprio |= acceptMultishot
}

// PrepOpenat opens path relative to dirfd (unix.AT_FDCWD). The ring keeps
// path reachable until the SQE is submitted. liburing: io_uring_prep_openat.
func (r *Ring) PrepOpenat(s *SQE, dirfd int32, path *Path, flags int, mode uint32) {
	invariant.Assert(len(path.bytes) > 0, "empty path")
	invariant.Assert(path.bytes[len(path.bytes)-1] == 0, "path not NUL-terminated")
	r.auxFor(s).path = path
	s.prepRW(OpOpenat, dirfd, uint64(uintptr(unsafe.Pointer(&path.bytes[0]))), mode, 0)
	s.opFlags = uint32(flags)
}

// PrepConnect connects socket fd to address. The ring keeps address
// reachable until submit; keep it until the CQE. liburing:
// io_uring_prep_connect.
func (r *Ring) PrepConnect(s *SQE, fd int32, address *Sockaddr) {
	invariant.Assert(address.length > 0, "empty socket address")
	invariant.Assert(address.length <= uint32(unsafe.Sizeof(address.raw)), "socket address too long")
	r.auxFor(s).sockaddr = address
	s.prepRW(OpConnect, fd, uint64(uintptr(unsafe.Pointer(&address.raw))), 0, uint64(address.length))
}

// PrepShutdown shuts down part of a socket (unix.SHUT_WR…).
// liburing: io_uring_prep_shutdown.
func (s *SQE) PrepShutdown(fd int32, how int) { s.prepRW(OpShutdown, fd, 0, uint32(how), 0) }

// PrepPollAdd completes when fd reports one of events (unix.POLLIN…); res
// is the ready mask. liburing: io_uring_prep_poll_add.
func (s *SQE) PrepPollAdd(fd int32, events uint32) {
	s.prepRW(OpPollAdd, fd, 0, 0, 0)
	s.opFlags = events
}

// PrepPollMultishot reports readiness of fd repeatedly, one CQE per edge,
// each with CQEFlagMore while armed. liburing: io_uring_prep_poll_multishot.
func (s *SQE) PrepPollMultishot(fd int32, events uint32) {
	s.PrepPollAdd(fd, events)
	s.len = pollAddMulti
}

// PrepClose closes fd. liburing: io_uring_prep_close.
func (s *SQE) PrepClose(fd int32) { s.prepRW(OpClose, fd, 0, 0, 0) }

// PrepCloseFixed closes registered file slot index.
// liburing: io_uring_prep_close_direct.
func (s *SQE) PrepCloseFixed(index uint32) {
	s.prepRW(OpClose, 0, 0, 0, 0)
	s.fileIndex = index + 1
}

// PrepTimeout completes after duration, or once count other CQEs were posted
// when count > 0 (res 0 instead of -ETIME). The ring keeps the timespec
// until submit. liburing: io_uring_prep_timeout.
func (r *Ring) PrepTimeout(s *SQE, duration time.Duration, count uint32, flags uint32) {
	invariant.Assert(duration >= 0, "negative timeout")
	aux := r.auxFor(s)
	aux.timespec = unix.NsecToTimespec(int64(duration))
	s.prepRW(OpTimeout, -1, uint64(uintptr(unsafe.Pointer(&aux.timespec))), 1, uint64(count))
	s.opFlags = flags
}

// PrepLinkTimeout bounds the SQE linked before it (which must carry
// FlagIOLink): if that op has not completed after duration it is cancelled
// (ECANCELED) and this SQE completes with ETIME. liburing:
// io_uring_prep_link_timeout.
func (r *Ring) PrepLinkTimeout(s *SQE, duration time.Duration, flags uint32) {
	invariant.Assert(duration > 0, "link timeout not positive")
	aux := r.auxFor(s)
	aux.timespec = unix.NsecToTimespec(int64(duration))
	s.prepRW(OpLinkTimeout, -1, uint64(uintptr(unsafe.Pointer(&aux.timespec))), 1, 0)
	s.opFlags = flags
}

// PrepTimeoutRemove cancels the TIMEOUT whose user_data is target.
// liburing: io_uring_prep_timeout_remove.
func (s *SQE) PrepTimeoutRemove(target uint64) {
	s.prepRW(OpTimeoutRemove, -1, target, 0, 0)
}

// PrepCancel cancels the operation whose user_data is target; flags CancelAll
// cancels every match. The cancelled op completes with -ECANCELED.
// liburing: io_uring_prep_cancel64.
func (s *SQE) PrepCancel(target uint64, flags uint32) {
	s.prepRW(OpAsyncCancel, -1, target, 0, 0)
	s.opFlags = flags
}

// PrepCancelFD cancels operations on fd (CancelFD is added; add CancelAll
// to cancel every one). liburing: io_uring_prep_cancel_fd.
func (s *SQE) PrepCancelFD(fd int32, flags uint32) {
	s.prepRW(OpAsyncCancel, fd, 0, 0, 0)
	s.opFlags = flags | CancelFD
}

// PrepMsgRing posts a CQE with res and userData on the ring whose fd is
// targetFD, waking it if it waits. liburing: io_uring_prep_msg_ring.
func (s *SQE) PrepMsgRing(targetFD int32, res uint32, userData uint64) {
	s.prepRW(OpMsgRing, targetFD, msgRingData, res, userData)
}
