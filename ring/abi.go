package ring

// The kernel's io_uring ABI (include/uapi/linux/io_uring.h), spelled in Go.
// golang.org/x/sys/unix carries only the syscall numbers, so the structures
// and constants live here. Their sizes are pinned by TestABISizes.

// Setup flags (io_uring_params.flags).
const (
	SetupIOPoll       uint32 = 1 << 0
	SetupSQPoll       uint32 = 1 << 1
	SetupSQAff        uint32 = 1 << 2
	SetupCQSize       uint32 = 1 << 3
	SetupClamp        uint32 = 1 << 4
	SetupAttachWQ     uint32 = 1 << 5
	SetupRDisabled    uint32 = 1 << 6
	SetupSubmitAll    uint32 = 1 << 7
	SetupCoopTaskrun  uint32 = 1 << 8
	SetupTaskrunFlag  uint32 = 1 << 9
	SetupSQE128       uint32 = 1 << 10
	SetupCQE32        uint32 = 1 << 11
	SetupSingleIssuer uint32 = 1 << 12
	SetupDeferTaskrun uint32 = 1 << 13
	SetupNoMmap       uint32 = 1 << 14
	SetupRegisteredFD uint32 = 1 << 15
	SetupNoSQArray    uint32 = 1 << 16
	SetupHybridIOPoll uint32 = 1 << 17
)

// Feature bits reported by io_uring_setup (io_uring_params.features).
const (
	FeatSingleMmap     uint32 = 1 << 0
	FeatNoDrop         uint32 = 1 << 1
	FeatSubmitStable   uint32 = 1 << 2
	FeatRWCurPos       uint32 = 1 << 3
	FeatCurPersonality uint32 = 1 << 4
	FeatFastPoll       uint32 = 1 << 5
	FeatPoll32Bits     uint32 = 1 << 6
	FeatSQPollNonfixed uint32 = 1 << 7
	FeatExtArg         uint32 = 1 << 8
	FeatNativeWorkers  uint32 = 1 << 9
	FeatRsrcTags       uint32 = 1 << 10
	FeatCQESkip        uint32 = 1 << 11
	FeatLinkedFile     uint32 = 1 << 12
	FeatRegRegRing     uint32 = 1 << 13
	FeatRecvSendBundle uint32 = 1 << 14
	FeatMinTimeout     uint32 = 1 << 15
	FeatRWAttr         uint32 = 1 << 16
	FeatNoIOWait       uint32 = 1 << 17
)

// Op is an io_uring opcode (enum io_uring_op).
type Op uint8

// Opcodes, in kernel order.
const (
	OpNop Op = iota
	OpReadv
	OpWritev
	OpFsync
	OpReadFixed
	OpWriteFixed
	OpPollAdd
	OpPollRemove
	OpSyncFileRange
	OpSendmsg
	OpRecvmsg
	OpTimeout
	OpTimeoutRemove
	OpAccept
	OpAsyncCancel
	OpLinkTimeout
	OpConnect
	OpFallocate
	OpOpenat
	OpClose
	OpFilesUpdate
	OpStatx
	OpRead
	OpWrite
	OpFadvise
	OpMadvise
	OpSend
	OpRecv
	OpOpenat2
	OpEpollCtl
	OpSplice
	OpProvideBuffers
	OpRemoveBuffers
	OpTee
	OpShutdown
	OpRenameat
	OpUnlinkat
	OpMkdirat
	OpSymlinkat
	OpLinkat
	OpMsgRing
	OpFsetxattr
	OpSetxattr
	OpFgetxattr
	OpGetxattr
	OpSocket
	OpUringCmd
	OpSendZC
	OpSendmsgZC
	OpReadMultishot
)

// SQE flags (io_uring_sqe.flags), set with SQE.SetFlags.
const (
	FlagFixedFile      uint8 = 1 << 0
	FlagIODrain        uint8 = 1 << 1
	FlagIOLink         uint8 = 1 << 2
	FlagIOHardlink     uint8 = 1 << 3
	FlagAsync          uint8 = 1 << 4
	FlagBufferSelect   uint8 = 1 << 5
	FlagCQESkipSuccess uint8 = 1 << 6
)

// CQE flags (io_uring_cqe.flags).
const (
	CQEFlagBuffer       uint32 = 1 << 0
	CQEFlagMore         uint32 = 1 << 1
	CQEFlagSockNonempty uint32 = 1 << 2
	CQEFlagNotif        uint32 = 1 << 3
	cqeBufferShift             = 16
)

// Per-op flags.
const (
	FsyncDatasync uint32 = 1 << 0 // fsync_flags: fdatasync(2) semantics

	TimeoutAbs          uint32 = 1 << 0 // timeout_flags
	TimeoutBoottime     uint32 = 1 << 2
	TimeoutRealtime     uint32 = 1 << 3
	TimeoutETimeSuccess uint32 = 1 << 5

	CancelAll uint32 = 1 << 0 // cancel_flags
	CancelFD  uint32 = 1 << 1
	CancelAny uint32 = 1 << 2
	CancelOp  uint32 = 1 << 5

	// PositionCurrent as a position reads or writes at the file position
	// (pipes, sockets).
	PositionCurrent uint64 = ^uint64(0)

	// SendZCReportUsage (zcFlags of PrepSendZC) asks the notification to
	// say whether the kernel had to copy; NotifUsageZCCopied is that bit of
	// the notification's res.
	SendZCReportUsage  uint16 = 1 << 3
	NotifUsageZCCopied int32  = -1 << 31

	pollAddMulti       uint32 = 1 << 0 // len of POLL_ADD
	recvMultishot      uint16 = 1 << 1 // ioprio of RECV
	acceptMultishot    uint16 = 1 << 0 // ioprio of ACCEPT
	msgRingData        uint64 = 0      // addr of MSG_RING
	ioUringOpSupported uint16 = 1 << 0 // io_uring_probe_op.flags
	registerSlotAny    uint32 = ^uint32(0)
)

