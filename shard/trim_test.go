package shard

import (
	"log/slog"
	"testing"
	"time"
)

// TestHeapTrimSpaced: the Go heap is given back when every shard idles,
// but at most once per heapTrimIntervalMin; an idle stretch that came too
// soon after the last one gets its heap trim on a later idle tick, and a
// stretch with another shard still busy waits for it.
func TestHeapTrimSpaced(t *testing.T) {
	rt := &Runtime{logger: slog.Default(), done: make(chan struct{})}
	shards := []*Shard{
		{id: 0, runtime: rt, logger: rt.logger, backend: &fakeBackend{}, timers: newTimers()},
		{id: 1, runtime: rt, logger: rt.logger, backend: &fakeBackend{}, timers: newTimers()},
	}
	rt.shards = shards
	first, other := shards[0], shards[1]
	start := time.Unix(1000, 0)
	other.onTrimTimer(start)
	first.onTrimTimer(start)
	if !first.heapTrimmed.Equal(start) || first.heapTrimDue {
		t.Fatalf("first idle stretch: heap trimmed at %v (due %v), want at once", first.heapTrimmed, first.heapTrimDue)
	}
	first.busy = true // a heartbeat arrives
	first.onTrimTimer(start.Add(time.Second))
	first.onTrimTimer(start.Add(2 * time.Second))
	if !first.heapTrimmed.Equal(start) || !first.heapTrimDue {
		t.Fatalf("idle again 2 s later: heap trimmed at %v (due %v), want deferred", first.heapTrimmed, first.heapTrimDue)
	}
	other.busy = true
	other.onTrimTimer(start.Add(heapTrimIntervalMin))
	later := start.Add(heapTrimIntervalMin + time.Second)
	first.onTrimTimer(later)
	if first.heapTrimmed.Equal(later) {
		t.Fatal("heap trimmed while shard 1 is busy")
	}
	other.onTrimTimer(later)
	first.onTrimTimer(later.Add(500 * time.Millisecond))
	if !first.heapTrimmed.Equal(later.Add(500*time.Millisecond)) || first.heapTrimDue {
		t.Fatalf("every shard idle past the interval: heap trimmed at %v (due %v)", first.heapTrimmed, first.heapTrimDue)
	}
	if other.heapTrimDue {
		t.Fatal("only shard 0 trims the heap")
	}
}
