package shard

import (
	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
)

// consumerOf resolves who polls or stores: a single consumer by number or
// by XXH32 of its name (§1.3), or a group by its id. group is the view's
// membership of that group (nil for a single consumer).
func consumerOf(c *call, view *frontView, target dataTarget, consumer wire.Consumer) (
	engine.Consumer, *viewGroup, bool) {
	if consumer.Kind != wire.ConsumerGroup {
		id := consumer.ID.ID
		if consumer.ID.Kind == wire.IdentifierString {
			id = wire.XXH32(consumer.ID.Name, 0)
		}
		return engine.Consumer{Kind: engine.ConsumerSingle, ID: id}, nil, true
	}
	group := groupOf(target.topic, consumer.ID)
	if group == nil {
		return engine.Consumer{}, nil, false
	}
	key := metadata.GroupKey{StreamID: target.stream.ID, TopicID: target.topic.ID, GroupID: group.ID}
	members := view.groups[key]
	if members == nil {
		members = &viewGroup{}
	}
	return engine.Consumer{Kind: engine.ConsumerGroup, ID: group.ID}, members, true
}

func (f *front) pollMessages(c *call, view *frontView, request *wire.PollMessages) {
	target, ok := resolve(c, view, request.Stream, request.Topic, request.Partition.ID,
		wire.StatusStreamIDNotFound, wire.StatusTopicIDNotFound, wire.StatusPartitionNotFound)
	if !ok {
		f.complete(c)
		return
	}
	if !view.access(c.userID).pollMessages(target.stream.ID, target.topic.ID) {
		c.status = wire.StatusUnauthorized
		f.complete(c)
		return
	}
	consumer, group, ok := consumerOf(c, view, target, request.Consumer)
	switch {
	case !ok:
		c.status = wire.StatusConsumerGroupIDNotFound
		f.complete(c)
		return
	case group != nil && (!request.Partition.Present || !group.pollable(c.client, target.partition)):
		f.emptyPoll(c, pollNoPartition) // the fence (§9.1): the client re-syncs
		return
	case request.Count == 0:
		f.emptyPoll(c, target.partition)
		return
	}
	recordsBytes := min(max(int(request.Count)*pollBytesPerMessage, pollRecordsBytesMin), pollRecordsBytesCap)
	c.target = target
	op := f.server.data.Local(f.shard).Get()
	op.Key, op.Strategy, op.Value = target.key(), engine.PollStrategy(request.Strategy.Kind), request.Strategy.Value
	op.Count, op.Consumer, op.AutoCommit = request.Count, consumer, request.AutoCommit
	f.startPoll(c, op, recordsBytes)
}

// startPoll reads op's records into a new reply buffer with room for
// recordsBytes of them.
func (f *front) startPoll(c *call, op *DataOp, recordsBytes int) {
	prefix := wire.HeaderBytes + pollPrefixBytes
	invariant.Assert(recordsBytes > 0, "front: a poll has room for records")
	invariant.Assert(prefix+recordsBytes <= pollReplyBytesMax, "front: a poll reply stays within a frame")
	c.buf = f.shard.Buffer(prefix + recordsBytes)
	op.Out = c.buf[:prefix:len(c.buf)]
	// Records the cache holds go out from its arena, not copied, when the
	// partition is this shard's (the spans pin this shard's cache) and the
	// reply goes out as it is (a classic session's is rewritten).
	if c.session.classic == nil && OwnerOf(op.Key, len(f.shard.runtime.shards)) == f.shard.id {
		c.spans = f.shard.takeSpans()
		op.Spans = c.spans.list[:0]
	}
	f.startData(c, op, DataPoll, f.pollDoneFn)
}

// pollSpans takes back the span list of a finished poll with the spans
// it holds: nil when it left no record in place.
func (f *front) pollSpans(c *call, op *DataOp) *replySpans {
	spans := c.spans
	c.spans = nil
	if spans == nil {
		invariant.Assert(len(op.Spans) == 0, "front: spans come from the call's list")
		return nil
	}
	if len(op.Spans) == 0 {
		f.shard.releaseSpans(spans)
		return nil
	}
	invariant.Assert(&op.Spans[0] == &spans.list[:1][0], "front: a poll's spans fill the call's list")
	spans.list = op.Spans
	op.Spans = nil
	for index := range spans.list {
		spans.bytes += len(spans.list[index].Data)
	}
	bump(&f.shard.stats.spansPinned, len(spans.list))
	return spans
}

