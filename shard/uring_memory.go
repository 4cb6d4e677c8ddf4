package shard

import (
	"unsafe"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/ring"
)

// uringMemory hands out the io_uring backend's buffers: one ring.Pool per
// power-of-two size class from uringClassBytesMin to frameBytesMax, each
// mapped outside the Go heap on first use. A slice of a pooled buffer can
// be traced back to its ring.Buf by address, which is how Send lends the
// kernel a frame without copying it. When a class runs dry Alloc falls back
// to the Go heap, and the backend bounces such slices through a pooled
// buffer.
type uringMemory struct {
	classes [uringClassCount]uringClass
}

type uringClass struct {
	pool    *ring.Pool
	handles []ring.Buf // by buffer index
	base    uintptr    // address of buffer 0
	failed  bool       // the mapping failed once: use the heap
}

const (
	uringClassBytesMin = ring.PageBytes
	uringClassCount    = 15 // 4 KiB … 64 MiB
	// uringClassMapBytes is the address space one class maps: its buffer
	// count is this over its buffer size, at least one. Pages become
	// resident only when first touched, and the pool hands out the most
	// recently freed buffer first, so a class costs the memory of its
	// busiest moment, not this.
	uringClassMapBytes = 32 << 20
)

func uringClassOf(size int) int {
	class := 0
	for uringClassBytesMin<<class < size {
		class++
	}
	return class
}

func (m *uringMemory) alloc(size int) []byte {
	invariant.Assert(size > 0, "alloc size is positive")
	invariant.Assert(size <= frameBytesMax, "alloc fits the frame limit")
	if bytes, ok := m.acquire(uringClassOf(size)); ok {
		return bytes[:size]
	}
	return make([]byte, size, uringClassBytesMin<<uringClassOf(size))
}

// allocPooled returns a pooled buffer of at most size bytes, as large as
// the pools can give: a bounce for a slice they do not own, which the op
// then moves only a prefix of when it is shorter.
func (m *uringMemory) allocPooled(size int) []byte {
	// A slice larger than the largest class bounces through that class,
	// a part at a time.
	for class := min(uringClassOf(size), uringClassCount-1); class >= 0; class-- {
		if bytes, ok := m.acquire(class); ok {
			return bytes[:min(size, len(bytes))]
		}
	}
	invariant.Assert(false, "the smallest class has a free buffer")
	return nil
}

// acquire takes a buffer of the class, mapping the class's pool on first
// use; ok is false when the class is spent or cannot be mapped.
func (m *uringMemory) acquire(classIndex int) ([]byte, bool) {
	class := &m.classes[classIndex]
	classBytes := uringClassBytesMin << classIndex
	if class.pool == nil && !class.failed {
		count := min(max(1, uringClassMapBytes/classBytes), ring.PoolBuffersMax)
		pool, err := ring.NewPool(count, classBytes)
		if err != nil {
			class.failed = true
			return nil, false
		}
		class.pool, class.handles = pool, make([]ring.Buf, count)
	}
	if class.pool == nil {
		return nil, false
	}
	buf, ok := class.pool.Acquire()
	if !ok {
		return nil, false
	}
	bytes := buf.Bytes()
	class.handles[buf.Index()] = buf
	class.base = uintptr(unsafe.Pointer(&bytes[0])) - uintptr(buf.Index()*classBytes)
	return bytes, true
}

// find returns the pooled buffer holding bytes and where bytes start in
// it; ok is false for memory the pools do not own.
func (m *uringMemory) find(bytes []byte) (buf ring.Buf, start int, ok bool) {
	if cap(bytes) == 0 {
		return ring.Buf{}, 0, false
	}
	address := uintptr(unsafe.Pointer(unsafe.SliceData(bytes)))
	for i := range m.classes {
		class := &m.classes[i]
		if class.pool == nil {
			continue
		}
		size := class.pool.BufferBytes()
		if address < class.base || address >= class.base+uintptr(size*class.pool.Len()) {
			continue
		}
		index := int(address-class.base) / size
		start = int(address-class.base) - index*size
		invariant.Assert(start+len(bytes) <= size, "a pooled slice stays within its buffer")
		return class.handles[index], start, true
	}
	return ring.Buf{}, 0, false
}

func (m *uringMemory) free(bytes []byte) {
	if buf, _, ok := m.find(bytes); ok {
		buf.Pool().Release(buf)
	}
}

func (m *uringMemory) trim() {
	for i := range m.classes {
		if pool := m.classes[i].pool; pool != nil {
			pool.Trim()
		}
	}
}

func (m *uringMemory) close() {
	for i := range m.classes {
		if pool := m.classes[i].pool; pool != nil && pool.LentCount() == 0 {
			pool.Close()
		}
	}
}
