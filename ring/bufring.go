package ring

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/whippetio/whippet/internal/invariant"
)

// BufRing is a provided-buffer ring (IORING_REGISTER_PBUF_RING): buffers the
// kernel picks from when a RECV with buffer selection has data, so memory is
// committed only to sockets that have bytes, not to every armed receive.
//
// Ownership: every buffer starts with the kernel. A CQE with CQEFlagBuffer
// hands one to the caller (Take); the caller gives it back with Recycle once
// it has consumed the bytes. Recycling twice, or taking a buffer the kernel
// does not hold, panics. Both the entry ring and the buffers are mapped
// outside the Go heap.
type BufRing struct {
	ring        *Ring
	entries     []bufEntry // shared with the kernel
	entryMemory []byte
	memory      []byte // the buffers
	bufferBytes int
	mask        uint16
	tail        uint16 // local tail, published by store-release
	group       uint16
	held        []bool // buffer id → held by the caller
	heldCount   int
	closed      bool
}

// NewBufRing maps count buffers (a power of two) of bufferBytes each,
// registers them as a new buffer group of r and hands them all to the
// kernel. liburing: io_uring_setup_buf_ring.
func (r *Ring) NewBufRing(count, bufferBytes int) (*BufRing, error) {
	r.assertOwner()
	if count <= 0 || count > BufRingEntriesMax || count&(count-1) != 0 {
		return nil, fmt.Errorf("ring: buffer ring of %d entries, want a power of two up to %d", count, BufRingEntriesMax)
	}
	if bufferBytes <= 0 || bufferBytes > BufferBytesMax {
		return nil, fmt.Errorf("ring: buffer ring buffers of %d bytes, want 1..%d", bufferBytes, BufferBytesMax)
	}
	if r.bufRingsN >= BufRingsMax {
		return nil, fmt.Errorf("ring: more than %d buffer rings", BufRingsMax)
	}
	br := &BufRing{ring: r, bufferBytes: bufferBytes, mask: uint16(count - 1), group: uint16(r.bufRingsN),
		held: make([]bool, count)}
	var err error
	entryBytes := roundUp(count*int(unsafe.Sizeof(bufEntry{})), PageBytes)
	if br.entryMemory, err = mmapAnonymous(entryBytes); err != nil {
		return nil, fmt.Errorf("ring: map buffer ring entries: %w", err)
	}
	if br.memory, err = mmapAnonymous(roundUp(count*bufferBytes, PageBytes)); err != nil {
		munmap(br.entryMemory)
		return nil, fmt.Errorf("ring: map buffer ring buffers: %w", err)
	}
	br.entries = unsafe.Slice((*bufEntry)(unsafe.Pointer(&br.entryMemory[0])), count)
	reg := bufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&br.entryMemory[0]))), ringEntries: uint32(count), bgid: br.group}
	if err := register(r.fd, registerPbufRing, unsafe.Pointer(&reg), 1); err != nil {
		munmap(br.memory)
		munmap(br.entryMemory)
		return nil, fmt.Errorf("ring: register buffer ring %d: %w", br.group, err)
	}
	r.bufRingsN++
	for id := range count {
		br.add(uint16(id))
	}
	br.publish()
	return br, nil
}

func roundUp(value, unit int) int { return (value + unit - 1) / unit * unit }

// add writes buffer id into the next free entry. liburing: io_uring_buf_ring_add.
func (br *BufRing) add(id uint16) {
	entry := &br.entries[br.tail&br.mask]
	entry.addr = uint64(uintptr(unsafe.Pointer(&br.memory[int(id)*br.bufferBytes])))
	entry.len = uint32(br.bufferBytes)
	entry.bid = id
	br.tail++
}

// publish makes added entries visible to the kernel with a release store.
// The 16-bit tail overlays the resv field of entry 0, so the store covers
// the 32-bit word of entry 0's bid and the tail (little-endian); the kernel
// only reads this ring, so rewriting the bid with its own value is safe.
// liburing: io_uring_buf_ring_advance.
func (br *BufRing) publish() {
	word := (*uint32)(unsafe.Pointer(&br.entries[0].bid))
	atomic.StoreUint32(word, uint32(br.entries[0].bid)|uint32(br.tail)<<16)
}

// Group is the buffer group ID to name in SQEs.
func (br *BufRing) Group() uint16 { return br.group }

// BufferBytes is the size of each buffer.
func (br *BufRing) BufferBytes() int { return br.bufferBytes }

// HeldCount is the number of buffers the caller holds.
func (br *BufRing) HeldCount() int { return br.heldCount }

// Take hands the caller the buffer a CQE with CQEFlagBuffer names, and
// returns its id and the received bytes (cqe.Res of them). liburing:
// cqe->flags >> IORING_CQE_BUFFER_SHIFT.
func (br *BufRing) Take(cqe CQE) (uint16, []byte) {
	invariant.Assert(cqe.Flags&CQEFlagBuffer != 0, "CQE carries no buffer")
	invariant.Assert(cqe.Res >= 0, "CQE with a buffer reports an error")
	id := uint16(cqe.Flags >> cqeBufferShift)
	invariant.Assert(int(id) < len(br.held), "buffer id out of range")
	invariant.Assert(!br.held[id], "buffer taken twice")
	invariant.Assert(int(cqe.Res) <= br.bufferBytes, "receive larger than its buffer")
	br.held[id] = true
	br.heldCount++
	offset := int(id) * br.bufferBytes
	return id, br.memory[offset : offset+int(cqe.Res) : offset+br.bufferBytes]
}

// Recycle gives buffer id back to the kernel. liburing:
// io_uring_buf_ring_add plus io_uring_buf_ring_advance.
func (br *BufRing) Recycle(id uint16) {
	invariant.Assert(int(id) < len(br.held), "buffer id out of range")
	invariant.Assert(br.held[id], "recycled a buffer the caller does not hold")
	br.held[id] = false
	br.heldCount--
	br.add(id)
	br.publish()
}

// Close unregisters the group and unmaps its memory. No receive may still
// select from it. liburing: io_uring_free_buf_ring.
func (br *BufRing) Close() error {
	invariant.Assert(!br.closed, "buffer ring closed twice")
	br.closed = true
	var err error
	if !br.ring.closed {
		reg := bufReg{bgid: br.group}
		err = register(br.ring.fd, unregisterPbufRing, unsafe.Pointer(&reg), 1)
	}
	munmap(br.memory)
	munmap(br.entryMemory)
	if err != nil {
		return fmt.Errorf("ring: unregister buffer ring %d: %w", br.group, err)
	}
	return nil
}