// pollDone answers a poll in the buffer the records were read into. A
// poll that got nothing only because its first message did not fit runs
// again with room for it (PROTOCOL.md §15 #4: a poll always progresses).
func (f *front) pollDone(c *call, op *DataOp) {
	buf := c.buf
	spans := f.pollSpans(c, op)
	if op.Err != nil {
		f.shard.Release(buf)
		f.shard.releaseSpans(spans)
		c.status = dataStatus(op.Err, wire.StatusPartitionNotFound)
		f.complete(c)
		return
	}
	if recordsBytes, ok := pollRetryBytes(op, len(buf)); ok {
		invariant.Assert(spans == nil, "front: a poll that got nothing left nothing in place")
		f.shard.Release(buf)
		retry := f.server.data.Local(f.shard).Get()
		retry.Key, retry.Strategy, retry.Value = op.Key, op.Strategy, op.Value
		retry.Count, retry.Consumer, retry.AutoCommit = op.Count, op.Consumer, op.AutoCommit
		f.startPoll(c, retry, recordsBytes)
		return
	}
	size := len(op.Out)
	invariant.Assert(size >= wire.HeaderBytes+pollPrefixBytes && size <= len(buf), "front: poll records fit the reply buffer")
	invariant.Assert(&op.Out[0] == &buf[0], "front: poll records stay in the reply buffer")
	header := wire.ReplyTo(&c.header, wire.OperationNonReplicated)
	header.Size = uint32(size)
	if spans != nil {
		header.Size += uint32(spans.bytes)
		invariant.Assert(size+spans.bytes <= len(buf), "front: a poll reply with spans is no larger than its buffer")
	}
	header.Encode(buf)
	wire.EncodePollPrefix(buf[wire.HeaderBytes:], c.target.partition, op.CurrentOffset, op.Messages)
	f.doneSpans(c, buf[:size], spans)
}

// pollRetryBytes returns the records room of a rerun of a poll that got
// nothing for want of room, and whether to rerun it: the message due
// alone, or as many of that size as the count asks within the usual cap.
// The room strictly grows, so a poll reruns at most once per size.
func pollRetryBytes(op *DataOp, bufBytes int) (int, bool) {
	prefix := wire.HeaderBytes + pollPrefixBytes
	if op.Messages != 0 || op.NeedBytes <= bufBytes-prefix || prefix+op.NeedBytes > pollReplyBytesMax {
		return 0, false
	}
	wanted := min(int64(op.NeedBytes)*int64(op.Count), pollRecordsBytesCap, int64(pollReplyBytesMax-prefix))
	return max(op.NeedBytes, int(wanted)), true
}

// emptyPoll answers a 16-byte poll with no messages (§8.5).
func (f *front) emptyPoll(c *call, partition uint32) {
	size := wire.HeaderBytes + pollPrefixBytes
	buf := f.shard.Buffer(size)
	header := wire.ReplyTo(&c.header, wire.OperationNonReplicated)
	header.Size = uint32(size)
	header.Encode(buf)
	wire.EncodePollPrefix(buf[wire.HeaderBytes:], partition, 0, 0)
	f.done(c, buf)
}

// offsetOp runs Get, Store or Delete of a consumer offset (§6.8, §8.6).
func (f *front) offsetOp(c *call, view *frontView, request *wire.OffsetTarget, kind DataKind, offset uint64) {
	missing := wire.StatusResourceNotFound // partition-plane writes (§8.6)
	if kind == DataGetOffset {
		missing = wire.StatusPartitionNotFound
	}
	target, ok := resolve(c, view, request.Stream, request.Topic, request.Partition.ID, missing, missing, missing)
	if kind == DataGetOffset && !ok && c.status != wire.StatusPartitionNotFound {
		c.status = wire.StatusOK // §4.4: a missing stream or topic reads as nothing stored
	}
	if !ok {
		f.complete(c)
		return
	}
	if !view.access(c.userID).pollMessages(target.stream.ID, target.topic.ID) {
		c.status = wire.StatusUnauthorized
		f.complete(c)
		return
	}
	consumer, group, ok := consumerOf(c, view, target, request.Consumer)
	if !ok {
		if kind != DataGetOffset {
			c.status = wire.StatusConsumerGroupIDNotFound
		}
		f.complete(c)
		return
	}
	if group != nil && kind != DataGetOffset {
		if !request.Partition.Present {
			c.status = wire.StatusInvalidIdentifier
			f.complete(c)
			return
		}
		if !group.committable(c.client, target.partition) {
			c.status = wire.StatusConsumerGroupPartitionNotOwned
			f.complete(c)
			return
		}
	}
	op := f.server.data.Local(f.shard).Get()
	op.Key, op.Consumer, op.Offset = target.key(), consumer, offset
	c.target, c.missing = target, missing
	f.startData(c, op, kind, f.offsetDoneFn)
}

func (f *front) offsetDone(c *call, op *DataOp) {
	switch {
	case op.Err != nil:
		c.status = dataStatus(op.Err, c.missing)
	case c.kind == DataGetOffset && op.Found:
		c.payload = &wire.ConsumerOffsetInfo{PartitionID: c.target.partition, CurrentOffset: op.CurrentOffset,
			StoredOffset: op.Offset}
	}
	f.complete(c)
}
