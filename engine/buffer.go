package engine

import "unsafe"

// alignedBuffer returns size bytes whose first byte sits on a blockBytes
// boundary, as O_DIRECT requires. size is rounded up to whole blocks.
func alignedBuffer(size int) []byte {
	size = int(alignUp(int64(size)))
	raw := make([]byte, size+blockBytes)
	misalignment := int(uintptr(unsafe.Pointer(&raw[0])) & (blockBytes - 1))
	shift := (blockBytes - misalignment) & (blockBytes - 1)
	return raw[shift : shift+size : shift+size]
}

func aligned(buffer []byte) bool {
	return len(buffer) == 0 || uintptr(unsafe.Pointer(&buffer[0]))&(blockBytes-1) == 0
}

// alignedRecycler is the default allocator of a partition without one
// (tests, tools): aligned Go memory, with the last few released buffers
// kept for reuse so that the append path allocates nothing once warm.
type alignedRecycler struct {
	free [][]byte
}

func (r *alignedRecycler) allocate(size int) []byte {
	for index, buffer := range r.free {
		if len(buffer) >= size {
			last := len(r.free) - 1
			r.free[index] = r.free[last]
			r.free[last] = nil
			r.free = r.free[:last]
			return buffer
		}
	}
	return alignedBuffer(size)
}

func (r *alignedRecycler) release(buffer []byte) {
	if len(r.free) < recycledBuffersMax {
		r.free = append(r.free, buffer)
	}
}
