package ring

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// Options configure New. The zero value is the shard configuration: a
// single-issuer ring whose flags are chosen by probing.
type Options struct {
	// SQEntries is the submission queue size, rounded up to a power of two
	// by the kernel; zero means SQEntriesDefault.
	SQEntries uint32

	// CQEntries is the completion queue size; zero means
	// CQEntriesPerSQEntry × SQEntries.
	CQEntries uint32

	// Shared allows any thread to submit (the caller still serialises
	// calls). Without it the ring is single-issuer: New must run on a
	// thread the caller locked with runtime.LockOSThread, and every call on
	// the ring must come from that thread until Close.
	Shared bool

	// SetupFlags, when non-zero, replaces the probed choice of setup flags
	// (CQSize is always added). New fails if the kernel did not accept them
	// in Probe.
	SetupFlags uint32
}

// Ring is one io_uring instance: a submission queue, a completion queue and
// the registrations that belong to it. A Ring is not safe for concurrent use.
type Ring struct {
	fd          int
	enterFD     uintptr // fd, or the registered ring index
	enterFlags  uint32  // enterRegisteredRing when enterFD is an index
	flags       uint32  // setup flags the kernel accepted
	features    Features
	ringFDIndex int // registered ring slot, -1 if none
	ownerTID    int // creating thread, asserted in invariant builds
	closed      bool
	reaping     bool

	ringMemory []byte // SQ and CQ rings (single mmap)
	sqeMemory  []byte
	sq         submissionQueue
	cq         completionQueue
	aux        []sqeAux

	handlers   [HandlersMax]Handler
	handlersN  int
	waitArg    geteventsArg
	waitTime   unix.Timespec
	bufRingsN  int
	filesCount int
	pools      []*Pool // registered fixed buffers, in index order
}

type submissionQueue struct {
	head    *uint32
	tail    *uint32
	flags   *uint32
	dropped *uint32
	array   []uint32 // nil with SetupNoSQArray
	mask    uint32
	entries uint32
	tailNew uint32 // SQEs handed out by SQE(), published at submit
	sqes    []SQE
}

type completionQueue struct {
	head     *uint32
	tail     *uint32
	overflow *uint32
	mask     uint32
	entries  uint32
	cqes     []CQE
}

// sqeAux is memory that must stay valid from prep until the SQE is
// consumed at submit, one per SQE slot so it is never shared.
type sqeAux struct {
	timespec unix.Timespec
	path     *Path
	sockaddr *Sockaddr
}

// New creates a ring. With Options.Shared false, the caller must have called
// runtime.LockOSThread, and must keep using the ring from that thread.
// liburing: io_uring_queue_init_params.
func New(options Options) (*Ring, error) {
	features, err := Probe()
	if err != nil {
		return nil, err
	}
	if features.Bits&FeatSingleMmap == 0 || features.Bits&FeatNoDrop == 0 {
		return nil, errKernelTooOld("single mmap and no-drop completions (Linux 5.5)")
	}
	if features.Bits&FeatExtArg == 0 {
		return nil, errKernelTooOld("IORING_ENTER_EXT_ARG timeouts (Linux 5.11)")
	}
	sqEntries, cqEntries, err := queueSizes(options)
	if err != nil {
		return nil, err
	}
	r, err := createWithFlags(&features, options, sqEntries, cqEntries)
	if err != nil {
		return nil, err
	}
	r.features = features
	if r.flags&SetupSingleIssuer != 0 && features.RingFDs {
		if err := r.registerRingFD(); err != nil {
			_ = r.Close() // The ring is unusable either way; report the first error.
			return nil, err
		}
	}
	return r, nil
}

func queueSizes(options Options) (uint32, uint32, error) {
	sqEntries := options.SQEntries
	if sqEntries == 0 {
		sqEntries = SQEntriesDefault
	}
	if sqEntries > SQEntriesMax {
		return 0, 0, fmt.Errorf("ring: %d SQ entries, more than %d", sqEntries, SQEntriesMax)
	}
	cqEntries := options.CQEntries
	if cqEntries == 0 {
		cqEntries = min(CQEntriesPerSQEntry*sqEntries, CQEntriesMax)
	}
	if cqEntries < sqEntries || cqEntries > CQEntriesMax {
		return 0, 0, fmt.Errorf("ring: %d CQ entries, want %d..%d", cqEntries, sqEntries, CQEntriesMax)
	}
	return sqEntries, cqEntries, nil
}

