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

// uringClassMapBytesOf is the address space class maps: the large classes
// (partition journals and read buffers) reserve uringLargeClassMapBytes so
// that many partitions' buffers stay in ring memory.
func uringClassMapBytesOf(classIndex int) int {
	if uringClassBytesMin<<classIndex >= uringLargeClassBytesMin {
		return uringLargeClassMapBytes
	}
	return uringClassMapBytes
}

// uringFixedClass reports whether a class's pool sits in the ring's
// fixed-buffer table.
func uringFixedClass(classIndex int) bool {
	return uringClassBytesMin<<classIndex >= uringFixedClassBytesMin
}

// mapFixed maps the pools of the fixed classes up front (address space
// only: pages fault in on first touch) and returns them, for the ring's
// sparse fixed-buffer table, which is registered once.
func (m *uringMemory) mapFixed() []*ring.Pool {
	var pools []*ring.Pool
	for i := range m.classes {
		if uringFixedClass(i) && m.mapClass(i) {
			pools = append(pools, m.classes[i].pool)
		}
	}
	return pools
}

// mapClass maps the class's pool unless it is mapped or failed before.
func (m *uringMemory) mapClass(classIndex int) bool {
	class := &m.classes[classIndex]
	if class.pool == nil && !class.failed {
		classBytes := uringClassBytesMin << classIndex
		count := min(max(1, uringClassMapBytesOf(classIndex)/classBytes), ring.PoolBuffersMax)
		pool, err := ring.NewPool(count, classBytes)
		if err != nil {
			class.failed = true
			return false
		}
		class.pool, class.handles = pool, make([]ring.Buf, count)
	}
	return class.pool != nil
}

const (
	uringClassBytesMin = ring.PageBytes
	uringClassCount    = 15 // 4 KiB … 64 MiB
)

func uringClassOf(size int) int {
	class := 0
	for uringClassBytesMin<<class < size {
		class++
	}
	return class
}

// alloc returns a buffer of size bytes and whether it is pooled (false:
// its class is spent or unmapped, so it is Go memory).
func (m *uringMemory) alloc(size int) ([]byte, bool) {
	invariant.Assert(size > 0, "alloc size is positive")
	invariant.Assert(size <= frameBytesMax, "alloc fits the frame limit")
	if bytes, ok := m.acquire(uringClassOf(size)); ok {
		return bytes[:size], true
	}
	return make([]byte, size, uringClassBytesMin<<uringClassOf(size)), false
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
	if !m.mapClass(classIndex) {
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
		if class.pool == nil || class.base == 0 { // base is known from the first Acquire
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
