package shard

import (
	"errors"
	"time"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
)

// dataPartition is one partition in its owner's table.
type dataPartition struct {
	key    PartitionKey
	config PartitionConfig
	part   *engine.Partition
	state  dataPartitionState
	err    error // why it failed to open
	// cluster replicates the partition's writes through its group, in
	// cluster mode.
	cluster *clusterPartition

	parked    []*DataOp // ops waiting, oldest at parkHead
	parkHead  int
	scheduled bool // on the owner's retry list
	unparking bool // unpark is running (a completion may re-enter it)

	waiters   []*dataFan // Create shares waiting for the open
	deleters  []*dataFan // Delete shares waiting for the open to finish
	recreate  []*dataFan // Create shares waiting for a Delete to finish
	retainOp  engine.MaintenanceOp
	retaining bool
	purgeOp   engine.MaintenanceOp
	purges    []*dataFan // the running purge first
	purging   bool
	// stream names the streamed append open on the partition (0: none;
	// DataShard.streamSerial), since streamOpened; streamEngine is its
	// engine stream id (data_stream.go).
	stream       uint64
	streamEngine uint64
	streamOpened time.Time
	// room names the stream (as stream) whose owner receives into its
	// journal (StreamRoom until StreamReceived), which may outlive stream
	// when the stream is dropped meanwhile; 0: none.
	room    uint64
	ticking bool // appended since the engine partition last settled
	// tickListed: the partition is on its shard's tick list.
	tickListed bool
}

type dataPartitionState uint8

const (
	partitionOpening dataPartitionState = iota + 1
	partitionOpen
	partitionFailed   // recovery refused it; ops get its error
	partitionDeleting // ops get ErrPartitionNotFound
	partitionClosing  // the shard stops: ops get ErrDataStopped
	partitionClosed
)

// run executes op on this (owner) shard, or parks it behind earlier ones.
func (ds *DataShard) run(op *DataOp) {
	op.owner = ds
	p := ds.partitions[op.Key]
	switch {
	case ds.stopping:
		op.Err = ErrDataStopped
	case p != nil && p.state == partitionDeleting && len(p.recreate) > 0:
		ds.park(p, op) // for the partition the waiting Create opens
		return
	case p == nil || p.state == partitionDeleting:
		op.Err = ErrPartitionNotFound
	case p.state == partitionFailed:
		op.Err = p.err
	case op.Stream != 0 && p.state == partitionOpen:
		// The streamed batch holds the partition: appends parked meanwhile
		// wait for it, it never waits behind them.
		if ds.execute(p, op) {
			ds.park(p, op)
		}
		return
	case p.state == partitionOpening || p.parkedCount() > 0:
		ds.park(p, op)
		return
	default:
		if ds.execute(p, op) {
			ds.park(p, op)
		}
		return
	}
	ds.complete(op)
}

