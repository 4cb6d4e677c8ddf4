package bench

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/whippetio/whippet/internal/invariant"
)

// schedule is an open-loop actor's timetable: batch k is due when the
// messages of the batches before it would have been sent at the rate. A
// late batch keeps its due time, so the latency measured from it includes
// the time it waited (coordinated omission corrected).
type schedule struct {
	due        time.Time
	perMessage float64 // nanoseconds
}

// newSchedule starts a timetable at start for rate messages per second.
func newSchedule(start time.Time, rate float64) *schedule {
	invariant.Assert(rate > 0, "an open-loop schedule needs a positive rate")
	return &schedule{due: start, perMessage: float64(time.Second) / rate}
}

// take returns the due time of a batch of messages and advances the
// timetable past it.
func (s *schedule) take(messages uint64) time.Time {
	due := s.due
	s.due = s.due.Add(time.Duration(float64(messages) * s.perMessage))
	return due
}

// limiter is a closed-loop token bucket of bytes per second, pre-filled
// so the first batch does not burst.
type limiter struct {
	rate     float64 // bytes per second
	capacity float64
	tokens   float64
	last     time.Time
}

func newLimiter(rate float64, capacity float64, now time.Time) *limiter {
	invariant.Assert(rate > 0, "a limiter needs a positive rate")
	return &limiter{rate: rate, capacity: capacity, tokens: capacity, last: now}
}

// delay takes bytes and returns how long to wait before sending them.
func (l *limiter) delay(bytes float64, now time.Time) time.Duration {
	l.tokens = min(l.capacity, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	l.last = now
	l.tokens -= bytes
	if l.tokens >= 0 {
		return 0
	}
	return time.Duration(-l.tokens / l.rate * float64(time.Second))
}

// sleepUntil waits for at, or for ctx.
func sleepUntil(ctx context.Context, at time.Time) error {
	wait := time.Until(at)
	if wait <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// budget is a supply of batches (or bytes) that one actor, or all actors
// of a side, draw from.
type budget struct {
	remaining atomic.Int64
	bytes     bool
}

func newBudget(amount uint64, bytes bool) *budget {
	b := &budget{bytes: bytes}
	b.remaining.Store(int64(min(amount, uint64(1)<<62)))
	return b
}

// take claims one batch of userBytes; false when the supply is spent. In
// bytes mode the last batch may overshoot, as iggy-bench's does.
func (b *budget) take(userBytes uint64) bool {
	if b.bytes {
		return b.remaining.Add(-int64(userBytes))+int64(userBytes) > 0
	}
	return b.remaining.Add(-1) >= 0
}
