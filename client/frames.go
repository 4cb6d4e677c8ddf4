package client

import (
	"math/bits"
	"sync"

	"github.com/whippetio/whippet/wire"
)

// framePools recycle request frames by power-of-two size class, so a
// producer sending batch after batch does not allocate a frame per send.
// A frame returns to its pool once its call is finished: after the write
// nothing reads it, except a replay, which happens before the release.
var framePools [bits.UintSize]sync.Pool

func frameClass(size int) int { return bits.Len(uint(size - 1)) }

// takeFrame returns a buffer of exactly size bytes. The pool holds the
// buffers' boxes, so taking and releasing one allocates nothing.
func takeFrame(size int) *[]byte {
	class := frameClass(size)
	if pooled, ok := framePools[class].Get().(*[]byte); ok {
		*pooled = (*pooled)[:size]
		return pooled
	}
	frame := make([]byte, size, 1<<class)
	return &frame
}

// releaseFrame hands a frame taken with takeFrame back to its pool.
func releaseFrame(frame *[]byte) {
	if frame == nil {
		return
	}
	size := cap(*frame)
	if size == 0 || size > wire.FrameBytesMax || size&(size-1) != 0 {
		return // not a pooled size class
	}
	*frame = (*frame)[:size]
	framePools[frameClass(size)].Put(frame)
}

// vectorPool recycles the request vectors of vectored sends (see
// prepare): a vector keeps the head and piece arrays of its largest batch.
var vectorPool = sync.Pool{New: func() any { return new(wire.RequestVector) }}

// release hands the call's request, frame or vector, back to its pool. A
// released vector holds no view of the caller's payloads. The caller's
// last write of the request has returned by then: writes run on the
// calling goroutine (conn.send).
func (p *call) release() {
	releaseFrame(p.frame)
	p.frame = nil
	if p.vector != nil {
		p.vector.Release()
		vectorPool.Put(p.vector)
		p.vector = nil
	}
}
