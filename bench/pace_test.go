package bench

import (
	"testing"
	"time"
)

// TestScheduleCorrectsCoordinatedOmission replays an open-loop actor whose
// server stalls once: latency measured from the due times charges the
// stall to every batch it delayed, where the closed-loop view sees one slow
// batch.
func TestScheduleCorrectsCoordinatedOmission(t *testing.T) {
	start := time.Unix(0, 0)
	plan := newSchedule(start, 1000) // 1000 msg/s, 100-message batches: one due every 100 ms
	service := func(batch int) time.Duration {
		if batch == 2 {
			return 450 * time.Millisecond // the stall
		}
		return 10 * time.Millisecond
	}
	var corrected, naive []time.Duration
	free := start // when the connection can send again (one batch in flight)
	for batch := range 6 {
		due := plan.take(100)
		if want := start.Add(time.Duration(batch) * 100 * time.Millisecond); !due.Equal(want) {
			t.Fatalf("batch %d due %v, want %v", batch, due, want)
		}
		begin := due
		if free.After(begin) {
			begin = free
		}
		done := begin.Add(service(batch))
		free = done
		corrected = append(corrected, done.Sub(due))
		naive = append(naive, done.Sub(begin))
	}
	wantCorrected := []time.Duration{10, 10, 450, 360, 270, 180}
	for index, want := range wantCorrected {
		if corrected[index] != want*time.Millisecond {
			t.Errorf("batch %d corrected latency %v, want %v", index, corrected[index], want*time.Millisecond)
		}
	}
	if naive[3] != 10*time.Millisecond {
		t.Errorf("the uncorrected view of batch 3 is %v: it hides the wait", naive[3])
	}
}

func TestScheduleVariableBatches(t *testing.T) {
	start := time.Unix(100, 0)
	plan := newSchedule(start, 2000)
	plan.take(100)
	plan.take(300)
	if due := plan.take(1); !due.Equal(start.Add(200 * time.Millisecond)) {
		t.Errorf("due %v: 400 messages at 2000 msg/s take 200 ms", due.Sub(start))
	}
}

// TestLimiter checks the token bucket: pre-filled, then paced at the rate.
func TestLimiter(t *testing.T) {
	now := time.Unix(0, 0)
	bucket := newLimiter(1_000_000, 100_000, now) // 1 MB/s, one 100 kB batch of burst
	if delay := bucket.delay(100_000, now); delay != 0 {
		t.Errorf("first batch waits %v, want 0 (pre-filled)", delay)
	}
	if delay := bucket.delay(100_000, now); delay != 100*time.Millisecond {
		t.Errorf("second batch waits %v, want 100ms", delay)
	}
	later := now.Add(time.Second)
	if delay := bucket.delay(50_000, later); delay != 0 {
		t.Errorf("after a second the bucket refilled, yet waits %v", delay)
	}
}

func TestBudget(t *testing.T) {
	batches := newBudget(3, false)
	taken := 0
	for batches.take(1 << 20) {
		taken++
	}
	if taken != 3 {
		t.Errorf("took %d batches of 3", taken)
	}
	bytes := newBudget(2500, true)
	taken = 0
	for bytes.take(1000) {
		taken++
	}
	if taken != 3 {
		t.Errorf("took %d batches of 1000 B from 2500 B, want 3 (the last overshoots)", taken)
	}
}

// TestBudgetAmounts pins how --message-batches and --total-data become
// budgets: per actor for pinned kinds, shared for balanced ones, and half
// the data sent in the end-to-end kinds, which move each byte twice.
func TestBudgetAmounts(t *testing.T) {
	pinned := normalized(t, KindPinnedProducer, func(c *Config) { c.Producers, c.MessageBatches = 4, 10 })
	if got := perActorAmount(pinned, 4); got != 10 {
		t.Errorf("pinned per-actor batches %d, want 10", got)
	}
	balanced := normalized(t, KindBalancedProducer, func(c *Config) { c.Producers, c.MessageBatches = 4, 10 })
	if got := sharedAmount(balanced, 4); got != 40 {
		t.Errorf("balanced shared batches %d, want 40", got)
	}
	data := normalized(t, KindPinnedProducer, func(c *Config) { c.Producers, c.MessageBatches, c.TotalData = 4, 0, 8e9 })
	if got := perActorAmount(data, 4); got != 2e9 {
		t.Errorf("pinned per-actor bytes %d, want 2e9", got)
	}
	e2e := normalized(t, KindEndToEndProducingConsumer, func(c *Config) { c.Producers, c.MessageBatches, c.TotalData = 4, 0, 8e9 })
	if got := perActorAmount(e2e, 4); got != 1e9 {
		t.Errorf("e2e per-actor bytes sent %d, want 1e9", got)
	}
	e2ecg := normalized(t, KindEndToEndProducingConsumerGroup, func(c *Config) { c.MessageBatches, c.TotalData = 0, 8e9 })
	if got := sharedAmount(e2ecg, 8); got != 4e9 {
		t.Errorf("e2ecg shared bytes sent %d, want 4e9", got)
	}
}
