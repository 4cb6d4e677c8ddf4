package ring

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// Pool is a set of equally sized, page-aligned buffers in one anonymous
// mapping outside the Go heap: the GC never moves or frees memory the kernel
// holds, and O_DIRECT accepts every buffer. Pools may be registered with one
// ring as its fixed buffers (Ring.RegisterBuffers, or RegisterBuffersSparse
// with Buf.Fix filling a buffer's slot on first use) for READ_FIXED and
// WRITE_FIXED.
//
// Ownership: a buffer is free, held by the caller (after Acquire, and after
// Reclaim), or lent to the kernel (from the Prep call that names it until
// the caller sees its final CQE and calls Reclaim). Touching a lent buffer,
// lending it twice or releasing it while lent panics. A Pool is not safe for
// concurrent use.
type Pool struct {
	memory      []byte
	bufferBytes int
	states      []bufferState
	free        []uint32 // stack of free buffer indexes
	lentCount   int
	registered  *Ring  // the ring holding this pool as fixed buffers
	fixedBase   int    // fixed buffer index of buffer 0 when registered
	slotted     []bool // by buffer: its fixed slot holds it (sparse tables fill slots one by one)
}

type bufferState uint8

const (
	bufferFree bufferState = iota
	bufferHeld
	bufferLent
)

// Buf is a handle to one buffer of a Pool.
type Buf struct {
	pool  *Pool
	index uint32
}

// NewPool maps count buffers of bufferBytes each (a multiple of PageBytes).
// liburing: none (it leaves buffer memory to the application; its tests use
// posix_memalign, here mmap keeps the memory outside the Go heap).
func NewPool(count, bufferBytes int) (*Pool, error) {
	if count <= 0 || count > PoolBuffersMax {
		return nil, fmt.Errorf("ring: pool of %d buffers, want 1..%d", count, PoolBuffersMax)
	}
	if bufferBytes <= 0 || bufferBytes > BufferBytesMax || bufferBytes%PageBytes != 0 {
		return nil, fmt.Errorf("ring: pool buffer of %d bytes, want a multiple of %d up to %d",
			bufferBytes, PageBytes, BufferBytesMax)
	}
	memory, err := mmapAnonymous(count * bufferBytes)
	if err != nil {
		return nil, fmt.Errorf("ring: map pool of %d × %d bytes: %w", count, bufferBytes, err)
	}
	pool := &Pool{
		memory:      memory,
		bufferBytes: bufferBytes,
		states:      make([]bufferState, count),
		free:        make([]uint32, count),
	}
	for i := range pool.free {
		pool.free[i] = uint32(count - 1 - i)
	}
	return pool, nil
}

// Close unmaps the pool. No buffer may be lent: the kernel would write into
// memory that no longer exists.
func (p *Pool) Close() {
	invariant.Assert(p.lentCount == 0, "pool closed with buffers lent to the kernel")
	invariant.Assert(p.registered == nil, "pool closed while registered with a ring")
	munmap(p.memory)
	p.memory = nil
}

// Acquire takes a free buffer, or returns false when all are in use.
func (p *Pool) Acquire() (Buf, bool) {
	if len(p.free) == 0 {
		return Buf{}, false
	}
	index := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	invariant.Assert(p.states[index] == bufferFree, "free list holds a used buffer")
	p.states[index] = bufferHeld
	return Buf{pool: p, index: index}, true
}

// Release returns a held buffer to the pool.
func (p *Pool) Release(b Buf) {
	invariant.Assert(b.pool == p, "buffer released to another pool")
	invariant.Assert(p.states[b.index] == bufferHeld, "released buffer is not held (lent or already free)")
	p.states[b.index] = bufferFree
	p.free = append(p.free, b.index)
}

// Reclaim takes a buffer back from the kernel once the final CQE of the
// operation that was lent it has arrived (for SEND_ZC: the notification).
func (p *Pool) Reclaim(b Buf) {
	invariant.Assert(b.pool == p, "buffer reclaimed into another pool")
	invariant.Assert(p.states[b.index] == bufferLent, "reclaimed buffer was not lent")
	p.states[b.index] = bufferHeld
	p.lentCount--
}

