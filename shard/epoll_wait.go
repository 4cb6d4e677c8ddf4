package shard

import (
	"slices"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

func (b *epollBackend) Wait(out []Completion, timeout time.Duration) (int, error) {
	if b.closed {
		return 0, ErrClosed
	}
	invariant.Assert(len(out) > 0, "wait has room for a completion")
	b.arenaUse = 0
	count := b.takeReady(out)
	count += b.trySends(out[count:])
	count += b.expireTimeouts(out[count:], time.Now())
	if count > 0 {
		timeout = 0
	}
	timeout = b.boundByTimeouts(timeout)
	events := b.events[:min(len(b.events), len(out)-count)]
	if len(events) == 0 {
		return count, nil
	}
	n, err := unix.EpollWait(b.epfd, events, waitMillis(timeout))
	if err == unix.EINTR {
		return count, nil
	}
	if err != nil {
		return count, wrapErrno("epoll_wait", err)
	}
	for _, event := range events[:n] {
		if count == len(out) {
			break // level-triggered: the rest is reported again next time
		}
		if event.Fd == epollWakeData {
			b.drainEventFD()
			continue
		}
		count += b.onEvent(int(event.Fd), event.Events, out[count:])
	}
	count += b.expireTimeouts(out[count:], time.Now())
	return count, nil
}

// waitMillis rounds a wait up to whole milliseconds so a short timer never
// turns into a busy poll.
func waitMillis(timeout time.Duration) int {
	if timeout < 0 {
		return -1
	}
	return int((timeout + time.Millisecond - 1) / time.Millisecond)
}

func (b *epollBackend) boundByTimeouts(timeout time.Duration) time.Duration {
	if len(b.timeouts) == 0 {
		return timeout
	}
	until := max(time.Until(b.timeouts[0].deadline), 0)
	if timeout < 0 || until < timeout {
		return until
	}
	return timeout
}

func (b *epollBackend) takeReady(out []Completion) int {
	n := copy(out, b.ready)
	remaining := copy(b.ready, b.ready[n:])
	b.ready = b.ready[:remaining]
	return n
}

// trySends makes the first write attempt of sends started since the last
// Wait; a send that meets EAGAIN waits for EPOLLOUT.
func (b *epollBackend) trySends(out []Completion) int {
	count, kept := 0, 0
	for _, fd := range b.sending {
		state := &b.fds[fd]
		if !state.sending || state.sendBlocked {
			continue // cancelled, or already waiting for EPOLLOUT
		}
		if count == len(out) {
			b.sending[kept] = fd
			kept++
			continue
		}
		count += b.write(fd, state, out[count:])
	}
	b.sending = b.sending[:kept]
	return count
}

// write attempts a nonblocking write of the armed send and reports the
// number of completions it produced (0 when the socket is full).
func (b *epollBackend) write(fd int, state *epollFD, out []Completion) int {
	invariant.Assert(state.sending, "write has an armed send")
	var n int
	var err error
	if state.sendVec != nil {
		n, err = b.writev(fd, state.sendVec)
	} else {
		n, err = unix.Write(fd, state.sendData)
	}
	if err == unix.EAGAIN {
		state.sendBlocked = true
		_ = b.register(fd, state) // a failed registration shows up as a stuck send only if the fd is gone, and its close cancels it
		return 0
	}
	out[0] = Completion{Token: state.sendToken, Result: max(n, 0)}
	if err != nil {
		out[0].Errno = errnoOf(err)
	}
	state.sending, state.sendBlocked, state.sendData, state.sendVec = false, false, nil, nil
	_ = b.register(fd, state) // dropping EPOLLOUT interest cannot fail for an open fd
	return 1
}

// writev writes spans with one writev through the backend's iovec
// scratch: unix.Writev allocates its iovecs past eight spans, and a poll
// reply's send has up to sendSpansMax.
func (b *epollBackend) writev(fd int, spans [][]byte) (int, error) {
	b.iovecs = appendIovecs(b.iovecs, spans)
	n, _, errno := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b.iovecs))),
		uintptr(len(b.iovecs)))
	clear(b.iovecs) // drop the pointers into the spans
	b.iovecs = b.iovecs[:0]
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func (b *epollBackend) onEvent(fd int, events uint32, out []Completion) int {
	state := &b.fds[fd]
	count := 0
	if events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 && state.sending && state.sendBlocked {
		count += b.write(fd, state, out)
	}
	if count < len(out) && state.accepting {
		count += b.accept(fd, state, out[count:])
	}
	if count < len(out) && state.receiving {
		if state.recvInto != nil {
			count += b.readInto(fd, state, out[count:])
		} else {
			count += b.read(fd, state, out[count:])
		}
	}
	return count
}

