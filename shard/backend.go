package shard

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// Backend is the completion-based (proactor) I/O interface a shard drives.
// The shard declares it; the io_uring and epoll implementations behave
// alike, and one test suite runs on both.
//
// Ownership and threading: a Backend belongs to one shard. Every method but
// Notify is called only on that shard's locked thread. Starting an op queues
// it; queued ops reach the kernel at the next Wait (one batched submit per
// loop turn). Each op ends with exactly one Completion carrying its token,
// except Accept and Recv, which stay armed (Completion.More) until an error,
// end of stream or Cancel ends them with a final Completion. A slice passed
// to an op belongs to the backend until that op's final Completion: the
// caller must neither change nor reuse it before then, and must keep it
// reachable (the backend also keeps a reference).
//
// Errors: starting an op fails only on a programming error or when the
// backend is closed; I/O errors arrive in Completion.Errno.
type Backend interface {
	// Name is "io_uring" or "epoll".
	Name() string
	// Accept arms a multishot accept on a listening socket; each accepted
	// connection arrives as a Completion whose Result is the new fd.
	Accept(listener int, token uint64) error
	// Recv arms a multishot receive: each Completion carries bytes in Data
	// (valid until the next Wait), Result 0 with no Errno means the peer
	// closed its side (final).
	Recv(fd int, token uint64) error
	// RecvOnce is Recv ended by its first Completion with bytes (More
	// false): a connection that expects a large frame reads its head this
	// way, then receives the rest straight into the frame (RecvInto)
	// without cancelling a multishot receive that would copy it instead.
	RecvOnce(fd int, token uint64) error
	// RecvInto receives into a prefix of buf with one completion whose
	// Result is the byte count, 0 when the peer closed (io_uring waits
	// until buf is full; epoll returns what the socket held). Only one of
	// Recv and RecvInto is armed on an fd at a time.
	RecvInto(fd int, buf []byte, token uint64) error
	// RecvIntoOwned is RecvInto into memory outside the backend's pools
	// that the caller keeps mapped, and leaves alone, until the
	// completion: the kernel writes it in place, never through a bounce.
	RecvIntoOwned(fd int, buf []byte, token uint64) error
	// Send writes a prefix of data; Result is how much was written, which
	// may be less than len(data) (the caller sends the rest).
	Send(fd int, data []byte, token uint64) error
	// SendVec writes a prefix of the concatenation of spans (at most
	// sendSpansMax of them), as Send does with one buffer. The kernel reads
	// every span in place, never through a bounce copy: the caller keeps
	// spans (and the slice of them) unchanged and mapped until the
	// Completion, which is how a poll reply goes out straight from the
	// cache's arena.
	SendVec(fd int, spans [][]byte, token uint64) error
	// Read fills a prefix of buf from a file at position; Result is the
	// byte count (0 at end of file).
	Read(fd int, buf []byte, position int64, token uint64) error
	// Write writes a prefix of buf to a file at position.
	Write(fd int, buf []byte, position int64, token uint64) error
	// WriteInPlace writes as Write does, but the kernel reads buf in
	// place, never through a bounce copy: buf lies outside the Go heap
	// (the cache's arena) and the caller keeps it unchanged and mapped
	// until the Completion.
	WriteInPlace(fd int, buf []byte, position int64, token uint64) error
	// Fdatasync flushes a file's data, and the metadata needed to read it
	// back (its size), to stable storage (fdatasync(2)).
	Fdatasync(fd int, token uint64) error
	// Fallocate allocates a file's space up to size bytes (fallocate(2)
	// mode 0 over [0, size)), growing a shorter file to size; blocks
	// never written read as zeros.
	Fallocate(fd int, size int64, token uint64) error
	// Timeout completes after d with Errno ETIME.
	Timeout(d time.Duration, token uint64) error
	// Cancel ends the op started with token on fd; it completes (finally)
	// with ECANCELED unless it completed first. Cancel of a finished op is
	// a no-op.
	Cancel(fd int, token uint64) error
	// Wait submits the queued ops and fills out with completions, waiting
	// up to timeout for the first one (0 polls; negative waits without
	// bound). It returns how many it wrote, possibly 0 on timeout or wake.
	Wait(out []Completion, timeout time.Duration) (int, error)
	// Wake makes target's Wait return soon; called on this backend's
	// thread, it may travel through this backend (MSG_RING).
	Wake(target Backend) error
	// Notify makes this backend's Wait return soon; safe from any thread.
	Notify() error
	// Alloc returns a buffer of length size in memory the backend does
	// I/O on without copying (io_uring: mapped outside the Go heap, so the
	// GC never moves what the kernel holds). Send, Read and Write accept
	// other slices too, at the cost of a copy.
	Alloc(size int) []byte
	// Free gives back a buffer from Alloc; others are left to the GC.
	Free(buf []byte)
	// Trim gives back the memory of free buffers from Alloc (io_uring:
	// their pages, which fault in again on next use; epoll: the pooled
	// slices, to the GC). Buffers held or lent are untouched.
	Trim()
	// Direct reports whether the backend does I/O on buf itself, without
	// a bounce copy (io_uring: buf came from Alloc's pools).
	Direct(buf []byte) bool
	// Close releases the backend; ops still in flight are abandoned.
	Close() error
}

