package shard

import (
	"errors"
	"syscall"
	"time"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/wire"
)

// dataTarget is a call's partition, resolved against the view.
type dataTarget struct {
	stream    *metadata.Stream
	topic     *metadata.Topic
	partition uint32
}

// dispatchData starts the partition commands; false for other codes.
func (f *front) dispatchData(c *call, view *frontView) bool {
	switch request := c.body.(type) {
	case *wire.SendMessages:
		f.sendMessages(c, view, request)
	case *wire.PollMessages:
		f.pollMessages(c, view, request)
	case *wire.GetConsumerOffset:
		f.offsetOp(c, view, &request.OffsetTarget, DataGetOffset, 0)
	case *wire.StoreConsumerOffset:
		f.offsetOp(c, view, &request.OffsetTarget, DataStoreOffset, request.Offset)
	case *wire.DeleteConsumerOffset:
		f.offsetOp(c, view, &request.OffsetTarget, DataDeleteOffset, 0)
	case *wire.FlushUnsavedBuffer:
		f.partitionOp(c, view, request.Stream, request.Topic, request.PartitionID, DataFlush, 0, request.Fsync)
	case *wire.DeleteSegments:
		f.partitionOp(c, view, request.Stream, request.Topic, request.PartitionID, DataDeleteSegments,
			int(request.SegmentsCount), false)
	default:
		return false
	}
	return true
}

// resolve finds stream, topic and partition; misses get the statuses
// passed (PROTOCOL.md §4.4, §8.6).
func resolve(c *call, view *frontView, streamID, topicID wire.Identifier, partition uint32,
	missStream, missTopic, missPartition wire.Status) (dataTarget, bool) {
	stream := view.streamOf(streamID)
	if stream == nil {
		c.status = missStream
		return dataTarget{}, false
	}
	topic := topicOf(stream, topicID)
	if topic == nil {
		c.status = missTopic
		return dataTarget{}, false
	}
	if int(partition) >= len(topic.Partitions) {
		c.status = missPartition
		return dataTarget{}, false
	}
	return dataTarget{stream: stream, topic: topic, partition: partition}, true
}

func (t dataTarget) key() PartitionKey {
	return PartitionKey{Stream: t.stream.ID, Topic: t.topic.ID, Partition: t.partition}
}

// startData hands op to the data plane; when it completes, next runs on
// this shard with the call (op.Context) and the op.
func (f *front) startData(c *call, op *DataOp, kind DataKind, next func(c *call, op *DataOp)) {
	local := f.server.data.Local(f.shard)
	if op.Key.Valid() {
		f.noteOwner(c.session, OwnerOf(op.Key, len(f.shard.runtime.shards)))
	}
	c.next, c.kind = next, kind
	op.Context, op.Done = c, f.dataDoneFn
	if kind == DataAppend {
		c.dataStarted = time.Now()
	}
	local.start(op, kind)
}

// dataDone is every data op's Done: a fatal error stops the process, the
// rest is the call's continuation.
func (f *front) dataDone(op *DataOp) {
	c := op.Context.(*call)
	if engine.IsFatal(op.Err) {
		f.server.fatal(op.Err)
	}
	if c.kind == DataAppend && op.Err == nil {
		f.appendLatency.observe(time.Since(c.dataStarted))
	}
	next := c.next
	next(c, op)
	f.server.data.Local(f.shard).Put(op)
}

func (f *front) sendMessages(c *call, view *frontView, request *wire.SendMessages) {
	stream := view.streamOf(request.Stream)
	topic := topicOf(stream, request.Topic)
	if topic == nil || len(topic.Partitions) == 0 {
		c.status = wire.StatusResourceNotFound // §8.6, §12 #9
		f.complete(c)
		return
	}
	if !view.access(c.userID).sendMessages(stream.ID, topic.ID) {
		c.status = wire.StatusUnauthorized
		f.complete(c)
		return
	}
	if st := c.session.stream.of(c.frame.buf); st != nil {
		f.streamSend(c, st, stream, topic, request)
		return
	}
	partition, ok := f.choosePartition(stream.ID, topic, request.Partitioning)
	if !ok {
		c.status = wire.StatusResourceNotFound
		f.complete(c)
		return
	}
	c.target = dataTarget{stream: stream, topic: topic, partition: partition}
	f.appendBatch(c, request.Batch, 0)
}

// appendBatch appends batch to c.target's partition. With stream (not 0)
// the op finishes that streamed append, which checked the batch as it
// arrived; without, the batch is checked here.
func (f *front) appendBatch(c *call, batch []byte, stream uint64) {
	if stream == 0 {
		if _, err := wire.ValidateBatch(batch); err != nil {
			c.status = decodeStatus(err)
			f.complete(c)
			return
		}
	}
	op := f.server.data.Local(f.shard).Get()
	op.Key, op.Batch, op.Stream = c.target.key(), batch, stream
	f.startData(c, op, DataAppend, f.sendDoneFn)
}

