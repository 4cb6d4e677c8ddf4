package shard

import (
	"errors"
	"time"

	"github.com/whippetio/whippet/internal/invariant"
)

// ErrTimersFull reports a shard already holding timersPerShardMax timers.
var ErrTimersFull = errors.New("shard: too many timers")

// TimerID names a pending timer of one shard; zero names none.
type TimerID uint64

// timer is one pending callback. A periodic timer keeps its ID across
// firings.
type timer struct {
	deadline time.Time
	period   time.Duration // zero for a one-shot timer
	callback func(now time.Time)
	id       TimerID
	index    int // position in the heap
}

// timers is a shard's timer heap, driven by its loop: the loop waits at
// most until next() and calls fire() every turn. Callbacks run on the
// shard thread, so they may touch the shard's state freely.
type timers struct {
	heap   []*timer
	byID   map[TimerID]*timer
	lastID TimerID
	// free recycles removed timers, so a timer armed per episode (the
	// cache's drain, a storage delivery) allocates nothing once warm.
	free []*timer
}

func newTimers() timers {
	return timers{heap: make([]*timer, 0, 64), byID: make(map[TimerID]*timer)}
}

// add schedules callback at deadline, then every period when period > 0.
func (t *timers) add(deadline time.Time, period time.Duration, callback func(time.Time)) (TimerID, error) {
	invariant.Assert(callback != nil, "timer has a callback")
	invariant.Assert(period >= 0, "timer period is not negative")
	if len(t.heap) >= timersPerShardMax {
		return 0, ErrTimersFull
	}
	t.lastID++
	var entry *timer
	if last := len(t.free) - 1; last >= 0 {
		entry, t.free[last] = t.free[last], nil
		t.free = t.free[:last]
	} else {
		entry = &timer{}
	}
	*entry = timer{deadline: deadline, period: period, callback: callback, id: t.lastID, index: len(t.heap)}
	t.heap = append(t.heap, entry)
	t.byID[entry.id] = entry
	t.up(entry.index)
	return entry.id, nil
}

// cancel removes a pending timer and reports whether it was pending.
func (t *timers) cancel(id TimerID) bool {
	entry, ok := t.byID[id]
	if !ok {
		return false
	}
	t.remove(entry)
	return true
}

// next returns the earliest deadline, if any timer is pending.
func (t *timers) next() (time.Time, bool) {
	if len(t.heap) == 0 {
		return time.Time{}, false
	}
	return t.heap[0].deadline, true
}

// fire runs every callback due at now and returns how many ran. A periodic
// timer that fell more than a period behind skips the missed firings.
func (t *timers) fire(now time.Time) int {
	fired := 0
	for budget := len(t.heap); budget > 0 && len(t.heap) > 0; budget-- {
		entry := t.heap[0]
		if entry.deadline.After(now) {
			break
		}
		if entry.period > 0 {
			entry.deadline = entry.deadline.Add(entry.period)
			if !entry.deadline.After(now) {
				entry.deadline = now.Add(entry.period)
			}
			t.down(0)
		} else {
			t.remove(entry)
		}
		entry.callback(now)
		fired++
	}
	return fired
}

func (t *timers) len() int { return len(t.heap) }

func (t *timers) remove(entry *timer) {
	invariant.Assert(t.heap[entry.index] == entry, "timer index matches the heap")
	last := len(t.heap) - 1
	at := entry.index
	t.swap(at, last)
	t.heap[last] = nil
	t.heap = t.heap[:last]
	delete(t.byID, entry.id)
	if at < last {
		t.down(at)
		t.up(at)
	}
	// fire reads a one-shot timer's callback after removing it: a callback
	// that arms a timer may reuse this one only once the call started.
	if len(t.free) < timersFreeMax {
		t.free = append(t.free, entry)
	}
}

// less orders by deadline, then by ID, so timers due at the same instant
// fire in the order they were set.
func (t *timers) less(i, j int) bool {
	a, b := t.heap[i], t.heap[j]
	if order := a.deadline.Compare(b.deadline); order != 0 {
		return order < 0
	}
	return a.id < b.id
}

func (t *timers) swap(i, j int) {
	t.heap[i], t.heap[j] = t.heap[j], t.heap[i]
	t.heap[i].index = i
	t.heap[j].index = j
}

func (t *timers) up(at int) {
	for at > 0 {
		parent := (at - 1) / 2
		if !t.less(at, parent) {
			return
		}
		t.swap(at, parent)
		at = parent
	}
}

func (t *timers) down(at int) {
	for {
		smallest := at
		for _, child := range [2]int{2*at + 1, 2*at + 2} {
			if child < len(t.heap) && t.less(child, smallest) {
				smallest = child
			}
		}
		if smallest == at {
			return
		}
		t.swap(at, smallest)
		at = smallest
	}
}