// io_uring_enter(2) flags.
const (
	enterGetEvents      uint32 = 1 << 0
	enterExtArg         uint32 = 1 << 3
	enterRegisteredRing uint32 = 1 << 4
)

// SQ ring flags (read from the shared sq_ring->flags word).
const (
	sqCQOverflow uint32 = 1 << 1
	sqTaskrun    uint32 = 1 << 2
)

// mmap offsets.
const (
	offSQRing uint64 = 0
	offSQEs   uint64 = 0x10000000
)

// io_uring_register(2) opcodes.
const (
	registerBuffers     uintptr = 0
	unregisterBuffers   uintptr = 1
	registerFiles       uintptr = 2
	unregisterFiles     uintptr = 3
	registerFilesUpdate uintptr = 6
	registerProbe       uintptr = 8
	registerBuffers2    uintptr = 15
	registerBufsUpdate  uintptr = 16
	registerRingFDs     uintptr = 20
	unregisterRingFDs   uintptr = 21
	registerPbufRing    uintptr = 22
	unregisterPbufRing  uintptr = 23
)

// rsrcRegisterSparse (io_uring_rsrc_register.flags) registers a table
// of empty slots.
const rsrcRegisterSparse uint32 = 1 << 0

// rsrcRegister is struct io_uring_rsrc_register (IORING_REGISTER_BUFFERS2).
type rsrcRegister struct {
	nr    uint32
	flags uint32
	resv2 uint64
	data  uint64
	tags  uint64
}

// rsrcUpdate2 is struct io_uring_rsrc_update2
// (IORING_REGISTER_BUFFERS_UPDATE).
type rsrcUpdate2 struct {
	offset uint32
	resv   uint32
	data   uint64
	tags   uint64
	nr     uint32
	resv2  uint32
}

type sqringOffsets struct {
	head        uint32
	tail        uint32
	ringMask    uint32
	ringEntries uint32
	flags       uint32
	dropped     uint32
	array       uint32
	resv1       uint32
	userAddr    uint64
}

type cqringOffsets struct {
	head        uint32
	tail        uint32
	ringMask    uint32
	ringEntries uint32
	overflow    uint32
	cqes        uint32
	flags       uint32
	resv1       uint32
	userAddr    uint64
}

// params is struct io_uring_params.
type params struct {
	sqEntries    uint32
	cqEntries    uint32
	flags        uint32
	sqThreadCPU  uint32
	sqThreadIdle uint32
	features     uint32
	wqFD         uint32
	resv         [3]uint32
	sqOff        sqringOffsets
	cqOff        cqringOffsets
}

// SQE is struct io_uring_sqe (64 bytes), living in the kernel-shared SQE
// array. Fill it only through the Prep methods between Ring.SQE and the next
// submit.
type SQE struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64 // off, addr2
	addr        uint64 // addr, splice_off_in
	len         uint32
	opFlags     uint32 // rw_flags, fsync_flags, msg_flags, timeout_flags…
	userData    uint64
	bufIndex    uint16 // buf_index, buf_group
	personality uint16
	fileIndex   uint32 // splice_fd_in, file_index, addr_len
	addr3       uint64
	pad2        uint64
}

// CQE is struct io_uring_cqe (16 bytes): the completion of one SQE.
type CQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

type probeOp struct {
	op    uint8
	resv  uint8
	flags uint16
	resv2 uint32
}

// probeHeader is struct io_uring_probe without its flexible ops array.
type probeHeader struct {
	lastOp uint8
	opsLen uint8
	resv   uint16
	resv2  [3]uint32
}

// probeBuffer is an io_uring_probe with room for every possible opcode.
type probeBuffer struct {
	header probeHeader
	ops    [256]probeOp
}

// bufReg is struct io_uring_buf_reg.
type bufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	flags       uint16
	resv        [3]uint64
}

// bufEntry is struct io_uring_buf: one slot of a provided-buffer ring. The
// ring's tail overlays the resv field of slot 0.
type bufEntry struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16
}

// rsrcUpdate is struct io_uring_rsrc_update (ring fd registration).
type rsrcUpdate struct {
	offset uint32
	resv   uint32
	data   uint64
}

// filesUpdate is struct io_uring_files_update.
type filesUpdate struct {
	offset uint32
	resv   uint32
	fds    uint64
}

// geteventsArg is struct io_uring_getevents_arg (IORING_ENTER_EXT_ARG).
type geteventsArg struct {
	sigmask     uint64
	sigmaskSize uint32
	minWaitUsec uint32
	ts          uint64
}
