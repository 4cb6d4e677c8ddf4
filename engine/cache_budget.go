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
// holds less than its fair share (limit / shards) and the caches hold less
// than the limit plus one share: then the budget is
// under pressure, and every cache holding more than its share shrinks to
// it at its next insert or Trim, so the overshoot is bounded by one
// share and short-lived. Safe for concurrent use: each shard's thread
// claims and releases through atomics.
type CacheBudget struct {
	limitBytes int64
	chunkBytes int64
	usedBytes  atomic.Int64
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
// share already, or the caches hold the limit plus one share.
func (b *CacheBudget) claim(bytes int64, ownBytes int64, fairBytes int64) bool {
	invariant.Assert(bytes > 0, "a claim takes bytes")
	// Compare-and-swap, so a refused claim never raises the total even
	// for an instant: Trim reads the total (a cache above its share
	// seeing it past the limit shrinks).
	for {
		used := b.usedBytes.Load()
		if !b.grants(used, bytes, ownBytes, fairBytes) {
			return false
		}
		if b.usedBytes.CompareAndSwap(used, used+bytes) {
			return true
		}
	}
}

// grants reports whether a claim of bytes by a cache that holds ownBytes
// of fairBytes is granted while the caches hold used: within the limit,
// or within the cache's share while the caches hold at most the limit
// plus one share. Past the limit by at most one share in all: several
// shards claiming their share before the one holding the memory trims
// would otherwise take up to the limit again.
func (b *CacheBudget) grants(used, bytes, ownBytes, fairBytes int64) bool {
	return used+bytes <= b.limitBytes || (ownBytes+bytes <= fairBytes && used+bytes <= b.limitBytes+fairBytes)
}

// release gives back bytes claimed before.
func (b *CacheBudget) release(bytes int64) {
	used := b.usedBytes.Add(-bytes)
	invariant.Assert(used >= 0, "released bytes were claimed")
}

// cacheArena is a cache's memory: one anonymous mapping outside the Go
// heap (a large cache on the heap would be scanned and, through GOGC,
// doubled), reserved at the budget's size as address space only. Pages
// become resident as the cache grows and leave when it shrinks
// (MADV_DONTNEED).
//
// Faulting in fresh memory costs more than the copy into it (0.35-0.6
// ms per MiB measured on a VM, against 0.1 ms for the copy), and on the
// shard's thread that cost would delay whatever request came next. So a
// populator goroutine faults claimed pages in (MADV_POPULATE_WRITE, a
// piece at a time) and the cache claims its growth a lead ahead of its
// need; the shard's copies (drained after the acknowledgements, a slice
// at a time) fault in only what the populator has not reached. The
// populator runs at the process's priority: on an idle host it takes
// spare CPU, on a busy one a fair share, and the scheduler favours the
// shards' threads, which sleep between completions, over it, which does
// not. Placing records only in memory it had made ready (and at nice 10)
// was tried: on a busy host the cache then wrapped each time it caught
// up with the populator, and a consumer reading back a 2 GB prefill
// found most of it on disk. The arena does not ask for
// transparent huge pages: where the kernel defragments madvised regions
// on fault, a huge page may stall in direct compaction on a host whose
// memory is full of page cache.
type cacheArena struct {
	mapping []byte // what mmap returned (munmap takes it back)
	data    []byte // the chunk-aligned part records go in
	// claimed bounds what the populator may fault in (the cache's claimed
	// capacity); ready is how much of the arena, from its start, it has
	// faulted in. lock orders the populator's reads and updates of both
	// around a piece with trim's lowering and populate's raising of them,
	// so a page the populator faults in after trim gave it back is given
	// back again, and only while it is still not claimed.
	claimed atomic.Int64
	ready   atomic.Int64
	lock    sync.Mutex
	// stopping (under lock) makes the populator skip what is queued and
	// give nothing back: the arena may stay mapped for sends and writes
	// still reading it (Cache.Release with pins), whose bytes a late
	// MADV_DONTNEED would zero.
	stopping bool
	requests chan int // claimed ends to fault in up to, by the shard's thread
	stopped  chan struct{}
	// populatorThread is the populator's thread id once it runs (tests).
	populatorThread atomic.Int32
}

// mapArena maps an arena of bytes; with ahead a populator goroutine
// faults in claimed memory, else the claimer does (populateNow).
func mapArena(bytes int, ahead bool) (*cacheArena, error) {
	invariant.Assert(bytes > 0, "an arena has bytes")
	bytes = (bytes + cacheChunkBytes - 1) / cacheChunkBytes * cacheChunkBytes
	mapping, err := unix.Mmap(-1, 0, bytes+cacheChunkBytes, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, err
	}
	start := alignChunk(mapping)
	data := mapping[start : start+bytes : start+bytes]
	arena := &cacheArena{mapping: mapping, data: data}
	if ahead {
		arena.requests, arena.stopped = make(chan int, cachePopulateRequestsMax), make(chan struct{})
		go arena.populator()
	}
	return arena, nil
}

// readyBytes is the prefix of the arena the populator faulted in.
func (a *cacheArena) readyBytes() int { return int(a.ready.Load()) }

// trim gives the pages of data[from:to] back to the kernel; they read as
// zeros and cost memory again only when touched. from is the new
// capacity: the populator stops below it.
func (a *cacheArena) trim(from int, to int) {
	invariant.Assert(from >= 0 && from <= to && to <= len(a.data), "a trim lies within the arena")
	a.lock.Lock()
	a.claimed.Store(int64(from))
	a.ready.Store(min(a.ready.Load(), int64(from)))
	a.lock.Unlock()
	if from == to {
		return
	}
	err := unix.Madvise(a.data[from:to], unix.MADV_DONTNEED)
	invariant.Assert(err == nil, "madvise of a mapping the cache owns failed")
}

// populateNow faults in data[from:to] on the calling thread (an arena
// without a populator); from is where the ready memory ends.
func (a *cacheArena) populateNow(from int, to int) {
	invariant.Assert(a.requests == nil, "an arena with a populator populates ahead")
	invariant.Assert(int64(from) == a.ready.Load() && from <= to, "populating continues the ready memory")
	a.claimed.Store(int64(to))
	for a.populatePiece(to) {
	}
}

// populate asks the populator to fault in data[from:to], the claimed
// growth. When it is behind by cachePopulateRequestsMax requests this
// one is dropped: the next covers it. The bound is raised under lock:
// the populator gives back what it faulted in above the bound under
// lock too, and must not do so to memory the cache has claimed again
// and copies records into.
func (a *cacheArena) populate(from int, to int) {
	invariant.Assert(from >= 0 && from <= to && to <= len(a.data), "a populate lies within the arena")
	a.lock.Lock()
	a.claimed.Store(int64(to))
	a.lock.Unlock()
	select {
	case a.requests <- to:
	default:
	}
}

// populator faults in requested ranges a piece at a time, below the
// claimed bound, until unmap closes its requests. It runs on a thread of
// its own at the lowest CPU priority (populatorNice): faulting in fresh
// memory costs ~0.4 ms per MiB on the VM measured, and at normal
// priority it competed for the CPU with the shards, the clients and the
// kernel's I/O workers on the acknowledgement's path. When it lags, the
// cache's copies fault the pages in themselves.
func (a *cacheArena) populator() {
	defer close(a.stopped)
	// The thread exits with the goroutine (it stays locked), so no other
	// goroutine ever runs at this priority.
	runtime.LockOSThread()
	thread := unix.Gettid()
	_ = unix.Setpriority(unix.PRIO_PROCESS, thread, populatorNice) // unprivileged: only lowers the priority
	a.populatorThread.Store(int32(thread))
	for request := range a.requests {
		// From where the arena is ready, not from the request's start: a
		// range dropped while the populator lagged, or skipped after a
		// trim, is covered by the next one.
		for a.populatePiece(request) {
		}
	}
}

// stopPopulator ends the populator goroutine (and its thread), if any,
// and waits for it.
func (a *cacheArena) stopPopulator() {
	a.lock.Lock()
	a.stopping = true
	a.ready.Store(0)
	a.lock.Unlock()
	if a.requests != nil {
		close(a.requests)
		<-a.stopped
		a.requests = nil
	}
}

// populatePiece faults in the next piece below target and reports
// whether more remain. The lock is not held while the pages fault in: the
// populator runs at the lowest priority, and a trim or a claim on a
// shard's thread waits at most for its short sections around them. A
// trim that lowered the bound meanwhile is honoured after the fact: what
// the piece faulted in above it is given back again.
func (a *cacheArena) populatePiece(target int) bool {
	from, to := a.pieceStart(target)
	if to <= from {
		return false
	}
	// On a kernel without MADV_POPULATE_WRITE (before 5.14) this does
	// nothing.
	// Pages are never written here (the shard may be copying into them):
	// without it they fault in on the copies.
	_ = unix.Madvise(a.data[from:to], unix.MADV_POPULATE_WRITE)
	a.pieceEnd(from, to)
	return true
}

// pieceStart returns the range the next piece faults in, empty when
// there is none or the populator is stopping.
func (a *cacheArena) pieceStart(target int) (from, to int) {
	a.lock.Lock()
	defer a.lock.Unlock()
	from = int(a.ready.Load())
	if a.stopping {
		return from, from
	}
	return from, min(from+cachePopulateBytes, target, int(a.claimed.Load()))
}

// pieceEnd gives back what the piece [from, to) faulted in above a bound
// a trim lowered meanwhile, and advances ready.
func (a *cacheArena) pieceEnd(from, to int) {
	a.lock.Lock()
	defer a.lock.Unlock()
	if a.stopping {
		return
	}
	claimed := int(a.claimed.Load())
	if claimed < to {
		err := unix.Madvise(a.data[max(from, claimed):to], unix.MADV_DONTNEED)
		invariant.Assert(err == nil, "madvise of a mapping the cache owns failed")
	}
	if int(a.ready.Load()) == from {
		a.ready.Store(int64(min(to, claimed)))
	}
}

// unmap stops the populator, then unmaps the arena.
func (a *cacheArena) unmap() {
	a.stopPopulator()
	err := unix.Munmap(a.mapping)
	invariant.Assert(err == nil, "munmap of a mapping the cache owns failed")
}

// mapEntries maps a cache's entry ring outside the Go heap: 10 MiB of
// address space per shard whose pages cost memory only once entries are
// written there (a heap slice would be zeroed, and so made resident, when
// it reuses memory the heap held before, e.g. startup's password hash).
func mapEntries(count int) ([]cacheEntry, error) {
	bytes := count * int(unsafe.Sizeof(cacheEntry{}))
	mapping, err := unix.Mmap(-1, 0, bytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*cacheEntry)(unsafe.Pointer(unsafe.SliceData(mapping))), count), nil
}

func unmapEntries(entries []cacheEntry) {
	if entries == nil {
		return
	}
	bytes := len(entries) * int(unsafe.Sizeof(cacheEntry{}))
	err := unix.Munmap(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(entries))), bytes))
	invariant.Assert(err == nil, "munmap of the entries the cache owns failed")
}

// alignChunk returns where the first chunk-aligned address of mapping is.
func alignChunk(mapping []byte) int {
	address := uintptr(unsafe.Pointer(unsafe.SliceData(mapping)))
	return int((cacheChunkBytes - address%cacheChunkBytes) % cacheChunkBytes)
}
