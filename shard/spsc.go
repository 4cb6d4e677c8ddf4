package shard

import (
	"sync/atomic"

	"github.com/whippetio/whippet/internal/invariant"
)

// cacheLineBytes is the padding unit between the producer's and the
// consumer's fields. 128 covers adjacent-line prefetch on x86 and the
// 128-byte lines of some arm64 parts.
const cacheLineBytes = 128

type cacheLinePad [cacheLineBytes]byte

// Queue is a bounded lock-free single-producer/single-consumer ring of T.
//
// Exactly one goroutine may call Push/PushBatch and exactly one (other)
// goroutine may call Pop/PopBatch. The producer owns tail and its cached
// copy of head; the consumer owns head and its cached copy of tail; each
// pair sits on its own cache line so the two threads share a line only when
// one of them must refresh its cached view of the other's index. A full
// queue refuses the item (Push returns false): the caller applies
// backpressure, nothing is dropped.
type Queue[T any] struct {
	_          cacheLinePad
	tail       atomic.Uint64 // next slot the producer writes
	headCached uint64        // producer's last view of head
	_          cacheLinePad
	head       atomic.Uint64 // next slot the consumer reads
	tailCached uint64        // consumer's last view of tail
	_          cacheLinePad
	mask       uint64
	slots      []T
	_          cacheLinePad
}

// NewQueue returns an empty queue holding up to capacity items; capacity
// must be a power of two.
func NewQueue[T any](capacity int) *Queue[T] {
	invariant.Assert(capacity > 0, "queue capacity is positive")
	invariant.Assert(capacity&(capacity-1) == 0, "queue capacity is a power of two")
	return &Queue[T]{mask: uint64(capacity - 1), slots: make([]T, capacity)}
}

// Cap returns the number of items the queue holds when full.
func (q *Queue[T]) Cap() int { return len(q.slots) }

// Len returns a snapshot of the number of queued items; exact only when
// neither side is running.
func (q *Queue[T]) Len() int {
	head := q.head.Load()
	tail := q.tail.Load()
	invariant.Assert(tail >= head, "queue tail never falls behind head")
	return int(tail - head)
}

// Push appends item; it returns false, leaving the queue unchanged, when the
// queue is full. Producer only.
func (q *Queue[T]) Push(item T) bool {
	tail := q.tail.Load()
	if tail-q.headCached == uint64(len(q.slots)) {
		q.headCached = q.head.Load()
		if tail-q.headCached == uint64(len(q.slots)) {
			return false
		}
	}
	q.slots[tail&q.mask] = item
	q.tail.Store(tail + 1)
	return true
}

// PushBatch appends a prefix of items, as long as fits, publishing them
// with one store, and returns how many it appended. Producer only.
func (q *Queue[T]) PushBatch(items []T) int {
	tail := q.tail.Load()
	free := uint64(len(q.slots)) - (tail - q.headCached)
	if free < uint64(len(items)) {
		q.headCached = q.head.Load()
		free = uint64(len(q.slots)) - (tail - q.headCached)
	}
	count := min(uint64(len(items)), free)
	for i := range count {
		q.slots[(tail+i)&q.mask] = items[i]
	}
	if count > 0 {
		q.tail.Store(tail + count)
	}
	return int(count)
}

// Pop removes and returns the oldest item; ok is false when the queue is
// empty. Consumer only.
func (q *Queue[T]) Pop() (item T, ok bool) {
	head := q.head.Load()
	if head == q.tailCached {
		q.tailCached = q.tail.Load()
		if head == q.tailCached {
			return item, false
		}
	}
	var zero T
	slot := &q.slots[head&q.mask]
	item = *slot
	*slot = zero // drop the reference so the GC may reclaim what it points to
	q.head.Store(head + 1)
	return item, true
}

// PopBatch moves up to len(out) of the oldest items into out, releasing
// their slots with one store, and returns how many it moved. Consumer only.
func (q *Queue[T]) PopBatch(out []T) int {
	head := q.head.Load()
	if q.tailCached-head < uint64(len(out)) {
		q.tailCached = q.tail.Load()
	}
	count := min(uint64(len(out)), q.tailCached-head)
	var zero T
	for i := range count {
		slot := &q.slots[(head+i)&q.mask]
		out[i] = *slot
		*slot = zero
	}
	if count > 0 {
		q.head.Store(head + count)
	}
	return int(count)
}
