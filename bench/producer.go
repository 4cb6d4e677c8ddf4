package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// actor is one connection's worth of load.
type actor struct {
	run      *runState
	plan     ActorPlan
	client   *client.Client
	recorder *Recorder
	batcher  *batcher
	budget   *budget // what this actor may send
	pacer    *pacer  // paces sends
	// pollPacer paces polls: its own for consumers, none for producing
	// consumers, whose sends pace them.
	pollPacer *pacer
	reader    reader
}

// partitioning is how the actor's batches pick a partition.
func (a *actor) partitioning() wire.Partitioning {
	if a.plan.Balanced {
		return wire.Balanced()
	}
	return wire.PartitionID(0)
}

// produce sends batches until the budget is spent, the run stops, or a
// send fails. Closed loop: one batch in flight, latency = the send's round
// trip. Open loop: batches start on schedule, up to InFlight outstanding,
// latency measured from the scheduled start.
func (a *actor) produce(ctx context.Context) error {
	if a.run.config.OpenLoop() && a.run.config.InFlight > 1 {
		return a.producePipelined(ctx)
	}
	for {
		sent, err := a.sendOne(ctx, a.recordSend)
		if err != nil || !sent {
			return err
		}
	}
}

// sendOne paces, builds and sends one batch and hands its outcome to
// record; sent is false when the actor is done.
func (a *actor) sendOne(ctx context.Context, record func(begin, done time.Time, count, userBytes uint64)) (
	sent bool, err error) {
	if a.run.stopping(ctx, time.Now()) {
		return false, nil
	}
	count := a.batcher.drawCount()
	expectedBytes := uint64(float64(count) * a.run.config.MessageSize.Mean())
	begin, err := a.pacer.wait(ctx, uint64(count), expectedBytes)
	if err != nil {
		return false, nil
	}
	messages, userBytes := a.batcher.next(count, begin)
	if !a.run.warm(begin) && !a.budget.take(userBytes) {
		return false, nil
	}
	target := a.run.targets[a.plan.Stream]
	if _, err := a.client.SendMessages(ctx, target.stream, target.topic, a.partitioning(), messages); err != nil {
		return false, fmt.Errorf("bench: producer %d: send: %w", a.plan.ID, err)
	}
	done := time.Now()
	a.run.produced[a.plan.Stream].Add(uint64(count))
	record(begin, done, uint64(count), userBytes)
	return true, nil
}

// recordSend records a producer's batch with its send latency.
func (a *actor) recordSend(begin, done time.Time, count, userBytes uint64) {
	if a.run.warm(begin) {
		return
	}
	a.recorder.Batch(done, done.Sub(begin), count, userBytes, batchWireBytes(count, userBytes))
}

// recordSentTraffic counts a producing consumer's send without latency:
// its latency is measured on the polls.
func (a *actor) recordSentTraffic(begin, done time.Time, count, userBytes uint64) {
	if a.run.warm(begin) {
		return
	}
	a.recorder.Traffic(done, count, userBytes, batchWireBytes(count, userBytes))
}

// producePipelined is the open loop with several batches outstanding: each
// due batch is sent from its own goroutine once a slot frees up.
func (a *actor) producePipelined(ctx context.Context) error {
	slots := make(chan struct{}, a.run.config.InFlight)
	var group sync.WaitGroup
	var mu sync.Mutex
	var failure error
	target := a.run.targets[a.plan.Stream]
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return failure != nil
	}
	for !a.run.stopping(ctx, time.Now()) && !failed() {
		count := a.batcher.drawCount()
		begin, err := a.pacer.wait(ctx, uint64(count), 0)
		if err != nil {
			break
		}
		messages, userBytes := a.batcher.next(count, begin)
		if !a.run.warm(begin) && !a.budget.take(userBytes) {
			break
		}
		messages = slices.Clone(messages) // the batcher reuses its slice
		slots <- struct{}{}
		group.Add(1)
		go func() {
			defer group.Done()
			defer func() { <-slots }()
			_, err := a.client.SendMessages(ctx, target.stream, target.topic, a.partitioning(), messages)
			done := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failure = fmt.Errorf("bench: producer %d: send: %w", a.plan.ID, err)
				return
			}
			a.run.produced[a.plan.Stream].Add(uint64(len(messages)))
			a.recordSend(begin, done, uint64(len(messages)), userBytes)
		}()
	}
	group.Wait()
	return failure
}
