package engine

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// CacheBudget is the memory every shard's Cache draws from: one limit for
// the process, because a partition's data lives on one shard and a busy
// shard should be able to cache far more than an even split would give it.
//
// A cache claims memory in whole chunks when it grows its arena
// and gives it back when it shrinks. A claim within the limit always
// succeeds. A claim past the limit succeeds only while the claiming shard
// holds less than its fair share (limit / shards): then the budget is
// under pressure, and every cache holding more than its share shrinks to
// it at its next insert or Trim, so the overshoot is bounded by one
// share and short-lived. Safe for concurrent use: each shard's thread
// claims and releases through atomics.
type CacheBudget struct {
	limitBytes int64
	chunkBytes int64
	usedBytes  atomic.Int64
	pressure   atomic.Bool
}

// NewCacheBudget returns a budget of limitBytes, rounded down to whole
// chunks: huge pages, or blocks for a budget under cacheSmallBytes (one
// that small would hold too few huge pages to share). A budget of less
// than a block caches nothing.
func NewCacheBudget(limitBytes int64) *CacheBudget {
	invariant.Assert(limitBytes >= 0, "cache budget is not negative")
	chunk := int64(cacheChunkBytes)
	if limitBytes < cacheSmallBytes {
		chunk = blockBytes
	}
	return &CacheBudget{limitBytes: limitBytes / chunk * chunk, chunkBytes: chunk}
}

// LimitBytes is the budget's limit.
func (b *CacheBudget) LimitBytes() int64 { return b.limitBytes }

// UsedBytes is the memory every cache holds now (their arenas' claimed
// capacity); any thread.
func (b *CacheBudget) UsedBytes() int64 { return b.usedBytes.Load() }

// claim takes bytes for a cache that holds ownBytes and whose fair share
// is fairBytes; false when the limit is reached and the cache holds its
// share already.
func (b *CacheBudget) claim(bytes int64, ownBytes int64, fairBytes int64) bool {
	invariant.Assert(bytes > 0, "a claim takes bytes")
	if b.usedBytes.Add(bytes) <= b.limitBytes {
		return true
	}
	if ownBytes+bytes <= fairBytes {
		b.pressure.Store(true)
		return true
	}
	b.usedBytes.Add(-bytes)
	return false
}

// release gives back bytes claimed before.
func (b *CacheBudget) release(bytes int64) {
	used := b.usedBytes.Add(-bytes)
	invariant.Assert(used >= 0, "released bytes were claimed")
	if used <= b.limitBytes {
		b.pressure.Store(false)
	}
}

// cacheArena is a cache's memory: one anonymous mapping outside the Go
// heap (a large cache on the heap would be scanned and, through GOGC,
// doubled), reserved at the budget's size as address space only. Pages
// become resident as the cache grows and leave when it shrinks
// (MADV_DONTNEED).
//
// Faulting in fresh memory costs more than the copy into it (0.35 ms per
// MiB measured on a VM, against 0.1 ms for the copy), and that cost would
// land on the shard's thread between a write's completion and its
// acknowledgement. So a populator goroutine faults the claimed pages in
// ahead of the copies (MADV_POPULATE_WRITE, a piece at a time), and the
// cache claims its growth a lead ahead of its need. The populator's
// thread runs under SCHED_IDLE: it uses the time the shards and their
// clients leave, and never takes a core from a shard mid-request. A copy that outruns
// it faults its pages itself: the populator only maps pages, it never
// writes their contents, so the two may touch one page in either order.
// The arena does not ask for transparent huge pages: where the kernel
// defragments madvised regions on fault, a huge page may stall in direct
// compaction on a host whose memory is full of page cache.
type cacheArena struct {
	mapping []byte // what mmap returned (munmap takes it back)
	data    []byte // the chunk-aligned part records go in
	// populated bounds what the populator may fault in: the claimed
	// capacity. lock is held by the populator while it faults a chunk in
	// and by trim while it lowers the bound, so no page is faulted in
	// after trim gave it back.
	populated atomic.Int64
	lock      sync.Mutex
	requests  chan [2]int // ranges to fault in, by the shard's thread
	stopped   chan struct{}
}

func mapArena(bytes int) (*cacheArena, error) {
	invariant.Assert(bytes > 0, "an arena has bytes")
	bytes = (bytes + cacheChunkBytes - 1) / cacheChunkBytes * cacheChunkBytes
	mapping, err := unix.Mmap(-1, 0, bytes+cacheChunkBytes, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, err
	}
	start := alignChunk(mapping)
	data := mapping[start : start+bytes : start+bytes]
	arena := &cacheArena{mapping: mapping, data: data, requests: make(chan [2]int, cachePopulateRequestsMax),
		stopped: make(chan struct{})}
	go arena.populator()
	return arena, nil
}

// trim gives the pages of data[from:to] back to the kernel; they read as
// zeros and cost memory again only when touched. from is the new
// capacity: the populator stops below it.
func (a *cacheArena) trim(from int, to int) {
	invariant.Assert(from >= 0 && from <= to && to <= len(a.data), "a trim lies within the arena")
	a.lock.Lock()
	a.populated.Store(int64(from))
	a.lock.Unlock()
	if from == to {
		return
	}
	err := unix.Madvise(a.data[from:to], unix.MADV_DONTNEED)
	invariant.Assert(err == nil, "madvise of a mapping the cache owns failed")
}

// populate asks the populator to fault in data[from:to], the claimed
// growth; when it is behind by cachePopulateRequestsMax ranges the copies
// fault their pages themselves.
func (a *cacheArena) populate(from int, to int) {
	invariant.Assert(from >= 0 && from <= to && to <= len(a.data), "a populate lies within the arena")
	a.populated.Store(int64(to))
	select {
	case a.requests <- [2]int{from, to}:
	default:
	}
}

// populator faults in requested ranges a chunk at a time, below the
// populated bound, until unmap closes its requests.
func (a *cacheArena) populator() {
	defer close(a.stopped)
	// The thread stays locked (it exits with the goroutine), so its
	// idle policy never reaches another goroutine.
	runtime.LockOSThread()
	// A hint: where the policy is refused the populator runs at normal
	// priority, which costs the shards some of their time while it works.
	_ = unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_IDLE}, 0)
	for request := range a.requests {
		for at := request[0]; at < request[1]; at += cachePopulateBytes {
			end := min(at+cachePopulateBytes, request[1])
			a.lock.Lock()
			if int64(end) <= a.populated.Load() {
				// A hint: on a kernel without MADV_POPULATE_WRITE (before
				// 5.14) the copies fault the pages in one by one.
				_ = unix.Madvise(a.data[at:end], unix.MADV_POPULATE_WRITE)
			}
			a.lock.Unlock()
		}
	}
}

// unmap stops the populator, then unmaps the arena.
func (a *cacheArena) unmap() {
	a.lock.Lock()
	a.populated.Store(0) // the populator skips what it still has queued
	a.lock.Unlock()
	close(a.requests)
	<-a.stopped
	err := unix.Munmap(a.mapping)
	invariant.Assert(err == nil, "munmap of a mapping the cache owns failed")
}

// alignChunk returns where the first chunk-aligned address of mapping is.
func alignChunk(mapping []byte) int {
	address := uintptr(unsafe.Pointer(unsafe.SliceData(mapping)))
	return int((cacheChunkBytes - address%cacheChunkBytes) % cacheChunkBytes)
}