// execute starts op on the engine; true when the partition is busy (a
// full journal, a purge, a sync already running) and op must wait. After a
// nil start op belongs to the engine (Done may even have run).
func (ds *DataShard) execute(p *dataPartition, op *DataOp) (busy bool) {
	if p.cluster != nil && clusterWrite(op.kind) {
		p.cluster.submit(op)
		return false
	}
	var err error
	switch op.kind {
	case DataAppend:
		timestamp := op.Timestamp
		if timestamp == 0 {
			timestamp = uint64(ds.data.options.Now().UnixMicro())
		}
		appendOp := &op.appendOp
		appendOp.Batch, appendOp.Timestamp = op.Batch, timestamp
		if op.Stream != 0 {
			err = ds.streamFinish(p, op)
		} else {
			err = p.part.Append(appendOp)
		}
		p.ticking = true
		ds.tickMark(p)
	case DataPoll:
		poll := &op.pollOp
		poll.Strategy, poll.Value, poll.Count = op.Strategy, op.Value, op.Count
		// In cluster mode the auto-commit goes through the group (pollDone).
		poll.Consumer, poll.AutoCommit, poll.Out = op.Consumer, op.AutoCommit && p.cluster == nil, op.Out
		invariant.Assert(cap(op.Spans) == 0 || op.origin == ds, "a poll pins only its own shard's cache")
		poll.Spans = op.Spans
		err = p.part.Poll(poll)
	case DataStoreOffset:
		op.offsetOp.Consumer, op.offsetOp.Offset = op.Consumer, op.Offset
		err = p.part.StoreOffset(&op.offsetOp)
	case DataDeleteOffset:
		op.offsetOp.Consumer = op.Consumer
		err = p.part.DeleteOffset(&op.offsetOp)
	case DataFlush:
		if op.Fsync {
			err = p.part.Sync(op.syncDone)
		} else {
			err = p.part.Flush(op.syncDone)
		}
	case DataDeleteSegments:
		op.maintenanceOp.SegmentCount = op.SegmentCount
		err = p.part.DeleteSegments(&op.maintenanceOp)
	case DataGetOffset:
		op.Offset, op.Found = p.part.StoredOffset(op.Consumer)
		op.CurrentOffset = p.part.CurrentOffset()
		ds.complete(op)
	case DataStats:
		op.Partition = p.part.Stats()
		op.CurrentOffset = op.Partition.CurrentOffset
		ds.complete(op)
	default:
		invariant.Assert(false, "a partition op has a partition kind")
	}
	if err == nil {
		return false
	}
	if errors.Is(err, engine.ErrJournalFull) || errors.Is(err, engine.ErrBusy) {
		return true
	}
	op.Err = err
	ds.complete(op)
	return false
}

// The engine completions, bound once per op (newDataOp); they run on the
// owner's thread.

func (ds *DataShard) appendDone(op *DataOp) {
	p := ds.partitions[op.Key]
	op.BaseOffset, op.Messages, op.Err = op.appendOp.BaseOffset, op.appendOp.Count, op.appendOp.Err
	op.appendOp.Batch = nil
	ds.complete(op)
	ds.schedule(p)
}

func (ds *DataShard) pollDone(op *DataOp) {
	poll := &op.pollOp
	op.Out, op.Messages, op.NeedBytes, op.Err = poll.Out, poll.Messages, poll.NeedBytes, poll.Err
	op.OffsetFirst, op.OffsetLast, op.CurrentOffset = poll.OffsetFirst, poll.OffsetLast, poll.CurrentOffset
	op.Spans = poll.Spans
	poll.Out, poll.Spans = nil, nil
	if ds.data.cluster != nil && op.AutoCommit && op.Err == nil && op.Messages > 0 {
		// Every replica stores the offset; the poll answers once it applied here.
		if p := ds.partitions[op.Key]; p != nil && p.cluster != nil && p.state == partitionOpen {
			p.cluster.submitOffset(op, partitionOpStoreOffset, op.OffsetLast)
			return
		}
	}
	ds.complete(op)
}

// clusterWrite reports whether an op of kind changes a clustered
// partition, and so goes through its group.
func clusterWrite(kind DataKind) bool {
	switch kind {
	case DataAppend, DataStoreOffset, DataDeleteOffset, DataDeleteSegments:
		return true
	}
	return false
}

func (ds *DataShard) offsetDone(op *DataOp) {
	p := ds.partitions[op.Key]
	op.Err = op.offsetOp.Err
	ds.complete(op)
	ds.schedule(p)
}

func (ds *DataShard) maintenanceDone(op *DataOp) {
	p := ds.partitions[op.Key]
	op.Err = op.maintenanceOp.Err
	op.SegmentCount = op.maintenanceOp.SegmentsDeleted
	ds.complete(op)
	ds.schedule(p)
}

func (ds *DataShard) syncDone(op *DataOp, err error) {
	p := ds.partitions[op.Key]
	op.Err = err
	ds.complete(op)
	ds.schedule(p)
}

// park holds op until the partition can take it, in arrival order.
func (ds *DataShard) park(p *dataPartition, op *DataOp) {
	if p.parkedCount() >= partitionParkedMax {
		op.Err = ErrDataBusy
		ds.complete(op)
		return
	}
	p.parked = append(p.parked, op)
	ds.tickMark(p)
	if p.state == partitionOpen {
		ds.schedule(p)
	}
}

func (p *dataPartition) parkedCount() int { return len(p.parked) - p.parkHead }

