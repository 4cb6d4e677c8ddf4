package shard

import (
	"fmt"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// epollBackend is the portable Backend: level-triggered epoll and
// nonblocking syscalls on sockets, synchronous syscalls on files. Its
// completions match the io_uring backend's: sockets report readiness work
// as results, file ops complete at the next Wait.
type epollBackend struct {
	epfd     int
	eventFD  int // Notify writes it; its readiness wakes epoll_wait
	closed   bool
	fds      []epollFD // indexed by fd
	ready    []Completion
	sending  []int // fds with a send not yet tried since it was started
	events   []unix.EpollEvent
	arena    []byte // receive bytes of the current Wait
	arenaUse int
	timeouts []epollTimeout // ascending deadline
	buffers  pool
	iovecs   []unix.Iovec // writev's scratch, empty between calls
}

// epollFD is what the backend knows of one fd: its armed ops and the
// interest registered with epoll.
type epollFD struct {
	registered  bool
	interest    uint32
	accepting   bool
	receiving   bool
	sending     bool
	sendBlocked bool // the last write met EAGAIN: wait for EPOLLOUT
	acceptToken uint64
	recvToken   uint64
	sendToken   uint64
	sendData    []byte
	sendVec     [][]byte // SendVec's spans (writev), else nil
	recvInto    []byte   // the armed recv fills this, once, instead of the arena
	recvOnce    bool     // the armed recv ends after its first bytes
}

type epollTimeout struct {
	deadline time.Time
	token    uint64
}

// epollWakeData marks the eventfd's events; socket events carry their fd.
const epollWakeData = -1

func newEpollBackend() (Backend, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("shard: epoll_create1: %w", err)
	}
	eventFD, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		_ = unix.Close(epfd) // the eventfd error is the one to report
		return nil, fmt.Errorf("shard: eventfd: %w", err)
	}
	event := unix.EpollEvent{Events: unix.EPOLLIN, Fd: epollWakeData}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, eventFD, &event); err != nil {
		_ = unix.Close(epfd) // the registration error is the one to report
		_ = unix.Close(eventFD)
		return nil, fmt.Errorf("shard: epoll_ctl eventfd: %w", err)
	}
	return &epollBackend{
		epfd:    epfd,
		eventFD: eventFD,
		ready:   make([]Completion, 0, completionsPerTurnMax),
		events:  make([]unix.EpollEvent, completionsPerTurnMax),
		arena:   make([]byte, recvBufferCount*recvBufferBytes),
	}, nil
}

func (b *epollBackend) Name() string { return BackendEpoll }

func (b *epollBackend) Alloc(size int) []byte { return b.buffers.get(size) }

func (b *epollBackend) Free(buf []byte) { b.buffers.put(buf) }

func (b *epollBackend) Trim() { b.buffers = pool{} }

func (b *epollBackend) Direct([]byte) bool { return true }

func (b *epollBackend) slot(fd int) *epollFD {
	invariant.Assert(fd >= 0, "epoll fd is not negative")
	if fd >= len(b.fds) {
		b.fds = slices.Grow(b.fds, fd+1-len(b.fds))[:fd+1]
	}
	return &b.fds[fd]
}

func (b *epollBackend) Accept(listener int, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	state := b.slot(listener)
	invariant.Assert(!state.accepting, "one accept armed per listener")
	state.accepting, state.acceptToken = true, token
	return b.register(listener, state)
}

func (b *epollBackend) Recv(fd int, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	state := b.slot(fd)
	invariant.Assert(!state.receiving, "one recv armed per fd")
	state.receiving, state.recvToken, state.recvOnce = true, token, false
	return b.register(fd, state)
}

func (b *epollBackend) RecvOnce(fd int, token uint64) error {
	if err := b.Recv(fd, token); err != nil {
		return err
	}
	b.slot(fd).recvOnce = true
	return nil
}

func (b *epollBackend) RecvInto(fd int, buf []byte, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	invariant.Assert(len(buf) > 0, "a receive into a buffer has room")
	state := b.slot(fd)
	invariant.Assert(!state.receiving, "one recv armed per fd")
	state.receiving, state.recvToken, state.recvInto = true, token, buf
	return b.register(fd, state)
}

// RecvIntoOwned is RecvInto: read(2) writes buf in place already.
func (b *epollBackend) RecvIntoOwned(fd int, buf []byte, token uint64) error {
	return b.RecvInto(fd, buf, token)
}

func (b *epollBackend) Send(fd int, data []byte, token uint64) error {
	invariant.Assert(len(data) > 0, "send has bytes")
	return b.armSend(fd, token, data, nil)
}

