package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/whippetio/whippet/wire"
)

// reader is the consuming half of an actor: where it polls and what it has
// read so far.
type reader struct {
	stream     int
	partitions uint32
	next       []uint64 // offset cursors per partition (offset polling)
	turn       uint32   // round-robin partition index
	consumed   uint64
	lastGrowth time.Time
	// group polling
	group       *groupState
	assigned    []uint32
	generation  uint64
	refreshedAt time.Time
	// replyBuffer receives every poll reply in turn, and reply decodes it:
	// a reply is walked before the next poll, so one buffer serves them all.
	replyBuffer []byte
	reply       wire.PolledMessages
}

// pollReply runs one PollMessages into the reader's reply buffer; the
// reply is valid until the next call.
func (a *actor) pollReply(ctx context.Context, request *wire.PollMessages) (*wire.PolledMessages, error) {
	r := &a.reader
	buffer, err := a.client.PollMessagesInto(ctx, request, &r.reply, r.replyBuffer)
	r.replyBuffer = buffer
	return &r.reply, err
}

// polled is what one poll returned, summed.
type polled struct {
	partition uint32
	first     uint64 // offset of the first message
	count     uint64
	userBytes uint64
	origin    time.Time // origin timestamp of the first message
}

// readPoll reads a decoded poll reply's summary (gathered by the decode's
// walk of the records): counts, payload bytes, the first origin, and
// whether offsets run contiguously from the first.
func readPoll(reply *wire.PolledMessages) (polled, error) {
	summary := reply.Summary()
	result := polled{partition: reply.PartitionID, count: uint64(reply.MessagesCount), userBytes: summary.PayloadBytes}
	if result.count == 0 {
		return result, nil
	}
	result.first = summary.OffsetFirst
	result.origin = time.UnixMicro(int64(summary.OriginFirst))
	if !summary.OffsetsInOrder {
		return result, fmt.Errorf("bench: partition %d: the %d messages from offset %d are not contiguous",
			reply.PartitionID, result.count, result.first)
	}
	return result, nil
}

// finished reports whether the reader has read everything it must.
func (a *actor) finished() bool {
	r := &a.reader
	if r.group != nil {
		return a.sourceDone() && r.group.consumed.Load() >= a.readTarget()
	}
	return a.sourceDone() && r.consumed >= a.readTarget()
}

// sourceDone reports whether nothing more will be written for this run.
func (a *actor) sourceDone() bool {
	if !a.run.config.Kind.HasProducers() {
		return true
	}
	select {
	case <-a.run.producersDone:
		return true
	default:
		return false
	}
}

// behind reports whether the reader (or its group) has read fewer
// messages than its stream holds for it.
func (a *actor) behind() bool {
	if a.reader.group != nil {
		return a.reader.group.consumed.Load() < a.readTarget()
	}
	return a.reader.consumed < a.readTarget()
}

// readTarget is how many messages the reader (or its group) must read.
func (a *actor) readTarget() uint64 {
	r := &a.reader
	if !a.run.config.Kind.HasProducers() {
		if r.group != nil {
			return r.group.target
		}
		return a.run.readerTarget[r.stream]
	}
	return a.run.produced[r.stream].Load()
}

// consume polls until the reader is finished, the run stops or a poll
// fails. Latency is the poll's round trip (from its scheduled start in the
// open loop), or end to end from the batch's origin timestamp for the
// kinds that measure it.
func (a *actor) consume(ctx context.Context) error {
	a.reader.lastGrowth = time.Now()
	for !a.finished() {
		if err := a.pollOne(ctx); err != nil || ctx.Err() != nil {
			return err
		}
		if !a.run.config.Kind.HasProducers() && a.run.stopping(ctx, time.Now()) {
			return nil
		}
	}
	return nil
}

// pollOne paces and runs one poll, records it, and backs off when it was
// empty.
func (a *actor) pollOne(ctx context.Context) error {
	count := a.batcher.drawCount()
	begin, err := a.pollPacer.wait(ctx, uint64(count), uint64(float64(count)*a.run.config.MessageSize.Mean()))
	if err != nil {
		return nil
	}
	result, err := a.poll(ctx, count)
	if err != nil {
		return err
	}
	done := time.Now()
	if result.count == 0 {
		return a.idle(ctx, done)
	}
	a.reader.consumed += result.count
	a.reader.lastGrowth = done
	if a.reader.group != nil {
		a.reader.group.consumed.Add(result.count)
		a.reader.group.grew.Store(done.UnixNano())
	}
	latency := done.Sub(begin)
	if a.run.config.Kind.EndToEnd() {
		latency = done.Sub(result.origin)
	}
	if a.run.warm(begin) {
		return nil
	}
	a.recorder.Batch(done, max(latency, 0), result.count, result.userBytes,
		batchWireBytes(result.count, result.userBytes))
	return nil
}

// progressedAt is when the reader last read something; a group member
// counts its group's progress as its own, since a member may wait for
// partitions handed over from another.
func (a *actor) progressedAt() time.Time {
	if a.reader.group != nil {
		if grew := time.Unix(0, a.reader.group.grew.Load()); grew.After(a.reader.lastGrowth) {
			return grew
		}
	}
	return a.reader.lastGrowth
}

// errStalled fails a reader that saw no progress for ConsumerStallMax
// after the producers finished.
var errStalled = errors.New("bench: consumer stalled")

// idle backs off after an empty poll and fails the reader when it has
// made no progress for too long although messages it must read exist.
func (a *actor) idle(ctx context.Context, now time.Time) error {
	if now.Sub(a.progressedAt()) > ConsumerStallMax && (a.sourceDone() || a.behind()) {
		return fmt.Errorf("%w: consumer %d read %d of %d messages of %s", errStalled, a.plan.ID,
			a.reader.consumed, a.readTarget(), StreamName(a.reader.stream))
	}
	return sleepUntil(ctx, now.Add(IdlePollBackoff))
}

// poll runs one PollMessages by offset or through the group.
func (a *actor) poll(ctx context.Context, count uint32) (polled, error) {
	if a.reader.group != nil {
		return a.pollGroup(ctx, count)
	}
	r := &a.reader
	partition := r.turn % r.partitions
	r.turn++
	target := a.run.targets[r.stream]
	request := wire.PollMessages{
		Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(uint32(a.plan.ID))},
		Stream:   target.stream, Topic: target.topic, Partition: wire.PartitionOf(partition),
		Strategy: wire.Strategy{Kind: wire.StrategyOffset, Value: r.next[partition]}, Count: count,
	}
	reply, err := a.pollReply(ctx, &request)
	if err != nil {
		return polled{}, fmt.Errorf("bench: consumer %d: poll: %w", a.plan.ID, err)
	}
	result, err := readPoll(reply)
	if err != nil {
		return result, err
	}
	if result.count > 0 && result.first != r.next[partition] {
		return result, fmt.Errorf("bench: consumer %d partition %d: got offset %d, asked for %d",
			a.plan.ID, partition, result.first, r.next[partition])
	}
	r.next[partition] += result.count
	return result, nil
}
