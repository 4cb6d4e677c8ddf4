package bench

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// target is a bench stream's topic as the server numbered it.
type target struct {
	stream wire.Identifier
	topic  wire.Identifier
}

// groupState is one consumer group during a run: its server id, what its
// members consumed, and the next offset each partition must serve (a
// mismatch is a duplicate or a gap).
type groupState struct {
	id       uint32
	consumed atomic.Uint64
	grew     atomic.Int64 // unix nanoseconds of the latest member's progress
	target   uint64       // consumer-only kinds: messages to consume
	mu       sync.Mutex
	next     map[uint32]uint64
}

// check advances partition's expected offset past a poll whose first
// offset is first and whose count is count.
func (g *groupState) check(partition uint32, first, count uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	expected := g.next[partition]
	if first != expected {
		return fmt.Errorf("bench: group %d partition %d served offset %d, expected %d (duplicate or gap)",
			g.id, partition, first, expected)
	}
	g.next[partition] = first + count
	return nil
}

// runState is what every actor of one run shares.
type runState struct {
	config   *Config
	plan     Plan
	address  string
	targets  []target
	groups   []*groupState
	pool     []byte
	produced []atomic.Uint64 // per stream, acknowledged messages, warmup included
	// readerTarget is, for consumer-only kinds, the messages each offset
	// consumer of a stream must read.
	readerTarget  []uint64
	producersDone chan struct{}
	// released is when every actor was connected and load began; measured
	// is the end of the warmup, the origin of every series.
	released  time.Time
	measured  time.Time
	deadline  time.Time // zero when MaxDuration is unset
	truncated atomic.Bool
	sendShare *budget // shared producer budget, nil when per actor
}

// dial opens one actor's connection, logged in.
func (s *runState) dial(ctx context.Context) (*client.Client, error) {
	options := client.Options{
		Address: s.address, Username: s.config.Username, Password: s.config.Password,
		PipelineDepth: max(s.config.InFlight, 1), ReconnectAttempts: -1, HeartbeatInterval: HeartbeatInterval,
	}
	if !s.config.NoDelay {
		options.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
			conn, err := (&net.Dialer{}).DialContext(ctx, network, address)
			if tcp, ok := conn.(*net.TCPConn); ok {
				_ = tcp.SetNoDelay(false) // a failure leaves the default, which only skews timing
			}
			return conn, err
		}
	}
	return client.Dial(ctx, options)
}

// stopping reports whether the actor should start no new batch: the run
// was cancelled or MaxDuration passed.
func (s *runState) stopping(ctx context.Context, now time.Time) bool {
	if ctx.Err() != nil {
		return true
	}
	if !s.deadline.IsZero() && now.After(s.deadline) {
		s.truncated.Store(true)
		return true
	}
	return false
}

// warm reports whether a batch begun at begin falls in the warmup.
func (s *runState) warm(begin time.Time) bool { return begin.Before(s.measured) }

// actorRate is one actor's share of an aggregate rate.
func (s *runState) actorRate(aggregate uint64, consumer bool) float64 {
	rate := float64(aggregate) / float64(s.config.actorCount())
	if consumer && s.config.Kind.HasProducers() {
		rate *= s.config.ReadAmplification
	}
	return rate
}

// newPacer paces one actor from the release time.
func (s *runState) newPacer(consumer bool) *pacer {
	switch {
	case s.config.Rate != 0:
		return &pacer{schedule: newSchedule(s.released, s.actorRate(s.config.Rate, consumer))}
	case s.config.RateLimit != 0:
		capacity := float64(s.config.MessageSize.Max) * float64(s.config.MessagesPerBatch.Max)
		return &pacer{limiter: newLimiter(s.actorRate(s.config.RateLimit, consumer), capacity, s.released)}
	}
	return &pacer{}
}

// pacer decides when an actor's next batch starts and what its latency is
// measured from.
type pacer struct {
	schedule *schedule
	limiter  *limiter
}

// wait blocks until the next batch may start and returns its intended
// start: the scheduled time in the open loop, now otherwise.
func (p *pacer) wait(ctx context.Context, messages, bytes uint64) (time.Time, error) {
	switch {
	case p.schedule != nil:
		due := p.schedule.take(messages)
		return due, sleepUntil(ctx, due)
	case p.limiter != nil:
		now := time.Now()
		if delay := p.limiter.delay(float64(bytes), now); delay > 0 {
			if err := sleepUntil(ctx, now.Add(delay)); err != nil {
				return time.Time{}, err
			}
		}
	}
	return time.Now(), ctx.Err()
}
