package ring

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// register calls io_uring_register(2), retrying EINTR (a registration may
// wait for the ring to go idle). liburing: __sys_io_uring_register.
func register(fd int, opcode uintptr, arg unsafe.Pointer, count uint32) error {
	for range enterRetriesMax {
		_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(fd), opcode, uintptr(arg), uintptr(count), 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return errno
		}
		return nil
	}
	invariant.Assert(false, "io_uring_register interrupted without end")
	return unix.EINTR
}

// RegisterBuffers registers every buffer of the pools as the ring's fixed
// buffers, pool after pool: buffer i of a pool is fixed buffer index
// base+i, where base is the number of buffers of the pools before it. The
// kernel pins the pages once instead of per operation. A ring holds one
// table at a time, of at most PoolBuffersMax buffers.
// liburing: io_uring_register_buffers.
func (r *Ring) RegisterBuffers(pools ...*Pool) error {
	r.assertOwner()
	invariant.Assert(len(r.pools) == 0, "ring already holds fixed buffers")
	invariant.Assert(len(pools) > 0, "no pools to register")
	count := 0
	for _, pool := range pools {
		invariant.Assert(pool.registered == nil, "pool already registered with a ring")
		count += pool.Len()
	}
	if count > PoolBuffersMax {
		return fmt.Errorf("ring: register %d fixed buffers, more than %d", count, PoolBuffersMax)
	}
	iovecs := make([]unix.Iovec, 0, count)
	for _, pool := range pools {
		for i := range pool.Len() {
			iovec := unix.Iovec{Base: &pool.memory[i*pool.bufferBytes]}
			iovec.SetLen(pool.bufferBytes)
			iovecs = append(iovecs, iovec)
		}
	}
	if err := register(r.fd, registerBuffers, unsafe.Pointer(&iovecs[0]), uint32(len(iovecs))); err != nil {
		return fmt.Errorf("ring: register %d fixed buffers in %d pools: %w", len(iovecs), len(pools), err)
	}
	r.adopt(pools, true)
	return nil
}

// RegisterBuffersSparse registers a fixed-buffer table with one empty slot
// per buffer of the pools, numbered as RegisterBuffers numbers them. A
// slot is filled when its buffer is first used (Buf.Fix) and emptied when
// Pool.Trim gives the buffer's pages back, so the kernel pins (and
// charges to RLIMIT_MEMLOCK) only buffers in use, never the reservation.
// Needs Linux 5.19. liburing: io_uring_register_buffers_sparse.
func (r *Ring) RegisterBuffersSparse(pools ...*Pool) error {
	r.assertOwner()
	invariant.Assert(len(r.pools) == 0, "ring already holds fixed buffers")
	invariant.Assert(len(pools) > 0, "no pools to register")
	count := 0
	for _, pool := range pools {
		invariant.Assert(pool.registered == nil, "pool already registered with a ring")
		count += pool.Len()
	}
	if count > PoolBuffersMax {
		return fmt.Errorf("ring: register %d fixed buffers, more than %d", count, PoolBuffersMax)
	}
	arg := rsrcRegister{nr: uint32(count), flags: rsrcRegisterSparse}
	if err := register(r.fd, registerBuffers2, unsafe.Pointer(&arg), uint32(unsafe.Sizeof(arg))); err != nil {
		return fmt.Errorf("ring: register %d sparse fixed buffers in %d pools: %w", count, len(pools), err)
	}
	r.adopt(pools, false)
	return nil
}

// adopt numbers the pools' buffers in the fixed-buffer table.
func (r *Ring) adopt(pools []*Pool, slotted bool) {
	base := 0
	for _, pool := range pools {
		pool.registered, pool.fixedBase = r, base
		pool.slotted = make([]bool, pool.Len())
		for i := range pool.slotted {
			pool.slotted[i] = slotted
		}
		base += pool.Len()
	}
	r.pools = append(r.pools[:0], pools...)
}

