package ring

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// ErrUnavailable is matched (errors.Is) by every error that means "this
// process cannot use io_uring at all": the caller should fall back to the
// portable backend. The concrete value is an *UnavailableError that names the
// cause and how to lift it.
var ErrUnavailable = errors.New("ring: io_uring unavailable")

// UnavailableError explains why io_uring cannot be used.
type UnavailableError struct {
	Cause string // what blocks io_uring, e.g. "blocked by seccomp"
	Hint  string // how to lift it
	Err   error  // the errno from the kernel, if any
}

func (e *UnavailableError) Error() string {
	text := "ring: io_uring unavailable: " + e.Cause
	if e.Err != nil {
		text += " (" + e.Err.Error() + ")"
	}
	return text + "; " + e.Hint
}

// Is makes errors.Is(err, ErrUnavailable) hold.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Unwrap returns the kernel's errno.
func (e *UnavailableError) Unwrap() error { return e.Err }

const hintFallback = "or let the server use its portable backend"

// classifySetupError turns a failed io_uring_setup into one actionable
// error. disabled is /proc/sys/kernel/io_uring_disabled (-1 when unreadable).
// It is pure so that every branch is unit-tested. liburing: none (after
// TigerBeetle's src/io/linux.zig).
func classifySetupError(err error, disabled int) error {
	invariant.Assert(err != nil, "classify a nil setup error")
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return err
	}
	cause, hint := "", ""
	switch {
	case errno == unix.ENOSYS:
		cause = "the kernel has no io_uring (older than 5.1 or built without CONFIG_IO_URING)"
		hint = "run on Linux 5.19 or newer " + hintFallback
	case errno == unix.EPERM && disabled == 2:
		cause = "disabled by sysctl kernel.io_uring_disabled=2"
		hint = "run `sysctl -w kernel.io_uring_disabled=0` " + hintFallback
	case errno == unix.EPERM && disabled == 1:
		cause = "restricted by sysctl kernel.io_uring_disabled=1 to the group in kernel.io_uring_group"
		hint = "add the server's user to that group, or run `sysctl -w kernel.io_uring_disabled=0`, " + hintFallback
	case errno == unix.EPERM:
		cause = "blocked by seccomp (container runtimes' default profiles deny io_uring)"
		hint = "allow io_uring_setup, io_uring_enter and io_uring_register in the seccomp profile " +
			"(e.g. docker --security-opt seccomp=<profile>) " + hintFallback
	case errno == unix.EACCES:
		cause = "denied by a Linux security module (SELinux/AppArmor policy)"
		hint = "allow io_uring for the server's domain " + hintFallback
	case errno == unix.ENOMEM:
		cause = "cannot lock memory for the rings (RLIMIT_MEMLOCK too low on kernels before 5.12)"
		hint = "raise the memlock limit (ulimit -l, LimitMEMLOCK= in systemd) " + hintFallback
	default:
		return errno
	}
	return &UnavailableError{Cause: cause, Hint: hint, Err: errno}
}

// errKernelTooOld is the UnavailableError for a kernel whose io_uring lacks
// what New requires.
func errKernelTooOld(missing string) error {
	return &UnavailableError{
		Cause: "the kernel's io_uring lacks " + missing,
		Hint:  "run on Linux 5.19 or newer " + hintFallback,
	}
}

// readDisabledSysctl returns kernel.io_uring_disabled, or -1 when the file
// is absent (kernels before 6.6) or unreadable.
func readDisabledSysctl() int {
	text, err := os.ReadFile("/proc/sys/kernel/io_uring_disabled")
	if err != nil {
		return -1
	}
	value, err := strconv.Atoi(strings.TrimSpace(string(text)))
	if err != nil {
		return -1
	}
	return value
}

// Available reports whether this process can create an io_uring: nil, or an
// error matching ErrUnavailable that names the cause. It costs one
// io_uring_setup and close of a two-entry ring. liburing: none (the check
// TigerBeetle's src/io/linux.zig performs at init).
func Available() error {
	fd, _, err := setupRaw(2, 0)
	if err != nil {
		return classifySetupError(err, readDisabledSysctl())
	}
	_ = unix.Close(fd) // A probe ring holds nothing; a close error cannot lose data.
	return nil
}

// setupRaw calls io_uring_setup(2) and returns the fd and the filled params.
// liburing: __sys_io_uring_setup.
func setupRaw(entries uint32, flags uint32) (int, params, error) {
	var p params
	p.flags = flags
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return -1, p, errno
	}
	invariant.Assert(int(fd) >= 0, "io_uring_setup returned a negative fd")
	return int(fd), p, nil
}

