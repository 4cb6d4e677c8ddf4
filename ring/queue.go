package ring

import (
	"errors"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// ErrTimeout is returned by SubmitAndWait when the timeout expired before
// the requested completions arrived (and nothing was submitted by the call).
var ErrTimeout = errors.New("ring: wait timed out")

// SQE returns the next free submission queue entry, or false when the SQ is
// full (submit, then ask again). The entry must be filled by exactly one Prep
// method before the next Submit. liburing: io_uring_get_sqe.
func (r *Ring) SQE() (*SQE, bool) {
	invariant.Assert(!r.closed, "SQE on a closed ring")
	head := atomic.LoadUint32(r.sq.head)
	if r.sq.tailNew-head >= r.sq.entries {
		return nil, false
	}
	index := r.sq.tailNew & r.sq.mask
	r.sq.tailNew++
	r.aux[index].path = nil
	r.aux[index].sockaddr = nil
	sqe := &r.sq.sqes[index]
	*sqe = SQE{}
	return sqe, true
}

// auxFor returns the per-slot memory of an SQE handed out by SQE().
func (r *Ring) auxFor(sqe *SQE) *sqeAux {
	index := (uintptr(unsafe.Pointer(sqe)) - uintptr(unsafe.Pointer(&r.sq.sqes[0]))) / unsafe.Sizeof(SQE{})
	invariant.Assert(index < uintptr(len(r.aux)), "SQE not from this ring")
	return &r.aux[index]
}

// SQPending is the number of SQEs prepared but not yet submitted.
// liburing: io_uring_sq_ready.
func (r *Ring) SQPending() uint32 { return r.sq.tailNew - atomic.LoadUint32(r.sq.head) }

// CompletionsHeld reports whether the kernel holds completions that appear
// in the CQ only after the next Submit or SubmitAndWait: deferred task work
// (signalled through the SQ flags when the ring has SetupTaskrunFlag) or a
// CQ overflow backlog. A polling loop checks it, with CQReady, to skip
// io_uring_enter while idle. liburing: cq_ring_needs_flush.
func (r *Ring) CompletionsHeld() bool { return r.completionsNeedEnter() }

// Counters are the kernel's counts of SQEs it dropped as invalid and of
// CQEs it could not post (with FeatNoDrop, only on allocation failure).
// Both should stay zero; a shard exports them as metrics.
func (r *Ring) Counters() (sqDropped, cqOverflow uint32) {
	return atomic.LoadUint32(r.sq.dropped), atomic.LoadUint32(r.cq.overflow)
}

// CQReady is the number of CQEs waiting to be reaped (without entering the
// kernel: with deferred task work, completions appear only after a
// Submit or SubmitAndWait). liburing: io_uring_cq_ready.
func (r *Ring) CQReady() uint32 {
	return atomic.LoadUint32(r.cq.tail) - atomic.LoadUint32(r.cq.head)
}

// flush publishes the prepared SQEs to the kernel and returns how many are
// waiting for it. liburing: __io_uring_flush_sq.
func (r *Ring) flush() uint32 {
	atomic.StoreUint32(r.sq.tail, r.sq.tailNew)
	pending := r.sq.tailNew - atomic.LoadUint32(r.sq.head)
	invariant.Assert(pending <= r.sq.entries, "more SQEs pending than the SQ holds")
	return pending
}

// completionsNeedEnter reports whether completions are held in the kernel
// (deferred task work, or a CQ overflow backlog) until we enter it.
// liburing: cq_ring_needs_enter.
func (r *Ring) completionsNeedEnter() bool {
	if r.flags&SetupDeferTaskrun != 0 && r.flags&SetupTaskrunFlag == 0 {
		return true
	}
	return atomic.LoadUint32(r.sq.flags)&(sqTaskrun|sqCQOverflow) != 0
}

// Submit hands every prepared SQE to the kernel without waiting, and lets the
// kernel post completions it holds back. It returns the number submitted.
// liburing: io_uring_submit.
func (r *Ring) Submit() (int, error) {
	r.assertOwner()
	pending := r.flush()
	var flags uint32
	if r.completionsNeedEnter() {
		flags = enterGetEvents
	} else if pending == 0 {
		return 0, nil
	}
	return r.enter(pending, 0, flags, nil, time.Time{})
}

// SubmitAndWait submits every prepared SQE, then waits until at least
// waitCount CQEs are ready or timeout passes (timeout <= 0: no timeout). With
// waitCount 0 it never blocks but still runs deferred completions, which makes
// it the call for a polling loop. On timeout it returns ErrTimeout. An EINTR
// restarts the wait with what is left of the timeout. EBUSY or EAGAIN mean the kernel
// cannot take more work until completions are reaped: reap, then call again.
// liburing:
// io_uring_submit_and_wait_timeout.
func (r *Ring) SubmitAndWait(waitCount uint32, timeout time.Duration) (int, error) {
	r.assertOwner()
	invariant.Assert(waitCount <= r.cq.entries, "waiting for more CQEs than the CQ holds")
	pending := r.flush()
	var arg *geteventsArg
	var deadline time.Time
	if timeout > 0 && waitCount > 0 {
		deadline = time.Now().Add(timeout)
		r.waitTime = unix.NsecToTimespec(int64(timeout))
		r.waitArg = geteventsArg{ts: uint64(uintptr(unsafe.Pointer(&r.waitTime)))}
		arg = &r.waitArg
	}
	submitted, err := r.enter(pending, waitCount, enterGetEvents, arg, deadline)
	if errors.Is(err, unix.ETIME) {
		return submitted, ErrTimeout
	}
	return submitted, err
}

// enter calls io_uring_enter(2) through Syscall6 (the runtime must know the
// thread may block, or a GC waits for it), retrying EINTR; a timed wait
// resumes with the time left until deadline. liburing:
// __sys_io_uring_enter2.
func (r *Ring) enter(submit, waitCount, flags uint32, arg *geteventsArg, deadline time.Time) (int, error) {
	flags |= r.enterFlags
	var argPointer, argBytes uintptr
	if arg != nil {
		flags |= enterExtArg
		argPointer = uintptr(unsafe.Pointer(arg))
		argBytes = unsafe.Sizeof(*arg)
	}
	for range enterRetriesMax {
		submitted, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, r.enterFD, uintptr(submit),
			uintptr(waitCount), uintptr(flags), argPointer, argBytes)
		if errno == unix.EINTR {
			// A retry must not resubmit what the kernel already consumed.
			submit = r.sq.tailNew - atomic.LoadUint32(r.sq.head)
			if arg != nil {
				left := time.Until(deadline)
				if left <= 0 {
					return 0, unix.ETIME
				}
				r.waitTime = unix.NsecToTimespec(int64(left))
			}
			continue
		}
		if errno != 0 {
			return 0, r.enterError(errno)
		}
		invariant.Assert(uint32(submitted) <= submit, "kernel consumed more SQEs than offered")
		return int(submitted), nil
	}
	invariant.Assert(false, "io_uring_enter interrupted without end")
	return 0, unix.EINTR
}