// createWithFlags creates the ring with the caller's flags, or with the
// probed choice. Each probed flag was accepted alone; should the kernel
// refuse their combination (EINVAL), the optional ones are dropped in turn
// before giving up. liburing: none.
func createWithFlags(features *Features, options Options, sqEntries, cqEntries uint32) (*Ring, error) {
	if options.SetupFlags != 0 {
		if !features.HasSetup(options.SetupFlags) {
			return nil, fmt.Errorf("ring: setup flags %#x not offered by the kernel (offered %#x)",
				options.SetupFlags, features.SetupFlags)
		}
		return create(sqEntries, cqEntries, options.SetupFlags|SetupCQSize)
	}
	chosen := chooseSetupFlags(features, options.Shared)
	invariant.Assert(features.HasSetup(chosen), "chose a setup flag the kernel refused")
	optional := [...]uint32{0, SetupNoSQArray, SetupNoSQArray | SetupSubmitAll,
		SetupNoSQArray | SetupSubmitAll | SetupTaskrunFlag}
	var err error
	for _, dropped := range optional {
		var r *Ring
		r, err = create(sqEntries, cqEntries, chosen&^dropped|SetupCQSize)
		if !errors.Is(err, unix.EINVAL) {
			return r, err
		}
	}
	return nil, fmt.Errorf("ring: setup with flags %#x: %w", chosen, err)
}

// chooseSetupFlags picks the fastest flags the kernel offers: a single
// issuer with deferred task work posts completions only when the owner asks
// (no IPIs, no interruptions of the event loop); a shared ring gets
// cooperative task running instead. liburing: none (its callers choose).
func chooseSetupFlags(features *Features, shared bool) uint32 {
	var flags uint32
	if features.HasSetup(SetupSubmitAll) {
		flags |= SetupSubmitAll
	}
	if features.HasSetup(SetupNoSQArray) {
		flags |= SetupNoSQArray
	}
	deferred := SetupSingleIssuer | SetupDeferTaskrun
	switch {
	case shared && features.HasSetup(SetupCoopTaskrun|SetupTaskrunFlag):
		flags |= SetupCoopTaskrun | SetupTaskrunFlag
	case shared:
	case features.HasSetup(deferred | SetupTaskrunFlag):
		flags |= deferred | SetupTaskrunFlag
	case features.HasSetup(deferred):
		flags |= deferred
	case features.HasSetup(SetupSingleIssuer | SetupCoopTaskrun | SetupTaskrunFlag):
		flags |= SetupSingleIssuer | SetupCoopTaskrun | SetupTaskrunFlag
	case features.HasSetup(SetupSingleIssuer):
		flags |= SetupSingleIssuer
	}
	return flags
}

// create runs io_uring_setup and maps the rings. liburing:
// io_uring_queue_init_params and io_uring_queue_mmap.
func create(sqEntries, cqEntries, flags uint32) (*Ring, error) {
	var p params
	p.flags = flags
	p.cqEntries = cqEntries
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(sqEntries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, classifySetupError(errno, readDisabledSysctl())
	}
	r := &Ring{fd: int(fd), enterFD: fd, flags: flags, ringFDIndex: -1, ownerTID: unix.Gettid()}
	if err := r.mapRings(&p); err != nil {
		_ = unix.Close(r.fd) // Nothing was submitted; the mapping error matters.
		return nil, err
	}
	invariant.Assert(r.sq.entries == p.sqEntries, "SQ entries differ from setup")
	invariant.Assert(r.cq.entries == p.cqEntries, "CQ entries differ from setup")
	return r, nil
}

// mapRings maps the SQ/CQ rings (one mapping) and the SQE array.
// liburing: io_uring_mmap.
func (r *Ring) mapRings(p *params) error {
	sqBytes := uintptr(p.sqOff.array) + uintptr(p.sqEntries)*4
	cqBytes := uintptr(p.cqOff.cqes) + uintptr(p.cqEntries)*unsafe.Sizeof(CQE{})
	ringBytes := max(sqBytes, cqBytes)
	var err error
	r.ringMemory, err = unix.Mmap(r.fd, int64(offSQRing), int(ringBytes),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("ring: mmap SQ/CQ rings: %w", err)
	}
	sqeBytes := int(p.sqEntries) * int(unsafe.Sizeof(SQE{}))
	r.sqeMemory, err = unix.Mmap(r.fd, int64(offSQEs), sqeBytes,
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		munmap(r.ringMemory)
		return fmt.Errorf("ring: mmap SQE array: %w", err)
	}
	memory := r.ringMemory
	r.sq = submissionQueue{
		head:    word(memory, p.sqOff.head),
		tail:    word(memory, p.sqOff.tail),
		flags:   word(memory, p.sqOff.flags),
		dropped: word(memory, p.sqOff.dropped),
		mask:    *word(memory, p.sqOff.ringMask),
		entries: *word(memory, p.sqOff.ringEntries),
		sqes:    unsafe.Slice((*SQE)(unsafe.Pointer(&r.sqeMemory[0])), p.sqEntries),
	}
	r.sq.tailNew = *r.sq.tail
	if r.flags&SetupNoSQArray == 0 {
		// An identity map, written once: SQE slot i is always array entry i.
		r.sq.array = unsafe.Slice(word(memory, p.sqOff.array), p.sqEntries)
		for i := range r.sq.array {
			r.sq.array[i] = uint32(i)
		}
	}
	r.cq = completionQueue{
		head:     word(memory, p.cqOff.head),
		tail:     word(memory, p.cqOff.tail),
		overflow: word(memory, p.cqOff.overflow),
		mask:     *word(memory, p.cqOff.ringMask),
		entries:  *word(memory, p.cqOff.ringEntries),
		cqes:     unsafe.Slice((*CQE)(unsafe.Pointer(&memory[p.cqOff.cqes])), p.cqEntries),
	}
	r.aux = make([]sqeAux, p.sqEntries)
	return nil
}