// Trim gives the pages of every free buffer back to the kernel
// (MADV_DONTNEED): the memory stays mapped and reads as zeros, and costs
// RSS again only when touched. It returns the bytes it advised away,
// touched or not. Held and lent buffers are left alone. liburing: none.
func (p *Pool) Trim() int {
	invariant.Assert(p.memory != nil, "trim of a closed pool")
	trimmed := 0
	for first := 0; first < len(p.states); {
		if p.states[first] != bufferFree {
			first++
			continue
		}
		last := first
		for last < len(p.states) && p.states[last] == bufferFree {
			last++
		}
		if !p.emptySlots(first, last) {
			first = last // still pinned in the ring's table: leave the pages
			continue
		}
		run := p.memory[first*p.bufferBytes : last*p.bufferBytes]
		err := unix.Madvise(run, unix.MADV_DONTNEED)
		invariant.Assert(err == nil, "madvise of a mapping we own failed")
		trimmed += len(run)
		first = last
	}
	return trimmed
}

// emptySlots empties the fixed slots of buffers [first, last) before
// their pages go: a slot pins the pages it was filled with, and after
// MADV_DONTNEED the mapping would fault in new ones the kernel never sees.
// It reports false when a slot could not be emptied (the pages stay).
func (p *Pool) emptySlots(first, last int) bool {
	if p.registered == nil {
		return true
	}
	for i := first; i < last; i++ {
		if !p.slotted[i] {
			continue
		}
		var empty unix.Iovec
		if err := p.registered.updateBuffer(p.fixedBase+i, &empty); err != nil {
			return false
		}
		p.slotted[i] = false
	}
	return true
}

// ResidentBytes is how much of the pool's memory is in RAM now
// (mincore(2)): what its busiest moment faulted in, less what Trim gave
// back. liburing: none.
func (p *Pool) ResidentBytes() int {
	invariant.Assert(p.memory != nil, "resident bytes of a closed pool")
	vector := make([]byte, len(p.memory)/PageBytes)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&p.memory[0])), uintptr(len(p.memory)),
		uintptr(unsafe.Pointer(&vector[0])))
	invariant.Assert(errno == 0, "mincore of a mapping we own failed")
	pages := 0
	for _, page := range vector {
		pages += int(page & 1)
	}
	return pages * PageBytes
}

// FreeCount is the number of buffers Acquire can still hand out.
func (p *Pool) FreeCount() int { return len(p.free) }

// LentCount is the number of buffers the kernel holds.
func (p *Pool) LentCount() int { return p.lentCount }

// BufferBytes is the size of each buffer.
func (p *Pool) BufferBytes() int { return p.bufferBytes }

// Registered reports whether the pool is in a ring's fixed-buffer table.
func (p *Pool) Registered() bool { return p.registered != nil }

// Len is the number of buffers.
func (p *Pool) Len() int { return len(p.states) }

// Find locates data in the pool: the buffer holding its first byte and the
// offset of that byte in it. ok is false when data is empty, lies outside
// the pool, or runs past the end of its buffer. It lets a caller that hands
// out Bytes() slices map a slice back to the Buf that owns it.
// liburing: none.
func (p *Pool) Find(data []byte) (b Buf, start int, ok bool) {
	if len(data) == 0 || len(p.memory) == 0 {
		return Buf{}, 0, false
	}
	base := uintptr(unsafe.Pointer(&p.memory[0]))
	address := uintptr(unsafe.Pointer(&data[0]))
	if address < base || address-base >= uintptr(len(p.memory)) {
		return Buf{}, 0, false
	}
	offset := int(address - base)
	index := offset / p.bufferBytes
	start = offset - index*p.bufferBytes
	if start+len(data) > p.bufferBytes {
		return Buf{}, 0, false
	}
	invariant.Assert(index < len(p.states), "found buffer index past the pool")
	return Buf{pool: p, index: uint32(index)}, start, true
}