// enterError names the likely cause when a single-issuer ring is entered
// from a foreign thread: the kernel says EEXIST, or EINVAL/EBADF when the
// registered ring fd is missing from that thread's table. It costs a gettid
// only on the error path.
func (r *Ring) enterError(errno unix.Errno) error {
	foreign := errno == unix.EEXIST || errno == unix.EINVAL || errno == unix.EBADF
	if foreign && r.flags&SetupSingleIssuer != 0 && unix.Gettid() != r.ownerTID {
		return &NotOwnerError{Err: errno}
	}
	return errno
}

// NotOwnerError reports a single-issuer ring used from a thread other than
// the one that created it (see invariant 1): a bug in the caller.
type NotOwnerError struct{ Err unix.Errno }

func (e *NotOwnerError) Error() string {
	return "ring: single-issuer ring used from a thread other than its creator (" + e.Err.Error() + ")"
}

// Unwrap returns the kernel's errno.
func (e *NotOwnerError) Unwrap() error { return e.Err }

// Reap calls handle for each ready CQE, at most CompletionsPerReapMax, then
// releases them to the kernel, and returns how many it handled. It does not
// enter the kernel. handle must not call Reap, ReapInto or Dispatch.
// liburing: io_uring_for_each_cqe plus io_uring_cq_advance.
func (r *Ring) Reap(handle func(cqe CQE)) int {
	invariant.Assert(!r.reaping, "reap re-entered from a completion handler")
	r.reaping = true
	head := atomic.LoadUint32(r.cq.head)
	ready := min(atomic.LoadUint32(r.cq.tail)-head, CompletionsPerReapMax)
	invariant.Assert(ready <= r.cq.entries, "more CQEs ready than the CQ holds")
	for i := range ready {
		handle(r.cq.cqes[(head+i)&r.cq.mask])
	}
	atomic.StoreUint32(r.cq.head, head+ready)
	r.reaping = false
	return int(ready)
}

