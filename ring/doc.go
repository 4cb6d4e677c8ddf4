// Package ring is Whippet's io_uring layer, written on golang.org/x/sys/unix
// without cgo: ring setup with probed flags, the shared submission and
// completion queues, prep methods for every operation the broker issues,
// registered buffers and files, provided-buffer rings, and the probe that
// tells callers what the kernel offers or why io_uring is unavailable.
//
// ring owns the kernel ABI and the memory the kernel may touch. It imports
// none of our rooms (internal/invariant only); shard drives it, one ring per
// pinned thread.
//
// # Use
//
//	runtime.LockOSThread()           // before New: the ring is single-issuer
//	r, err := ring.New(ring.Options{})
//	sqe, ok := r.SQE()               // false: SQ full, submit first
//	sqe.PrepNop()
//	sqe.SetUserData(ring.UserData(handlerID, tag))
//	r.SubmitAndWait(1, time.Millisecond)
//	r.Dispatch()                     // or r.Reap(func(ring.CQE)), r.ReapInto(batch)
//
// When New or Available fails with an error matching ErrUnavailable, the
// error names the cause (ENOSYS, seccomp, kernel.io_uring_disabled, memlock)
// and the fix; the caller falls back to its portable backend.
//
// # Files
//
// abi.go (kernel structures and constants), setup.go (New, mmap, Close),
// queue.go (SQE, Submit, SubmitAndWait, Reap, Dispatch), prepare.go (Prep
// methods), register.go (fixed buffers and files), probe.go (Probe,
// Available, ErrUnavailable), bufring.go (provided-buffer rings), pool.go
// (Pool, Buf, Vec, Path, Sockaddr), limits.go.
//
// # Memory layout
//
// One io_uring_setup gives the ring fd; two shared mappings hang off it
// (IORING_FEAT_SINGLE_MMAP puts the SQ and CQ rings in one):
//
//	fd @ IORING_OFF_SQ_RING (ringMemory, MAP_SHARED)
//	+--------------------------------------------------------------+
//	| sq head | sq tail | mask | entries | sq flags | dropped | ... |
//	| [sq array: u32 × SQ entries]  (absent with SetupNoSQArray)   |
//	| cq head | cq tail | mask | entries | overflow | cq flags | ...|
//	| cqes @ cq_off.cqes: CQE × CQ entries, 16 bytes each           |
//	|   user_data:8 | res:4 | flags:4                               |
//	+--------------------------------------------------------------+
//	fd @ IORING_OFF_SQES (sqeMemory, MAP_SHARED): SQE × SQ entries
//	| opcode:1 flags:1 ioprio:2 fd:4 | off:8 | addr:8 | len:4 op_flags:4 |
//	| user_data:8 | buf_index:2 personality:2 file_index:4 | addr3:8 pad:8 |
//
// We write SQEs and the SQ tail; the kernel writes the SQ head, the CQEs and
// the CQ tail; we write the CQ head. Heads and tails are free-running u32
// counters masked into the arrays. Without SetupNoSQArray the SQ array is
// an identity map written once at setup, so SQE slot = tail & mask.
//
// Buffers the kernel reads or writes live in anonymous mappings outside the
// Go heap (Pool, BufRing), page aligned for O_DIRECT, and faulted in on first
// touch rather than at map time, so idle pools cost address space, not
// resident memory (TestPoolResidentOnTouch); Pool.Trim gives free buffers'
// pages back and Pool.ResidentBytes reports what is in RAM. A provided-buffer ring
// is an array of 16-byte io_uring_buf entries {addr:8 len:4 bid:2 resv:2};
// its u16 tail overlays entry 0's resv.
//
// user_data carries the route of a completion:
//
//	| handler:8 | tag:56 |   (UserData, CQE.Handler, CQE.Tag)
//
// # Invariants
//
//  1. A single-issuer ring is created, submitted to, registered and closed on
//     one OS thread; the caller locks it (runtime.LockOSThread) before New.
//     Invariant builds assert it (unix.Gettid) on every submit; otherwise
//     the kernel refuses a foreign submit, reported as a NotOwnerError.
//  2. A buffer named by a prepared SQE belongs to the kernel until the final
//     CQE of that operation (for SEND_ZC: the notification, the CQE without
//     CQEFlagMore). Pool states are free → held → lent → held → free; any
//     other transition panics. BufRing buffers are the kernel's until Take and
//     again after Recycle.
//  3. Memory the kernel reads at submit (timespecs, paths, socket addresses)
//     lives in per-SQE slots or objects the ring keeps reachable until the
//     SQE is consumed; memory it uses until completion (buffers, iovecs,
//     msghdrs) lives in a Pool, BufRing or Vec the caller keeps until the CQE.
//  4. io_uring_enter blocks only through unix.Syscall6, so the runtime can
//     stop the world while a shard sleeps; EINTR is retried without
//     resubmitting consumed SQEs.
//  5. Every reap handles at most CompletionsPerReapMax CQEs and releases them
//     to the kernel only after handling them; reaping is not re-entrant.
//  6. Only SQEs handed out by SQE() are published: the SQ tail never passes
//     the kernel's head by more than the SQ size.
//  7. A registered ring fd is unregistered before the ring fd is closed
//     (16 slots per thread; a leak makes later registrations fail with EBUSY).
//  8. The submit and reap paths allocate nothing (TestSubmitReapAllocs).
package ring