// lend marks a held buffer as owned by the kernel and returns the address of
// [start, end) in it.
func (p *Pool) lend(b Buf, start, end int) uint64 {
	invariant.Assert(b.pool == p, "buffer of another pool")
	invariant.Assert(p.states[b.index] == bufferHeld, "buffer lent while not held (already lent, or free)")
	invariant.Assert(0 <= start && start <= end, "buffer span reversed")
	invariant.Assert(end <= p.bufferBytes, "buffer span past its end")
	p.states[b.index] = bufferLent
	p.lentCount++
	return uint64(uintptr(unsafe.Pointer(&p.memory[int(b.index)*p.bufferBytes]))) + uint64(start)
}

// Bytes is the whole buffer. The caller may use it only while it holds the
// buffer; once lent, the kernel owns the memory.
func (b Buf) Bytes() []byte {
	invariant.Assert(b.pool != nil, "zero Buf")
	invariant.Assert(b.pool.states[b.index] == bufferHeld, "bytes of a buffer the caller does not hold")
	offset := int(b.index) * b.pool.bufferBytes
	return b.pool.memory[offset : offset+b.pool.bufferBytes : offset+b.pool.bufferBytes]
}

// Index is the buffer's position in its pool.
func (b Buf) Index() int { return int(b.index) }

// FixedIndex is the buffer's index in the fixed-buffer table of the ring its
// pool is registered with.
func (b Buf) FixedIndex() int {
	invariant.Assert(b.pool.registered != nil, "fixed index of an unregistered pool")
	return b.pool.fixedBase + int(b.index)
}

// Fixed reports whether the buffer's fixed slot holds it, so
// PrepReadFixed and PrepWriteFixed may name it.
func (b Buf) Fixed() bool {
	return b.pool.registered != nil && b.pool.slotted[b.index]
}

// Fix fills the buffer's slot in the sparse fixed-buffer table of the ring
// its pool is registered with (Ring.RegisterBuffersSparse), pinning its
// pages; a filled slot is left as it is. An error (ENOMEM past
// RLIMIT_MEMLOCK without CAP_IPC_LOCK) leaves the slot empty: the caller
// uses a plain READ or WRITE. Pool.Trim empties the slots of the free
// buffers it gives back. liburing: io_uring_register_buffers_update_tag.
func (b Buf) Fix() error {
	invariant.Assert(b.pool.registered != nil, "fix of a buffer whose pool is not registered")
	if b.pool.slotted[b.index] {
		return nil
	}
	offset := int(b.index) * b.pool.bufferBytes
	iovec := unix.Iovec{Base: &b.pool.memory[offset]}
	iovec.SetLen(b.pool.bufferBytes)
	if err := b.pool.registered.updateBuffer(b.pool.fixedBase+int(b.index), &iovec); err != nil {
		return err
	}
	b.pool.slotted[b.index] = true
	return nil
}

// Pool is the pool the buffer belongs to.
func (b Buf) Pool() *Pool { return b.pool }

// Vec is a list of buffer spans for READV, WRITEV and SENDMSG. Its iovec
// array and message header live in the Vec, which the caller keeps until the
// CQE arrives; Prep lends every buffer, and Vec.Reclaim takes them back.
type Vec struct {
	iovecs  []unix.Iovec
	buffers []Buf
	header  unix.Msghdr
	lent    bool
}

// NewVec allocates a Vec for up to capacity spans (at most VecBuffersMax).
// liburing: none (struct iovec arrays are the caller's).
func NewVec(capacity int) *Vec {
	invariant.Assert(capacity > 0, "empty Vec")
	invariant.Assert(capacity <= VecBuffersMax, "Vec larger than VecBuffersMax")
	return &Vec{iovecs: make([]unix.Iovec, 0, capacity), buffers: make([]Buf, 0, capacity)}
}