// updateBuffer puts iovec (an empty one to clear) in fixed slot index.
func (r *Ring) updateBuffer(index int, iovec *unix.Iovec) error {
	r.assertOwner()
	update := rsrcUpdate2{offset: uint32(index), data: uint64(uintptr(unsafe.Pointer(iovec))), nr: 1}
	err := register(r.fd, registerBufsUpdate, unsafe.Pointer(&update), uint32(unsafe.Sizeof(update)))
	runtime.KeepAlive(iovec) // update.data is a uint64 the GC does not see.
	if err != nil {
		return fmt.Errorf("ring: update fixed buffer %d: %w", index, err)
	}
	return nil
}

// UnregisterBuffers releases the fixed buffers. No buffer may be lent.
// liburing: io_uring_unregister_buffers.
func (r *Ring) UnregisterBuffers() error {
	r.assertOwner()
	invariant.Assert(len(r.pools) > 0, "ring holds no fixed buffers")
	for _, pool := range r.pools {
		invariant.Assert(pool.lentCount == 0, "fixed buffers unregistered while lent")
	}
	if err := register(r.fd, unregisterBuffers, nil, 0); err != nil {
		return fmt.Errorf("ring: unregister fixed buffers: %w", err)
	}
	r.releasePools()
	return nil
}

// releasePools forgets the fixed-buffer table.
func (r *Ring) releasePools() {
	for i, pool := range r.pools {
		pool.registered, pool.slotted = nil, nil
		r.pools[i] = nil
	}
	r.pools = r.pools[:0]
}

// RegisterFiles registers fds as the ring's fixed files (slot i holds
// fds[i]; -1 leaves a slot empty). An SQE with FlagFixedFile names a slot
// instead of an fd. liburing: io_uring_register_files.
func (r *Ring) RegisterFiles(fds []int32) error {
	r.assertOwner()
	invariant.Assert(r.filesCount == 0, "ring already holds fixed files")
	if len(fds) == 0 || len(fds) > FilesMax {
		return fmt.Errorf("ring: register %d files, want 1..%d", len(fds), FilesMax)
	}
	if err := register(r.fd, registerFiles, unsafe.Pointer(&fds[0]), uint32(len(fds))); err != nil {
		return fmt.Errorf("ring: register %d files: %w", len(fds), err)
	}
	r.filesCount = len(fds)
	return nil
}

// UpdateFiles replaces slots [offset, offset+len(fds)) of the fixed files
// (-1 empties a slot). liburing: io_uring_register_files_update.
func (r *Ring) UpdateFiles(offset uint32, fds []int32) error {
	r.assertOwner()
	invariant.Assert(len(fds) > 0, "empty files update")
	if int(offset)+len(fds) > r.filesCount {
		return fmt.Errorf("ring: update files [%d, %d) past the %d registered", offset, int(offset)+len(fds), r.filesCount)
	}
	update := filesUpdate{offset: offset, fds: uint64(uintptr(unsafe.Pointer(&fds[0])))}
	count, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerFilesUpdate,
		uintptr(unsafe.Pointer(&update)), uintptr(len(fds)), 0, 0)
	runtime.KeepAlive(fds) // update.fds is a uint64 the GC does not see.
	if errno != 0 {
		return fmt.Errorf("ring: update files at %d: %w", offset, errno)
	}
	invariant.Assert(int(count) <= len(fds), "kernel updated more files than given")
	if int(count) != len(fds) {
		return fmt.Errorf("ring: update files at %d: %d of %d updated", offset, count, len(fds))
	}
	return nil
}

// UnregisterFiles drops the fixed file table. liburing:
// io_uring_unregister_files.
func (r *Ring) UnregisterFiles() error {
	r.assertOwner()
	invariant.Assert(r.filesCount > 0, "ring holds no fixed files")
	if err := register(r.fd, unregisterFiles, nil, 0); err != nil {
		return fmt.Errorf("ring: unregister files: %w", err)
	}
	r.filesCount = 0
	return nil
}
