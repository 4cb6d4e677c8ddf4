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