// schedule puts a partition with parked ops on the retry list for the
// next loop turn; completions call it, so a retry never runs inside the
// engine call that completed.
func (ds *DataShard) schedule(p *dataPartition) {
	if p == nil || p.scheduled || p.parkedCount() == 0 {
		return
	}
	p.scheduled = true
	ds.parked = append(ds.parked, p)
	ds.armRetry()
}

// unparkAll retries the partitions on the retry list.
func (ds *DataShard) unparkAll() {
	list := ds.parked
	ds.parked = ds.parkedSpare[:0] // partitions still busy go back here
	for index, p := range list {
		list[index] = nil
		p.scheduled = false
		ds.unpark(p)
	}
	ds.parkedSpare = list[:0]
}

// unpark starts parked ops oldest first until one finds the partition
// busy again; then the partition goes back on the retry list.
func (ds *DataShard) unpark(p *dataPartition) {
	if p.unparking {
		return // the running unpark sees the new state on its next op
	}
	p.unparking = true
	defer func() { p.unparking = false }()
	for p.parkedCount() > 0 {
		op := p.parked[p.parkHead]
		if p.state != partitionOpen {
			p.parked[p.parkHead] = nil
			p.parkHead++
			op.Err = p.failure()
			ds.complete(op)
			continue
		}
		if ds.execute(p, op) {
			ds.streamHeld(p)
			ds.schedule(p)
			return
		}
		p.parked[p.parkHead] = nil
		p.parkHead++
	}
	p.parked, p.parkHead = p.parked[:0], 0
}

// failure is the error ops on a partition that cannot serve get.
func (p *dataPartition) failure() error {
	switch p.state {
	case partitionFailed:
		return p.err
	case partitionDeleting:
		return ErrPartitionNotFound
	}
	return ErrDataStopped
}

// open starts recovering (or creating) a partition this shard owns; share
// is the Create share waiting for it, if any.
func (ds *DataShard) open(key PartitionKey, config PartitionConfig, share *dataFan) {
	invariant.Assert(OwnerOf(key, len(ds.shard.runtime.shards)) == ds.shard.id, "a shard opens only partitions it owns")
	p := &dataPartition{key: key, config: config, state: partitionOpening}
	if share != nil {
		p.waiters = append(p.waiters, share)
	}
	p.retainOp.Done = func(*engine.MaintenanceOp) { ds.retainDone(p) }
	p.purgeOp.Done = func(*engine.MaintenanceOp) { ds.purgeDone(p) }
	ds.partitions[key] = p
	ds.data.opening.Add(1)
	options := ds.partitionOptions(key, config)
	engine.OpenPartition(ds.storage, options, func(part *engine.Partition, err error) {
		ds.opened(p, part, err)
	})
}

// partitionOptions are the engine options a partition opens with.
func (ds *DataShard) partitionOptions(key PartitionKey, config PartitionConfig) engine.PartitionOptions {
	durability := config.Durability
	if ds.data.cluster != nil {
		// The group's journal carries durability; the engine writes behind.
		durability = engine.DurabilityWritten
		if config.DedupCount > 0 {
			ds.data.logger.Warn("shard: message deduplication is off in cluster mode", "partition", key.String())
		}
		config = clusterPartitionConfig(config)
	}
	return engine.PartitionOptions{
		Directory:               PartitionDirectory(ds.data.options.Directory, key),
		PartitionID:             key.Partition,
		SegmentBytes:            config.SegmentBytes,
		Durability:              durability,
		RetryWrites:             ds.data.cluster != nil, // a committed entry is never skipped
		ReadChecksumsUnverified: ds.data.options.ReadChecksumsUnverified,
		AllocateAheadOff:        ds.data.options.AllocateAheadOff,
		JournalBytes:            ds.data.options.JournalBytes,
		DedupCount:              config.DedupCount,
		DedupWindowMicros:       config.DedupWindowMicros,
		Cache:                   ds.cache,
		Allocate:                ds.allocate,
		Release:                 ds.shard.Release,
		Logger:                  ds.data.logger.With("partition", key.String(), "shard", ds.shard.id),
	}
}