// ReapInto copies up to len(completions) ready CQEs (at most
// CompletionsPerReapMax) into completions, releases them to the kernel, and
// returns how many it copied. liburing: io_uring_peek_batch_cqe.
func (r *Ring) ReapInto(completions []CQE) int {
	invariant.Assert(!r.reaping, "reap re-entered from a completion handler")
	head := atomic.LoadUint32(r.cq.head)
	ready := min(atomic.LoadUint32(r.cq.tail)-head, CompletionsPerReapMax, uint32(len(completions)))
	invariant.Assert(ready <= r.cq.entries, "more CQEs ready than the CQ holds")
	for i := range ready {
		completions[i] = r.cq.cqes[(head+i)&r.cq.mask]
	}
	atomic.StoreUint32(r.cq.head, head+ready)
	return int(ready)
}

// Handler receives the completions routed to it by Dispatch.
type Handler interface {
	Complete(cqe CQE)
}

// HandlerID names a Handler of one ring; it travels in the top bits of
// user_data.
type HandlerID uint8

// AddHandler registers h and returns the ID to pass to UserData. At most
// HandlersMax handlers per ring; exceeding it is a programming error.
// liburing: none (routing is the application's).
func (r *Ring) AddHandler(h Handler) HandlerID {
	invariant.Assert(h != nil, "nil completion handler")
	invariant.Assert(r.handlersN < HandlersMax, "more than HandlersMax completion handlers")
	r.handlers[r.handlersN] = h
	r.handlersN++
	return HandlerID(r.handlersN - 1)
}

// UserData packs a handler and a tag (at most TagMax) into user_data.
// liburing: none; pass the result to SQE.SetUserData.
func UserData(handler HandlerID, tag uint64) uint64 {
	invariant.Assert(tag <= TagMax, "user_data tag wider than TagMax")
	return uint64(handler)<<tagBits | tag
}

// Handler is the HandlerID packed in the CQE's user_data.
func (c CQE) Handler() HandlerID { return HandlerID(c.UserData >> tagBits) }

// Tag is the tag packed in the CQE's user_data.
func (c CQE) Tag() uint64 { return c.UserData & TagMax }

// More reports that the same SQE will post further CQEs (multishot, or a
// SEND_ZC whose notification is still to come).
func (c CQE) More() bool { return c.Flags&CQEFlagMore != 0 }

// Notif reports a SEND_ZC notification: the kernel released the buffer.
func (c CQE) Notif() bool { return c.Flags&CQEFlagNotif != 0 }

// Err is the CQE's result as an error: nil when Res >= 0. liburing: none
// (its callers test cqe->res < 0).
func (c CQE) Err() error {
	if c.Res >= 0 {
		return nil
	}
	return unix.Errno(-c.Res)
}

// Dispatch reaps up to CompletionsPerReapMax ready CQEs and routes each to
// the Handler named in its user_data. It returns how many it routed.
// liburing: io_uring_for_each_cqe plus io_uring_cq_advance.
func (r *Ring) Dispatch() int {
	invariant.Assert(!r.reaping, "dispatch re-entered from a completion handler")
	r.reaping = true
	head := atomic.LoadUint32(r.cq.head)
	ready := min(atomic.LoadUint32(r.cq.tail)-head, CompletionsPerReapMax)
	for i := range ready {
		cqe := r.cq.cqes[(head+i)&r.cq.mask]
		id := int(cqe.Handler())
		invariant.Assert(id < r.handlersN, "CQE routed to an unregistered handler")
		r.handlers[id].Complete(cqe)
	}
	atomic.StoreUint32(r.cq.head, head+ready)
	r.reaping = false
	return int(ready)
}