// Features is what the running kernel's io_uring offers, found by probing.
type Features struct {
	SetupFlags uint32 // every setup flag (Setup…) the kernel accepted, each tried alone or with its prerequisite
	Bits       uint32 // io_uring_params.features (Feat…)
	LastOp     Op     // the highest opcode the kernel knows
	ops        [4]uint64

	MultishotAccept bool // IORING_ACCEPT_MULTISHOT (5.19)
	RecvMultishot   bool // IORING_RECV_MULTISHOT (6.0)
	BufferRings     bool // IORING_REGISTER_PBUF_RING (5.19)
	SendZC          bool // IORING_OP_SEND_ZC (6.0)
	MsgRing         bool // IORING_OP_MSG_RING (5.18)
	RingFDs         bool // IORING_REGISTER_RING_FDS (5.18)
}

// Supports reports whether the kernel implements op.
// liburing: io_uring_opcode_supported.
func (f *Features) Supports(op Op) bool {
	return f.ops[op/64]&(1<<(op%64)) != 0
}

// HasSetup reports whether io_uring_setup accepted every flag in flags.
func (f *Features) HasSetup(flags uint32) bool { return f.SetupFlags&flags == flags }

var probeOnce struct {
	sync.Once
	features Features
	err      error
}

// Probe returns the kernel's io_uring features, probed once per process
// (the result, error included, is kept: the kernel does not change under a
// running process).
// liburing: io_uring_get_probe plus the setup-flag trials of its test suite.
func Probe() (Features, error) {
	probeOnce.Do(func() {
		probeOnce.features, probeOnce.err = probeKernel()
	})
	return probeOnce.features, probeOnce.err
}

// setupFlagTrials are tried one by one; a flag that needs another is tried
// with it.
var setupFlagTrials = [...]uint32{
	SetupSubmitAll,
	SetupCoopTaskrun,
	SetupCoopTaskrun | SetupTaskrunFlag,
	SetupSingleIssuer,
	SetupSingleIssuer | SetupDeferTaskrun,
	SetupSingleIssuer | SetupDeferTaskrun | SetupTaskrunFlag,
	SetupNoSQArray,
	SetupCQSize,
	SetupClamp,
}

func probeKernel() (Features, error) {
	var features Features
	fd, p, err := setupRaw(2, 0)
	if err != nil {
		return features, classifySetupError(err, readDisabledSysctl())
	}
	defer unix.Close(fd)
	features.Bits = p.features
	for _, flags := range setupFlagTrials {
		if setupAccepts(flags) {
			features.SetupFlags |= flags
		}
	}
	if err := probeOps(fd, &features); err != nil {
		return features, err
	}
	features.SendZC = features.Supports(OpSendZC)
	features.MsgRing = features.Supports(OpMsgRing)
	features.BufferRings = probeBufferRings(fd)
	features.RingFDs = probeRingFDs(fd)
	features.MultishotAccept, features.RecvMultishot = probeMultishot()
	return features, nil
}

// setupAccepts creates and closes a small ring with flags. liburing: the
// setup trials of its test suite (test/helpers.c t_create_ring_params).
func setupAccepts(flags uint32) bool {
	var p params
	p.flags = flags
	p.cqEntries = 8
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 2, uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return false
	}
	_ = unix.Close(int(fd)) // A trial ring holds nothing.
	return true
}

// probeOps fills the opcode bitmap. liburing: io_uring_register_probe.
func probeOps(fd int, features *Features) error {
	var probe probeBuffer
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(fd), registerProbe,
		uintptr(unsafe.Pointer(&probe)), uintptr(len(probe.ops)), 0, 0)
	if errno == unix.EINVAL {
		return errKernelTooOld("IORING_REGISTER_PROBE (Linux 5.6)")
	}
	if errno != 0 {
		return errno
	}
	invariant.Assert(int(probe.header.opsLen) <= len(probe.ops), "probe reports more ops than asked")
	features.LastOp = Op(probe.header.lastOp)
	for _, entry := range probe.ops[:probe.header.opsLen] {
		if entry.flags&ioUringOpSupported != 0 {
			features.ops[entry.op/64] |= 1 << (entry.op % 64)
		}
	}
	return nil
}