// Add appends [start, end) of a held buffer; it returns false when full.
// The same buffer may not appear twice.
func (v *Vec) Add(b Buf, start, end int) bool {
	invariant.Assert(!v.lent, "Vec changed while lent")
	if len(v.iovecs) == cap(v.iovecs) {
		return false
	}
	bytes := b.Bytes()[start:end]
	var iovec unix.Iovec
	if len(bytes) > 0 {
		iovec.Base = &bytes[0]
	}
	iovec.SetLen(len(bytes))
	v.iovecs = append(v.iovecs, iovec)
	v.buffers = append(v.buffers, b)
	return true
}

// Reset empties a Vec that is not lent.
func (v *Vec) Reset() {
	invariant.Assert(!v.lent, "Vec reset while lent")
	v.iovecs = v.iovecs[:0]
	v.buffers = v.buffers[:0]
}

// Len is the number of spans.
func (v *Vec) Len() int { return len(v.iovecs) }

// Buffers are the buffers of the spans, in order.
func (v *Vec) Buffers() []Buf { return v.buffers }

// lend marks every buffer as owned by the kernel and returns the iovec
// array's address.
func (v *Vec) lend() uint64 {
	invariant.Assert(!v.lent, "Vec lent twice")
	invariant.Assert(len(v.iovecs) > 0, "empty Vec lent")
	for i, b := range v.buffers {
		address := b.pool.lend(b, 0, 0)
		invariant.Assert(uint64(uintptr(unsafe.Pointer(v.iovecs[i].Base))) >= address, "iovec outside its buffer")
	}
	v.lent = true
	return uint64(uintptr(unsafe.Pointer(&v.iovecs[0])))
}

// Reclaim takes every buffer back after the Vec's CQE arrived.
func (v *Vec) Reclaim() {
	invariant.Assert(v.lent, "Vec reclaimed while not lent")
	for _, b := range v.buffers {
		b.pool.Reclaim(b)
	}
	v.lent = false
}

// Path is a NUL-terminated path for OPENAT. The ring keeps it reachable until
// the SQE naming it is submitted (the kernel copies it then).
type Path struct {
	bytes []byte
}

// NewPath copies name into a Path. A name holding NUL is an error.
func NewPath(name string) (*Path, error) {
	bytes, err := unix.BytePtrFromString(name)
	if err != nil {
		return nil, fmt.Errorf("ring: path %q: %w", name, err)
	}
	return &Path{bytes: unsafe.Slice(bytes, len(name)+1)}, nil
}

// Sockaddr is a socket address for CONNECT, in the kernel's layout. The ring
// keeps it reachable until submit; the caller keeps it until the CQE.
type Sockaddr struct {
	raw    unix.RawSockaddrAny
	length uint32
}

// NewSockaddr converts an IPv4 or IPv6 address.
func NewSockaddr(address unix.Sockaddr) (*Sockaddr, error) {
	var sockaddr Sockaddr
	switch typed := address.(type) {
	case *unix.SockaddrInet4:
		raw := (*unix.RawSockaddrInet4)(unsafe.Pointer(&sockaddr.raw))
		raw.Family = unix.AF_INET
		raw.Port = hostToNetwork16(uint16(typed.Port))
		raw.Addr = typed.Addr
		sockaddr.length = unix.SizeofSockaddrInet4
	case *unix.SockaddrInet6:
		raw := (*unix.RawSockaddrInet6)(unsafe.Pointer(&sockaddr.raw))
		raw.Family = unix.AF_INET6
		raw.Port = hostToNetwork16(uint16(typed.Port))
		raw.Addr = typed.Addr
		raw.Scope_id = typed.ZoneId
		sockaddr.length = unix.SizeofSockaddrInet6
	default:
		return nil, fmt.Errorf("ring: socket address %T not supported (IPv4 and IPv6 only)", address)
	}
	return &sockaddr, nil
}

// hostToNetwork16 swaps a port into network byte order (ring runs on
// little-endian machines only, see TestABISizes).
func hostToNetwork16(value uint16) uint16 { return value<<8 | value>>8 }