// sendDone answers a send with its confirmation (§7.7), held in the call.
func (f *front) sendDone(c *call, op *DataOp) {
	if op.Err != nil {
		c.status = dataStatus(op.Err, wire.StatusResourceNotFound)
	} else {
		c.confirmation[0] = wire.SendConfirmation{StreamID: c.target.stream.ID, TopicID: c.target.topic.ID,
			PartitionID: c.target.partition, BaseOffset: op.BaseOffset}
		c.confirmations = c.confirmation[:]
		c.payload = &c.confirmations
	}
	f.complete(c)
}

func isInvalidBatch(err error) bool { return errors.Is(err, engine.ErrInvalidBatch) }

// choosePartition applies the partitioning (§1.5): round robin per topic
// on this shard, an explicit id, or XXH32(key) modulo the count.
func (f *front) choosePartition(streamID uint32, topic *metadata.Topic, partitioning wire.Partitioning) (uint32, bool) {
	partition, ok := f.peekPartition(streamID, topic, partitioning)
	f.chosePartition(streamID, topic, partitioning)
	return partition, ok
}

// peekPartition is choosePartition without moving the round-robin cursor.
func (f *front) peekPartition(streamID uint32, topic *metadata.Topic, partitioning wire.Partitioning) (uint32, bool) {
	count := uint32(len(topic.Partitions))
	switch partitioning.Kind {
	case wire.PartitioningPartitionID:
		return partitioning.PartitionID, partitioning.PartitionID < count
	case wire.PartitioningMessagesKey:
		return wire.XXH32(partitioning.Key, 0) % count, true
	}
	return f.roundRobin[[2]uint32{streamID, topic.ID}] % count, true
}

// chosePartition moves the topic's round-robin cursor past the partition
// peekPartition chose, when the choice was round robin.
func (f *front) chosePartition(streamID uint32, topic *metadata.Topic, partitioning wire.Partitioning) {
	if partitioning.Kind != wire.PartitioningPartitionID && partitioning.Kind != wire.PartitioningMessagesKey {
		f.roundRobin[[2]uint32{streamID, topic.ID}]++
	}
}

// dataStatus maps a data-plane error to a status.
func dataStatus(err error, notFound wire.Status) wire.Status {
	switch {
	case errors.Is(err, ErrPartitionNotFound):
		return notFound
	case errors.Is(err, engine.ErrInvalidOffset):
		return wire.StatusInvalidOffset
	case errors.Is(err, engine.ErrOffsetNotFound):
		return wire.StatusConsumerOffsetNotFound
	case errors.Is(err, engine.ErrInvalidBatch):
		return decodeStatus(err) // a streamed batch's admission status (data_stream.go)
	case errors.Is(err, ErrDataBusy), errors.Is(err, engine.ErrBusy), errors.Is(err, engine.ErrJournalFull),
		errors.Is(err, ErrClusterNotAccepted):
		return wire.StatusTransientNotAccepted
	case errors.Is(err, syscall.ENOSPC):
		// A full disk is the operator's to fix, not the client's to retry
		// blindly: name it apart from other failures.
		return wire.StatusCannotAppendToFile
	}
	if status := wire.StatusOf(err); status != wire.StatusError {
		return status
	}
	return wire.StatusError
}

// partitionOp runs Flush (with or without fsync) or DeleteSegments on
// one partition.
func (f *front) partitionOp(c *call, view *frontView, streamID, topicID wire.Identifier, partition uint32,
	kind DataKind, segments int, fsync bool) {
	target, ok := resolve(c, view, streamID, topicID, partition, wire.StatusStreamIDNotFound,
		wire.StatusTopicIDNotFound, wire.StatusPartitionNotFound)
	if !ok {
		f.complete(c)
		return
	}
	access := view.access(c.userID)
	allowed := access.manageTopic(target.stream.ID, target.topic.ID)
	if kind == DataFlush {
		allowed = access.sendMessages(target.stream.ID, target.topic.ID)
	}
	if !allowed {
		c.status = wire.StatusUnauthorized
		f.complete(c)
		return
	}
	op := f.server.data.Local(f.shard).Get()
	op.Key, op.Fsync, op.SegmentCount = target.key(), fsync, segments
	f.startData(c, op, kind, f.opDoneFn)
}

func (f *front) partitionOpDone(c *call, op *DataOp) {
	if op.Err != nil {
		c.status = dataStatus(op.Err, wire.StatusPartitionNotFound)
	}
	f.complete(c)
}
