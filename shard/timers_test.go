package shard

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestTimersAgainstModel runs seeded random adds, cancels and fires on the
// heap and on a plain list, and checks both fire the same timers in the
// same order (deadline, then creation order).
func TestTimersAgainstModel(t *testing.T) {
	random := rand.New(rand.NewPCG(testSeed(t), 2))
	heap := newTimers()
	type entry struct {
		deadline time.Time
		id       TimerID
	}
	var model []entry
	var fired []TimerID
	base := time.Unix(1_000_000, 0)
	now := base
	for step := range 20_000 {
		switch op := random.IntN(10); {
		case op < 5 && heap.len() < timersPerShardMax:
			deadline := now.Add(time.Duration(random.IntN(50)) * time.Millisecond)
			var id TimerID
			id, err := heap.add(deadline, 0, func(time.Time) { fired = append(fired, id) })
			if err != nil {
				t.Fatal(err)
			}
			model = append(model, entry{deadline, id})
		case op < 7 && len(model) > 0:
			victim := random.IntN(len(model))
			if !heap.cancel(model[victim].id) {
				t.Fatalf("step %d: pending timer %d not cancelled", step, model[victim].id)
			}
			model = slices.Delete(model, victim, victim+1)
		default:
			now = now.Add(time.Duration(random.IntN(20)) * time.Millisecond)
			fired = fired[:0]
			heap.fire(now)
			slices.SortStableFunc(model, func(a, b entry) int {
				if c := a.deadline.Compare(b.deadline); c != 0 {
					return c
				}
				return int(a.id) - int(b.id)
			})
			var want []TimerID
			for len(model) > 0 && !model[0].deadline.After(now) {
				want = append(want, model[0].id)
				model = model[1:]
			}
			if !slices.Equal(fired, want) {
				t.Fatalf("step %d: fired %v, want %v", step, fired, want)
			}
		}
		if heap.len() != len(model) {
			t.Fatalf("step %d: heap holds %d timers, model %d", step, heap.len(), len(model))
		}
	}
}

// TestTimersPeriodicSkipsMissed: a periodic timer that fell several
// periods behind fires once and is rescheduled one period after now.
func TestTimersPeriodicSkipsMissed(t *testing.T) {
	heap := newTimers()
	base := time.Unix(1_000_000, 0)
	count := 0
	if _, err := heap.add(base.Add(time.Second), time.Second, func(time.Time) { count++ }); err != nil {
		t.Fatal(err)
	}
	if fired := heap.fire(base.Add(10 * time.Second)); fired != 1 || count != 1 {
		t.Fatalf("fired %d (callback %d), want one firing for the missed periods", fired, count)
	}
	next, ok := heap.next()
	if !ok || !next.Equal(base.Add(11*time.Second)) {
		t.Fatalf("next firing at %v, want one period after now", next.Sub(base))
	}
}
