package ring

import "time"

// Every bound of the package, in one place. TestLimits asserts the
// relationships between them and says why each must hold.
const (
	// SQEntriesDefault is the submission queue size when Options leave it
	// zero: one shard turn rarely prepares more than a few hundred SQEs, and
	// a full queue is flushed by Ring.SQE's caller submitting early.
	SQEntriesDefault = 1024

	// SQEntriesMax is the kernel's IORING_MAX_ENTRIES.
	SQEntriesMax = 32768

	// CQEntriesPerSQEntry sizes the completion queue when Options leave it
	// zero. Multishot accept/recv post many CQEs per SQE, so the CQ is kept
	// larger than the SQ; with FeatNoDrop an overflow still loses nothing,
	// but it costs a kernel backlog and an extra io_uring_enter to flush.
	CQEntriesPerSQEntry = 4

	// CQEntriesMax is the kernel's IORING_MAX_CQ_ENTRIES (2 × SQEntriesMax).
	CQEntriesMax = 2 * SQEntriesMax

	// CompletionsPerReapMax bounds the CQEs one Reap, ReapInto or Dispatch
	// call handles, so one turn of an event loop cannot be monopolised by a
	// completion storm (STYLE: bound every loop).
	CompletionsPerReapMax = 256

	// HandlersMax bounds the completion handlers of one ring. The handler
	// ID travels in the top handlerBits bits of user_data.
	HandlersMax = 1 << handlerBits
	handlerBits = 8
	tagBits     = 64 - handlerBits

	// TagMax is the largest tag UserData accepts.
	TagMax = 1<<tagBits - 1

	// BufRingsMax bounds the provided-buffer groups of one ring (buffer
	// group IDs are 16 bits in the SQE; a shard needs one or two).
	BufRingsMax = 64

	// BufRingEntriesMax is the kernel's limit on one provided-buffer ring
	// (buffer IDs are 16 bits).
	BufRingEntriesMax = 1 << 15

	// PoolBuffersMax bounds the buffers of one Pool and of one ring's
	// fixed-buffer table: it is the kernel's IORING_MAX_REG_BUFFERS.
	PoolBuffersMax = 1 << 14

	// BufferBytesMax bounds one buffer of a Pool or BufRing: the kernel
	// rejects registered buffers larger than 1 GiB.
	BufferBytesMax = 1 << 30

	// FilesMax bounds the registered file table of one ring.
	FilesMax = 1 << 16

	// VecBuffersMax bounds the iovecs of one Vec (IOV_MAX).
	VecBuffersMax = 1024

	// PageBytes is the alignment of every buffer handed to the kernel:
	// O_DIRECT needs logical-block alignment, and a page covers every block
	// size a Linux block device may report.
	PageBytes = 4096

	// enterRetriesMax bounds the EINTR retries of one io_uring_enter call:
	// the Go runtime preempts with signals, so EINTR happens, but a storm
	// that never ends is a bug elsewhere.
	enterRetriesMax = 1 << 20

	// probeWaitTimeout bounds the wait for the probe's own trial CQEs,
	// which complete inline; it only guards against a kernel bug hanging
	// the process at startup.
	probeWaitTimeout = time.Second

	// ringFDSlotsMax is the kernel's per-thread table of registered ring
	// fds (IO_RINGFD_REG_MAX).
	ringFDSlotsMax = 16
)