// probeBufferRings registers and unregisters a one-entry provided-buffer
// ring. liburing: io_uring_register_buf_ring as its tests probe it.
func probeBufferRings(fd int) bool {
	memory, err := mmapAnonymous(PageBytes)
	if err != nil {
		return false
	}
	defer munmap(memory)
	reg := bufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&memory[0]))), ringEntries: 1, bgid: 0}
	if register(fd, registerPbufRing, unsafe.Pointer(&reg), 1) != nil {
		return false
	}
	return register(fd, unregisterPbufRing, unsafe.Pointer(&reg), 1) == nil
}

// probeRingFDs registers and unregisters the probe ring's own fd.
// liburing: io_uring_register_ring_fd.
func probeRingFDs(fd int) bool {
	update := rsrcUpdate{offset: registerSlotAny, data: uint64(fd)}
	if register(fd, registerRingFDs, unsafe.Pointer(&update), 1) != nil {
		return false
	}
	update.data = 0
	return register(fd, unregisterRingFDs, unsafe.Pointer(&update), 1) == nil
}

// probeMultishot submits a multishot ACCEPT and a multishot RECV on fd -1.
// A kernel that knows the flag validates it at prep and then fails the file
// lookup (EBADF); one that does not rejects the flag (EINVAL). Kernels before
// 5.19 looked the file up before prep, so each trial also requires an opcode
// that arrived with the flag (SOCKET with multishot accept, SEND_ZC with
// multishot recv). liburing: none (its tests skip on EINVAL the same way).
func probeMultishot() (accept, recv bool) {
	r, err := create(4, 8, 0)
	if err != nil {
		return false, false
	}
	defer r.Close()
	acceptSQE, _ := r.SQE()
	acceptSQE.PrepAcceptMultishot(-1, 0)
	acceptSQE.SetUserData(1)
	recvSQE, _ := r.SQE()
	recvSQE.prepRW(OpRecv, -1, 0, 0, 0)
	recvSQE.flags |= FlagBufferSelect
	recvSQE.ioprio |= recvMultishot
	recvSQE.SetUserData(2)
	if _, err := r.SubmitAndWait(2, probeWaitTimeout); err != nil {
		return false, false
	}
	var completions [2]CQE
	count := r.ReapInto(completions[:])
	for _, cqe := range completions[:count] {
		knows := cqe.Res == -int32(unix.EBADF)
		switch cqe.UserData {
		case 1:
			accept = knows
		case 2:
			recv = knows
		}
	}
	var features Features
	if probeOps(r.fd, &features) != nil {
		return false, false
	}
	return accept && features.Supports(OpSocket), recv && features.Supports(OpSendZC)
}

var setupFlagNames = [...]string{
	"IOPOLL", "SQPOLL", "SQ_AFF", "CQSIZE", "CLAMP", "ATTACH_WQ", "R_DISABLED", "SUBMIT_ALL",
	"COOP_TASKRUN", "TASKRUN_FLAG", "SQE128", "CQE32", "SINGLE_ISSUER", "DEFER_TASKRUN",
	"NO_MMAP", "REGISTERED_FD_ONLY", "NO_SQARRAY", "HYBRID_IOPOLL",
}

// SetupFlagNames spells setup flags the way the kernel headers do, joined
// by "|", for the log line that announces the backend. liburing: none.
func SetupFlagNames(flags uint32) string {
	names := ""
	for bit, name := range setupFlagNames {
		if flags&(1<<bit) == 0 {
			continue
		}
		if names != "" {
			names += "|"
		}
		names += name
	}
	if unknown := flags &^ (1<<len(setupFlagNames) - 1); unknown != 0 {
		if names != "" {
			names += "|"
		}
		names += "0x" + strconv.FormatUint(uint64(unknown), 16)
	}
	if names == "" {
		return "none"
	}
	return names
}

// String summarises the features for a log line. liburing: none.
func (f *Features) String() string {
	summary := "setup " + SetupFlagNames(f.SetupFlags) + ", features 0x" + strconv.FormatUint(uint64(f.Bits), 16) +
		", ops up to " + strconv.Itoa(int(f.LastOp))
	optional := []struct {
		name    string
		present bool
	}{
		{"multishot accept", f.MultishotAccept}, {"multishot recv", f.RecvMultishot},
		{"buffer rings", f.BufferRings}, {"send zc", f.SendZC}, {"msg ring", f.MsgRing},
		{"registered ring fds", f.RingFDs},
	}
	for _, feature := range optional {
		if feature.present {
			summary += ", " + feature.name
		} else {
			summary += ", no " + feature.name
		}
	}
	return summary
}
