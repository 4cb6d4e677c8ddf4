package shard

import (
	"math/bits"

	"github.com/whippetio/whippet/internal/invariant"
)

// pool recycles a shard's frame and reply buffers by power-of-two size
// class, so the steady request path allocates nothing. Only its shard's
// thread uses it.
type pool struct {
	classes [poolClassCount][][]byte
}

// poolClassCount covers poolClassBytesMin up to frameBytesMax.
const poolClassCount = 18

func poolClass(size int) int {
	if size <= poolClassBytesMin {
		return 0
	}
	return bits.Len(uint(size-1)) - bits.Len(uint(poolClassBytesMin-1))
}

// get returns a buffer of length size whose capacity is its class's size.
func (p *pool) get(size int) []byte {
	invariant.Assert(size > 0, "pool buffer size is positive")
	invariant.Assert(size <= frameBytesMax, "pool buffer fits the frame limit")
	class := poolClass(size)
	free := p.classes[class]
	if last := len(free) - 1; last >= 0 {
		buf := free[last]
		free[last] = nil
		p.classes[class] = free[:last]
		return buf[:size]
	}
	return make([]byte, size, poolClassBytesMin<<class)
}

// put takes back a buffer; one whose capacity is not a class size (not
// from get) or whose class is full is left to the garbage collector.
func (p *pool) put(buf []byte) {
	size := cap(buf)
	if size < poolClassBytesMin || size > frameBytesMax || size&(size-1) != 0 {
		return
	}
	class := poolClass(size)
	if len(p.classes[class]) < poolBuffersPerClassMax {
		p.classes[class] = append(p.classes[class], buf[:0])
	}
}
