package engine

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPopulatorRunsAtLowestPriority: the arena's populator thread runs at
// nice populatorNice, so faulting in memory ahead of need yields the CPU to
// the shards, the clients and the kernel's I/O workers.
func TestPopulatorRunsAtLowestPriority(t *testing.T) {
	before := threadsAtNice(t, populatorNice)
	arena, err := mapArena(4*cacheChunkBytes, true)
	if err != nil {
		t.Fatal(err)
	}
	defer arena.unmap()
	arena.populate(0, cachePopulateBytes)
	deadline := time.Now().Add(5 * time.Second)
	for arena.readyBytes() < cachePopulateBytes && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if arena.readyBytes() < cachePopulateBytes {
		t.Fatalf("the populator faulted in %d of %d bytes", arena.readyBytes(), cachePopulateBytes)
	}
	if after := threadsAtNice(t, populatorNice); after != before+1 {
		t.Fatalf("%d threads at nice %d with the populator running, %d before", after, populatorNice, before)
	}
}

// threadsAtNice counts this process's threads whose nice value is nice
// (/proc/self/task/*/stat, field 19).
func threadsAtNice(t *testing.T, nice int) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc/self/task: %v", err)
	}
	count := 0
	for _, task := range tasks {
		stat, err := os.ReadFile("/proc/self/task/" + task.Name() + "/stat")
		if err != nil {
			continue // the thread exited
		}
		// Fields after the command, which is in parentheses and may hold spaces.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if value, err := strconv.Atoi(fields[16]); err == nil && value == nice {
			count++
		}
	}
	return count
}

// TestReleaseWithPinsStopsThePopulator: a cache released while a send
// still holds a record pinned keeps its arena mapped, but its populator
// thread ends all the same.
func TestReleaseWithPinsStopsThePopulator(t *testing.T) {
	before := threadsAtNice(t, populatorNice)
	cache := NewCache(NewCacheBudget(8<<20), 1)
	cache.PopulateAhead()
	sequence, ok := cache.insert(make([]byte, 64<<10))
	if !ok {
		t.Fatal("the cache refused a record")
	}
	if cache.pin(sequence) == nil {
		t.Fatal("the record could not be pinned")
	}
	deadline := time.Now().Add(5 * time.Second)
	for threadsAtNice(t, populatorNice) == before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if threadsAtNice(t, populatorNice) != before+1 {
		t.Fatal("the populator's thread did not start")
	}
	cache.Release()
	for threadsAtNice(t, populatorNice) != before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if after := threadsAtNice(t, populatorNice); after != before {
		t.Fatalf("%d threads at nice %d after the release, %d before", after, populatorNice, before)
	}
}