// Completion reports the end (or, for multishot ops, one result) of an op.
type Completion struct {
	Token  uint64
	Result int        // bytes moved, or the accepted fd
	Errno  unix.Errno // 0 on success
	More   bool       // a multishot op stays armed
	Data   []byte     // Recv only: the received bytes, valid until the next Wait
}

// Backend names accepted by Options.Backend.
const (
	BackendAuto    = "auto"
	BackendIOURing = "io_uring"
	BackendEpoll   = "epoll"
)

var (
	// ErrBackend reports an unknown backend name or one that cannot run here.
	ErrBackend = errors.New("shard: backend unavailable")
	// ErrClosed reports an op started on a closed backend.
	ErrClosed = errors.New("shard: backend closed")
)

// newBackendFunc opens one shard's backend on the calling (locked) thread.
type newBackendFunc func() (Backend, error)

// chooseBackend resolves a backend name to a constructor. "auto" prefers
// io_uring and falls back to epoll, logging one line that names why.
func chooseBackend(name string, logger *slog.Logger) (newBackendFunc, string, error) {
	return chooseBackendWith(name, logger, uringAvailable)
}

func chooseBackendWith(name string, logger *slog.Logger, uringAvailable func() error) (newBackendFunc, string, error) {
	switch name {
	case BackendEpoll:
		return newEpollBackend, BackendEpoll, nil
	case BackendIOURing:
		if err := uringAvailable(); err != nil {
			return nil, "", fmt.Errorf("%w: io_uring: %w", ErrBackend, err)
		}
		return newURingBackend, BackendIOURing, nil
	case BackendAuto, "":
		if err := uringAvailable(); err != nil {
			logger.Warn("shard: io_uring unavailable, using the epoll backend", "cause", err.Error())
			return newEpollBackend, BackendEpoll, nil
		}
		return newURingBackend, BackendIOURing, nil
	}
	return nil, "", fmt.Errorf("%w: unknown name %q (want auto, io_uring or epoll)", ErrBackend, name)
}

// appendIovecs appends one iovec per span of a SendVec to iovecs: the
// array a vectored send (writev, SENDMSG) hands the kernel.
func appendIovecs(iovecs []unix.Iovec, spans [][]byte) []unix.Iovec {
	for _, span := range spans {
		invariant.Assert(len(span) > 0, "a span has bytes")
		iovec := unix.Iovec{Base: unsafe.SliceData(span)}
		iovec.SetLen(len(span))
		iovecs = append(iovecs, iovec)
	}
	return iovecs
}