// word returns the shared ring word at offset.
func word(memory []byte, offset uint32) *uint32 {
	invariant.Assert(int(offset)+4 <= len(memory), "ring offset beyond the mapping")
	invariant.Assert(offset%4 == 0, "ring offset not word aligned")
	return (*uint32)(unsafe.Pointer(&memory[offset]))
}

// registerRingFD registers the ring fd with the ring itself, so that
// io_uring_enter skips the fd table lookup. The slot lives in the calling
// thread's table, which is why only single-issuer rings use it.
// liburing: io_uring_register_ring_fd.
func (r *Ring) registerRingFD() error {
	update := rsrcUpdate{offset: registerSlotAny, data: uint64(r.fd)}
	if err := register(r.fd, registerRingFDs, unsafe.Pointer(&update), 1); err != nil {
		if errors.Is(err, unix.EBUSY) {
			return fmt.Errorf("ring: register ring fd: all %d per-thread slots taken (a ring was not closed): %w", ringFDSlotsMax, err)
		}
		return fmt.Errorf("ring: register ring fd: %w", err)
	}
	invariant.Assert(update.offset < ringFDSlotsMax, "registered ring slot out of range")
	r.ringFDIndex = int(update.offset)
	r.enterFD = uintptr(update.offset)
	r.enterFlags = enterRegisteredRing
	return nil
}

// Close unregisters the ring fd (before closing it: a leaked slot makes a
// later registration on this thread fail with EBUSY), unmaps the rings and
// closes the fd. Cancel and reap every operation first: the kernel finishes
// cancelled ones after close returns, so their buffers stay lent and their
// Pool must not be closed (Pool.Close asserts it).
// liburing: io_uring_queue_exit.
func (r *Ring) Close() error {
	invariant.Assert(!r.closed, "ring closed twice")
	r.assertOwner()
	r.closed = true
	var first error
	if r.ringFDIndex >= 0 {
		update := rsrcUpdate{offset: uint32(r.ringFDIndex)}
		first = register(r.fd, unregisterRingFDs, unsafe.Pointer(&update), 1)
		r.ringFDIndex = -1
	}
	r.releasePools() // The kernel drops the fixed buffer table with the ring.
	munmap(r.sqeMemory)
	munmap(r.ringMemory)
	r.sq = submissionQueue{}
	r.cq = completionQueue{}
	if err := unix.Close(r.fd); err != nil && first == nil {
		first = err
	}
	if first != nil {
		return fmt.Errorf("ring: close: %w", first)
	}
	return nil
}

// FD is the ring's file descriptor: the target of another ring's MSG_RING.
// liburing: io_uring.ring_fd.
func (r *Ring) FD() int { return r.fd }

// SetupFlags are the flags the ring was created with.
func (r *Ring) SetupFlags() uint32 { return r.flags }

// Features are the probed kernel features.
func (r *Ring) Features() *Features { return &r.features }

// assertOwner checks, in invariant builds, that a single-issuer ring is used
// only from the thread that created it: the kernel would reject the submit
// with EEXIST, and the registered ring fd lives in that thread's table.
func (r *Ring) assertOwner() {
	if invariant.Enabled && r.flags&SetupSingleIssuer != 0 {
		invariant.Assert(unix.Gettid() == r.ownerTID, "single-issuer ring used from another thread")
	}
}

func munmap(memory []byte) {
	if memory == nil {
		return
	}
	err := unix.Munmap(memory)
	invariant.Assert(err == nil, "munmap of a mapping we own failed")
}

// mmapAnonymous maps size bytes of zeroed memory outside the Go heap. It
// is not populated: a page costs resident memory only once someone (we, or
// the kernel receiving into it) first touches it, so a pool sized for the
// worst case costs what its busiest moment touched, not its size. Fixed
// buffers are pinned, and so faulted in, when they are registered.
func mmapAnonymous(size int) ([]byte, error) {
	invariant.Assert(size > 0, "empty anonymous mapping")
	invariant.Assert(size%PageBytes == 0, "anonymous mapping not whole pages")
	return unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
}
