package engine

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// populatorThread waits for arena's populator to run and returns its
// thread id.
func populatorThread(t *testing.T, arena *cacheArena) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for arena.populatorThread.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the populator's thread did not start")
		}
		time.Sleep(time.Millisecond)
	}
	return int(arena.populatorThread.Load())
}

// threadNice reads thread's nice value (/proc/self/task/<id>/stat, field
// 19); ok is false once the thread has exited.
func threadNice(t *testing.T, thread int) (nice int, ok bool) {
	t.Helper()
	stat, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(thread) + "/stat")
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) { // gone, or going
		return 0, false
	}
	if err != nil {
		t.Skipf("no /proc/self/task: %v", err)
	}
	// Fields after the command, which is in parentheses and may hold spaces.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	nice, err = strconv.Atoi(fields[16])
	if err != nil {
		t.Fatalf("thread %d: nice %q: %v", thread, fields[16], err)
	}
	return nice, true
}

// TestPopulatorRunsAtLowestPriority: the arena's populator thread runs at
// nice populatorNice, so faulting in memory ahead of need yields the CPU to
// the shards, the clients and the kernel's I/O workers; it faults in what
// it is asked to.
func TestPopulatorRunsAtLowestPriority(t *testing.T) {
	arena, err := mapArena(4*cacheChunkBytes, true)
	if err != nil {
		t.Fatal(err)
	}
	defer arena.unmap()
	arena.populate(0, cachePopulateBytes)
	thread := populatorThread(t, arena)
	if nice, ok := threadNice(t, thread); !ok || nice != populatorNice {
		t.Fatalf("the populator's thread %d: nice %d (alive %v), want %d", thread, nice, ok, populatorNice)
	}
	deadline := time.Now().Add(5 * time.Second)
	for arena.readyBytes() < cachePopulateBytes && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if arena.readyBytes() < cachePopulateBytes {
		t.Fatalf("the populator faulted in %d of %d bytes", arena.readyBytes(), cachePopulateBytes)
	}
}

// TestReleaseWithPinsStopsThePopulator: a cache released while a send
// still holds a record pinned keeps its arena mapped, but its populator
// ends all the same, and so does its thread. Only when the runtime ran
// the populator on the process's main thread does that thread stay: Go
// parks a locked main thread whose goroutine ended instead of ending it.
func TestReleaseWithPinsStopsThePopulator(t *testing.T) {
	cache := NewCache(NewCacheBudget(8<<20), 1)
	cache.PopulateAhead()
	sequence, ok := cache.insert(make([]byte, 64<<10))
	if !ok {
		t.Fatal("the cache refused a record")
	}
	if cache.pin(sequence) == nil {
		t.Fatal("the record could not be pinned")
	}
	arena := cache.arena
	thread := populatorThread(t, arena)
	cache.Release()
	select {
	case <-arena.stopped:
	default:
		t.Fatal("the populator goroutine runs on after the release")
	}
	if thread == os.Getpid() {
		t.Logf("the populator ran on the main thread %d, which the runtime parks", thread)
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, alive := threadNice(t, thread); !alive {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the populator's thread %d is alive after the release", thread)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestStoppedPopulatorGivesNothingBack: a populator piece under way when
// the populator stops (Cache.Release with pins: the arena stays mapped
// for what still reads it) leaves the bytes the shard copied into its
// range alone, and the stopped populator starts no further piece.
func TestStoppedPopulatorGivesNothingBack(t *testing.T) {
	arena, err := mapArena(4<<20, false)
	if err != nil {
		t.Skipf("no arena: %v", err)
	}
	defer arena.unmap()
	arena.claimed.Store(1 << 20)
	from, to := arena.pieceStart(1 << 20)
	if to <= from {
		t.Fatalf("no piece to fault in: [%d, %d)", from, to)
	}
	for index := from; index < to; index++ {
		arena.data[index] = byte(index) | 1 // a record copied in ahead of the populator
	}
	arena.stopPopulator()
	arena.pieceEnd(from, to)
	for index := from; index < to; index++ {
		if arena.data[index] != byte(index)|1 {
			t.Fatalf("byte %d changed to %d after the populator stopped", index, arena.data[index])
		}
	}
	if next, end := arena.pieceStart(1 << 20); end > next {
		t.Fatalf("a stopped populator starts a piece [%d, %d)", next, end)
	}
}