func (b *epollBackend) accept(listener int, state *epollFD, out []Completion) int {
	count := 0
	for count < len(out) {
		fd, _, err := unix.Accept4(listener, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err == unix.EAGAIN || err == unix.EINTR || err == unix.ECONNABORTED {
			return count
		}
		out[count] = Completion{Token: state.acceptToken, Result: fd, More: true}
		if err != nil {
			out[count].Result, out[count].Errno, out[count].More = 0, errnoOf(err), false
			state.accepting = false
			_ = b.register(listener, state) // the final completion already reports the failure
			return count + 1
		}
		count++
	}
	return count
}

// read receives into the arena while reads fill their whole buffer (more
// is likely waiting) and out and the arena have room; what it leaves
// unread keeps the fd readable, so the next Wait reports it again.
func (b *epollBackend) read(fd int, state *epollFD, out []Completion) int {
	count := 0
	for count < len(out) && len(b.arena)-b.arenaUse >= recvBufferBytes {
		buf := b.arena[b.arenaUse : b.arenaUse+recvBufferBytes]
		n, err := unix.Read(fd, buf)
		if err == unix.EAGAIN || err == unix.EINTR {
			return count
		}
		completion := &out[count]
		*completion = Completion{Token: state.recvToken, Result: max(n, 0), More: err == nil && n > 0 && !state.recvOnce}
		count++
		if err != nil {
			completion.Errno = errnoOf(err)
		}
		if n > 0 && err == nil {
			completion.Data = buf[:n]
			b.arenaUse += n
		}
		if !completion.More {
			state.receiving, state.recvOnce = false, false
			_ = b.register(fd, state) // the final completion ends the recv either way
			return count
		}
		if n < len(buf) {
			return count
		}
	}
	return count
}

// readInto fills the armed RecvInto's buffer with what the socket holds,
// and completes it unless nothing was there yet.
func (b *epollBackend) readInto(fd int, state *epollFD, out []Completion) int {
	filled := 0
	var err error
	for filled < len(state.recvInto) {
		var n int
		n, err = unix.Read(fd, state.recvInto[filled:])
		if err != nil || n == 0 {
			break
		}
		filled += n
	}
	if filled == 0 && (err == unix.EAGAIN || err == unix.EINTR) {
		return 0
	}
	out[0] = Completion{Token: state.recvToken, Result: filled}
	if filled == 0 && err != nil {
		out[0].Errno = errnoOf(err)
	}
	state.receiving, state.recvInto = false, nil
	_ = b.register(fd, state) // the completion ends the recv either way
	return 1
}

func (b *epollBackend) expireTimeouts(out []Completion, now time.Time) int {
	count := 0
	for count < len(out) && len(b.timeouts) > 0 && !b.timeouts[0].deadline.After(now) {
		out[count] = Completion{Token: b.timeouts[0].token, Errno: unix.ETIME}
		b.timeouts = slices.Delete(b.timeouts, 0, 1)
		count++
	}
	return count
}

func (b *epollBackend) drainEventFD() {
	var counter [8]byte
	_, _ = unix.Read(b.eventFD, counter[:]) // EAGAIN means another drain got there first
}

func (b *epollBackend) Wake(target Backend) error {
	return target.Notify()
}

func (b *epollBackend) Notify() error {
	return notifyEventFD(b.eventFD)
}

// notifyEventFD adds one to an eventfd counter; EAGAIN (counter saturated)
// still leaves it readable, which is all a wake needs.
func notifyEventFD(fd int) error {
	one := [8]byte{1}
	_, err := unix.Write(fd, one[:])
	if err == unix.EAGAIN {
		return nil
	}
	return wrapErrno("eventfd write", err)
}

func (b *epollBackend) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	errEpoll := unix.Close(b.epfd)
	errEvent := unix.Close(b.eventFD)
	if errEpoll != nil {
		return wrapErrno("close epoll", errEpoll)
	}
	return wrapErrno("close eventfd", errEvent)
}
