package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// phase is the raw outcome of one measured run against a server.
type phase struct {
	state    *runState
	actors   []*actor
	wall     time.Duration // release to the last actor's end
	cpu      CPUUsage
	accounts Accounting
}

// execute sets up the streams, connects every actor, releases them
// together and waits for all of them. The first actor error cancels the
// others and is returned with whatever was measured.
func execute(ctx context.Context, config *Config, server Server, seed uint64, watch func(*phase)) (*phase, error) {
	plan := NewPlan(config)
	state := &runState{config: config, plan: plan, address: server.Address,
		produced: make([]atomic.Uint64, config.Streams), producersDone: make(chan struct{})}
	if err := prepare(ctx, state); err != nil {
		return nil, err
	}
	state.pool = newPayloadPool(rand.New(rand.NewPCG(seed, 0)))
	actors, err := connectActors(ctx, state, seed)
	defer closeActors(actors)
	if err != nil {
		return nil, err
	}
	result := &phase{state: state, actors: actors}
	sampler := startCPU(server.PID)
	state.released = time.Now()
	state.measured = state.released.Add(config.Warmup)
	if config.MaxDuration > 0 {
		state.deadline = state.measured.Add(config.MaxDuration)
	}
	for _, actor := range actors {
		actor.recorder.Start(state.measured)
		actor.pacer = state.newPacer(false)
		actor.pollPacer = state.newPacer(true)
		if actor.plan.Produces && actor.plan.Consumes {
			actor.pollPacer = &pacer{}
		}
	}
	if watch != nil {
		watch(result) // after the release time is set: the watcher reads it
	}
	err = runActors(ctx, state, actors)
	result.wall = time.Since(state.released)
	result.cpu = sampler.stop()
	result.accounts = account(state, actors)
	return result, err
}

// prepare creates or checks the streams, topics and groups of the run.
func prepare(ctx context.Context, state *runState) error {
	setupCtx, cancel := context.WithTimeout(ctx, SetupTimeout)
	defer cancel()
	admin, err := state.dial(setupCtx)
	if err != nil {
		return fmt.Errorf("bench: connect to %s: %w", state.address, err)
	}
	defer admin.Close()
	if state.targets, err = prepareStreams(setupCtx, admin, state.config); err != nil {
		return err
	}
	if state.groups, err = prepareGroups(setupCtx, admin, &state.plan, state.targets); err != nil {
		return err
	}
	if state.config.Kind.ConsumerOnly() {
		return readTargets(setupCtx, admin, state)
	}
	return nil
}

// connectActors dials one connection per actor and joins the groups; the
// assignments are read once every member has joined.
func connectActors(ctx context.Context, state *runState, seed uint64) ([]*actor, error) {
	config := state.config
	if state.plan.SharedProducerBudget {
		state.sendShare = newBudget(sharedAmount(config, state.plan.producerCount()), config.TotalData != 0)
	}
	actors := make([]*actor, 0, len(state.plan.Actors))
	for index, plan := range state.plan.Actors {
		connection, err := state.dial(ctx)
		if err != nil {
			return actors, fmt.Errorf("bench: %s %d: connect: %w", plan.Kind, plan.ID, err)
		}
		actor := &actor{run: state, plan: plan, client: connection, recorder: NewRecorder(config.SamplingTime),
			batcher: newBatcher(state.pool, seed, uint64(index+1), config.MessageSize, config.MessagesPerBatch)}
		actor.budget = state.sendShare
		if actor.budget == nil {
			actor.budget = newBudget(perActorAmount(config, state.plan.producerCount()), config.TotalData != 0)
		}
		actor.reader = reader{stream: state.plan.ConsumeStream(&plan), partitions: uint32(config.Partitions),
			next: make([]uint64, config.Partitions)}
		actors = append(actors, actor)
		if plan.Produces && plan.Balanced {
			// The client resolves Balanced from the partition count, which it
			// reads once: read it now, not inside the first measured send.
			target := state.targets[plan.Stream]
			if _, err := connection.GetTopic(ctx, target.stream, target.topic); err != nil {
				return actors, fmt.Errorf("bench: %s %d: read topic: %w", plan.Kind, plan.ID, err)
			}
		}
		if plan.Group >= 0 {
			actor.reader.group = state.groups[plan.Group]
			if err := actor.join(ctx); err != nil {
				return actors, err
			}
		}
	}
	for _, actor := range actors {
		if actor.reader.group != nil {
			if err := actor.sync(ctx); err != nil {
				return actors, err
			}
		}
	}
	return actors, nil
}

// sharedAmount is the budget all producers draw from together.
func sharedAmount(config *Config, producers int) uint64 {
	if config.TotalData != 0 {
		return sendShareOfData(config)
	}
	return config.MessageBatches * uint64(producers)
}

// perActorAmount is one producer's own budget.
func perActorAmount(config *Config, producers int) uint64 {
	if config.TotalData != 0 {
		return sendShareOfData(config) / uint64(max(producers, 1))
	}
	return config.MessageBatches
}

// sendShareOfData is the part of --total-data that is sent: all of it,
// except in the end-to-end kinds, whose actors move each byte twice (sent,
// then read back), so that half is sent, as iggy-bench counts it.
func sendShareOfData(config *Config) uint64 {
	if config.Kind == KindEndToEndProducingConsumer || config.Kind == KindEndToEndProducingConsumerGroup {
		return config.TotalData / 2
	}
	return config.TotalData
}

func closeActors(actors []*actor) {
	for _, actor := range actors {
		_ = actor.client.Close() // the run is over; a close error changes nothing measured
	}
}

// runActors runs every actor to completion; producersDone closes when the
// last send side ends.
func runActors(ctx context.Context, state *runState, actors []*actor) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var senders, everyone sync.WaitGroup
	var mu sync.Mutex
	var first error // the failure that stopped the others
	for _, actor := range actors {
		if actor.plan.Produces {
			senders.Add(1)
		}
		everyone.Add(1)
		go func() {
			defer everyone.Done()
			if err := runActor(ctx, actor, senders.Done); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				cancel()
			}
		}()
	}
	go func() {
		senders.Wait()
		close(state.producersDone)
	}()
	everyone.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// runActor runs one actor's role; sendDone is called once its send side
// (if any) has ended.
func runActor(ctx context.Context, actor *actor, sendDone func()) error {
	switch {
	case actor.plan.Produces && actor.plan.Consumes:
		return actor.produceAndConsume(ctx, sendDone)
	case actor.plan.Produces:
		defer sendDone()
		return actor.produce(ctx)
	default:
		return actor.consume(ctx)
	}
}