// SendVec arms a writev of spans, tried like Send's write.
func (b *epollBackend) SendVec(fd int, spans [][]byte, token uint64) error {
	invariant.Assert(len(spans) > 0, "a vectored send has spans")
	invariant.Assert(len(spans) <= sendSpansMax, "a vectored send stays within sendSpansMax")
	return b.armSend(fd, token, nil, spans)
}

// armSend arms fd's one send, of data or else of the spans of vec; the
// loop tries it on its next pass (trySends).
func (b *epollBackend) armSend(fd int, token uint64, data []byte, vec [][]byte) error {
	if b.closed {
		return ErrClosed
	}
	state := b.slot(fd)
	invariant.Assert(!state.sending, "one send in flight per fd")
	state.sending, state.sendBlocked = true, false
	state.sendToken, state.sendData, state.sendVec = token, data, vec
	b.sending = append(b.sending, fd)
	return nil
}

func (b *epollBackend) Read(fd int, buf []byte, position int64, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	n, err := unix.Pread(fd, buf, position)
	b.complete(token, n, err)
	return nil
}

func (b *epollBackend) Write(fd int, buf []byte, position int64, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	n, err := unix.Pwrite(fd, buf, position)
	b.complete(token, n, err)
	return nil
}

// WriteInPlace is Write: pwrite(2) reads buf in place already.
func (b *epollBackend) WriteInPlace(fd int, buf []byte, position int64, token uint64) error {
	return b.Write(fd, buf, position, token)
}

func (b *epollBackend) Fdatasync(fd int, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	b.complete(token, 0, unix.Fdatasync(fd))
	return nil
}

func (b *epollBackend) Fallocate(fd int, size int64, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	b.complete(token, 0, unix.Fallocate(fd, 0, 0, size))
	return nil
}

func (b *epollBackend) Timeout(d time.Duration, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	entry := epollTimeout{deadline: time.Now().Add(d), token: token}
	at, _ := slices.BinarySearchFunc(b.timeouts, entry, func(a, b epollTimeout) int {
		return a.deadline.Compare(b.deadline)
	})
	b.timeouts = slices.Insert(b.timeouts, at, entry)
	return nil
}

func (b *epollBackend) Cancel(fd int, token uint64) error {
	if b.closed {
		return ErrClosed
	}
	for i, entry := range b.timeouts {
		if entry.token == token {
			b.timeouts = slices.Delete(b.timeouts, i, i+1)
			b.ready = append(b.ready, Completion{Token: token, Errno: unix.ECANCELED})
			return nil
		}
	}
	if fd < 0 || fd >= len(b.fds) {
		return nil
	}
	state := &b.fds[fd]
	switch {
	case state.accepting && state.acceptToken == token:
		state.accepting = false
	case state.receiving && state.recvToken == token:
		state.receiving, state.recvInto, state.recvOnce = false, nil, false
	case state.sending && state.sendToken == token:
		state.sending, state.sendData, state.sendVec = false, nil, nil
	default:
		return nil
	}
	b.ready = append(b.ready, Completion{Token: token, Errno: unix.ECANCELED})
	return b.register(fd, state)
}

// register makes epoll's interest in fd match its armed ops. No interest
// means no registration: epoll reports hang-ups even without interest.
func (b *epollBackend) register(fd int, state *epollFD) error {
	var interest uint32
	if state.accepting || state.receiving {
		interest |= unix.EPOLLIN | unix.EPOLLRDHUP
	}
	if state.sending && state.sendBlocked {
		interest |= unix.EPOLLOUT
	}
	if interest == state.interest && state.registered == (interest != 0) {
		return nil
	}
	state.interest = interest
	event := unix.EpollEvent{Events: interest, Fd: int32(fd)}
	if interest == 0 {
		state.registered = false
		err := unix.EpollCtl(b.epfd, unix.EPOLL_CTL_DEL, fd, nil)
		if err == unix.ENOENT || err == unix.EBADF {
			return nil // the fd was closed, which removed it
		}
		return wrapErrno("epoll_ctl del", err)
	}
	if state.registered {
		err := unix.EpollCtl(b.epfd, unix.EPOLL_CTL_MOD, fd, &event)
		if err != unix.ENOENT {
			return wrapErrno("epoll_ctl mod", err)
		}
	}
	state.registered = true
	return wrapErrno("epoll_ctl add", unix.EpollCtl(b.epfd, unix.EPOLL_CTL_ADD, fd, &event))
}

func wrapErrno(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("shard: %s: %w", what, err)
}

// complete queues a completion for a synchronous op.
func (b *epollBackend) complete(token uint64, n int, err error) {
	completion := Completion{Token: token, Result: n}
	if err != nil {
		completion.Result = 0
		completion.Errno = errnoOf(err)
	}
	b.ready = append(b.ready, completion)
}

func errnoOf(err error) unix.Errno {
	errno, ok := err.(unix.Errno)
	invariant.Assert(ok, "syscall errors are errnos")
	return errno
}