// clusterPartitionConfig is config as a clustered partition runs it:
// without deduplication. A replica's restart skips the entries its engine
// holds by counting each entry's messages (clusterPartition.applyAppend),
// which holds only when the engine stores every message it is given; the
// id window dedup keeps is also local state a state transfer would not
// carry, so replicas could drop different messages.
func clusterPartitionConfig(config PartitionConfig) PartitionConfig {
	config.DedupCount, config.DedupWindowMicros = 0, 0
	return config
}

// opened finishes an open: serve (in cluster mode once the partition's
// group is open too), or refuse with the recovery error.
func (ds *DataShard) opened(p *dataPartition, part *engine.Partition, err error) {
	if err == nil && ds.data.cluster != nil {
		p.part = part
		ds.openCluster(p, func(err error) {
			if err != nil {
				ds.data.logger.Error("shard: partition group refused to open", "partition", p.key.String(), "err", err.Error())
				part.Close(func(error) {})
			}
			ds.openedAll(p, part, err)
		})
		return
	}
	ds.openedAll(p, part, err)
}

func (ds *DataShard) openedAll(p *dataPartition, part *engine.Partition, err error) {
	invariant.Assert(p.state == partitionOpening, "an open completes once")
	ds.data.opening.Add(-1)
	if err != nil {
		p.state, p.err = partitionFailed, err
		ds.data.logger.Error("shard: partition refused to open", "partition", p.key.String(), "err", err.Error())
		if engine.IsFatal(err) {
			ds.data.fail(ds.shard, err)
		}
	} else {
		p.state, p.part = partitionOpen, part
		ds.tickMark(p)
		if torn := part.TornBytes(); torn > 0 {
			ds.data.logger.Warn("shard: partition recovered a torn tail", "partition", p.key.String(), "bytes", torn)
		}
	}
	waiters := p.waiters
	p.waiters = nil
	for _, share := range waiters {
		ds.shareStep(share, p.err)
	}
	if len(p.deleters) > 0 {
		ds.startDelete(p)
		return
	}
	ds.startPurge(p) // purges that came while it opened
	ds.unpark(p)
}

// allocate hands the engine 4096-aligned buffers: the shard's (ring
// memory on io_uring, so writes need no bounce) when it has them aligned,
// else aligned Go memory.
func (ds *DataShard) allocate(bytes int) []byte {
	bytes = (bytes + 4095) &^ 4095
	if bytes <= frameBytesMax {
		buffer := ds.shard.Buffer(bytes)
		if blockAligned(buffer) {
			return buffer
		}
		ds.shard.Release(buffer)
	}
	return alignedHeap(bytes)
}

// retainDone ends a retention run.
func (ds *DataShard) retainDone(p *dataPartition) {
	p.retaining = false
	op := &p.retainOp
	if op.Err != nil {
		ds.data.logger.Warn("shard: retention failed", "partition", p.key.String(), "err", op.Err.Error())
		if engine.IsFatal(op.Err) {
			ds.data.fail(ds.shard, op.Err)
		}
	} else if op.SegmentsDeleted > 0 {
		ds.data.logger.Info("shard: retention removed segments", "partition", p.key.String(),
			"segments", op.SegmentsDeleted, "bytes", op.BytesDeleted)
	}
	ds.schedule(p)
}

// maintain runs retention on every open partition with a limit, and
// gives back the log space allocated ahead of partitions that went idle.
func (ds *DataShard) maintain(now time.Time) {
	for _, p := range ds.partitions {
		if p.state == partitionOpen {
			p.part.TrimSpace()
		}
		if p.state != partitionOpen || p.retaining || p.config.ExpiryMicros == 0 && p.config.SizeBytesMax == 0 {
			continue
		}
		op := &p.retainOp
		op.NowMicros, op.ExpiryMicros, op.SizeBytesMax = uint64(now.UnixMicro()), p.config.ExpiryMicros, p.config.SizeBytesMax
		if err := p.part.Retain(op); err == nil {
			p.retaining = true
		} else if !errors.Is(err, engine.ErrBusy) {
			ds.data.logger.Warn("shard: retention refused", "partition", p.key.String(), "err", err.Error())
		}
	}
}
