package shard

import (
	"errors"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
)

// dataFan is one owner shard's share of a topic op: the partitions of the
// op's range that shard owns. The owner counts its partitions still at
// work and keeps the first error; the origin merges the shares. Shares are
// allocated per topic op (an admin command), never on the message path.
type dataFan struct {
	op        *DataOp
	remaining int // owner side: partitions still at work, plus one while starting
	err       error
}

// startFan sends a topic op's shares to every shard owning one of its
// partitions (every shard for StatsAll).
func (ds *DataShard) startFan(op *DataOp, kind DataKind) {
	invariant.Assert(op.origin == ds, "an op starts on the shard it came from")
	invariant.Assert(!op.inUse, "an op is started once until Done")
	invariant.Assert(op.Done != nil, "an op has a Done callback")
	op.kind, op.inUse, op.Err = kind, true, nil
	shardCount := len(ds.shard.runtime.shards)
	switch {
	case ds.stopping:
		op.Err = ErrDataStopped
	case kind == DataTopicStats && len(op.Stats) < op.PartitionCount:
		op.Err = errors.New("shard: TopicStats needs len(Stats) >= PartitionCount")
	case kind == DataStatsAll && len(op.Shards) < shardCount:
		op.Err = errors.New("shard: StatsAll needs len(Shards) >= the shard count")
	case kind != DataStatsAll && !ds.fanRangeValid(op):
		op.Err = ErrPartitionNotFound
	}
	if op.Err != nil {
		ds.finish(op)
		return
	}
	owners := ds.fanOwners(op, shardCount)
	op.fanPending = bits.OnesCount64(owners)
	if op.fanPending == 0 {
		ds.finish(op)
		return
	}
	for owner := range shardCount {
		if owners&(1<<owner) == 0 {
			continue
		}
		share := &dataFan{op: op}
		if owner == ds.shard.id {
			ds.runFan(share)
		} else {
			ds.send(owner, Message{Kind: dataMessageFan, Data: share})
		}
	}
}

func (ds *DataShard) fanRangeValid(op *DataOp) bool {
	if op.PartitionCount < 0 || !op.Key.Valid() {
		return false
	}
	last := uint64(op.Key.Partition) + uint64(op.PartitionCount)
	return op.PartitionCount == 0 || last-1 <= NamespacePartitionMax
}

// fanOwners is the set of shards a topic op reaches, as a bit mask.
func (ds *DataShard) fanOwners(op *DataOp, shardCount int) uint64 {
	invariant.Assert(shardCount <= 64, "a fan-out mask covers every shard")
	if op.kind == DataStatsAll {
		return 1<<shardCount - 1
	}
	owners := uint64(0)
	for index := range op.PartitionCount {
		key := op.Key
		key.Partition += uint32(index)
		owners |= 1 << OwnerOf(key, shardCount)
		if bits.OnesCount64(owners) == shardCount {
			break
		}
	}
	return owners
}

// runFan runs this owner's share of a topic op.
func (ds *DataShard) runFan(share *dataFan) {
	op := share.op
	share.remaining = 1 // held until every partition has started
	if op.kind == DataStatsAll {
		op.Shards[ds.shard.id] = ds.totals()
	} else {
		shardCount := len(ds.shard.runtime.shards)
		for index := range op.PartitionCount {
			key := op.Key
			key.Partition += uint32(index)
			if OwnerOf(key, shardCount) != ds.shard.id {
				continue
			}
			ds.runFanPartition(share, key, index)
		}
	}
	ds.shareStep(share, nil)
}

func (ds *DataShard) runFanPartition(share *dataFan, key PartitionKey, index int) {
	op := share.op
	p := ds.partitions[key]
	switch op.kind {
	case DataTopicStats:
		stats := &op.Stats[index]
		switch {
		case p == nil || p.state == partitionDeleting:
			*stats = PartitionStats{Err: ErrPartitionNotFound}
			return
		case p.state == partitionOpening:
			*stats = PartitionStats{Err: ErrDataBusy}
			return
		case p.state == partitionFailed:
			*stats = PartitionStats{Err: p.err}
			return
		}
		*stats = PartitionStats{Stats: p.part.Stats()}
	case DataCreate:
		share.remaining++
		ds.ensure(share, key, p)
	case DataRetention:
		if p != nil && p.state != partitionDeleting {
			p.config.ExpiryMicros, p.config.SizeBytesMax = op.Config.ExpiryMicros, op.Config.SizeBytesMax
		}
	case DataDelete:
		if p == nil {
			return // already gone: delete is idempotent
		}
		share.remaining++
		p.deleters = append(p.deleters, share)
		if p.state != partitionOpening && p.state != partitionDeleting {
			ds.startDelete(p)
		}
	case DataPurge:
		if p == nil || p.state == partitionDeleting || p.state == partitionFailed {
			share.err = cmpErr(share.err, ErrPartitionNotFound)
			if p != nil && p.state == partitionFailed {
				share.err = cmpErr(share.err, p.err)
			}
			return
		}
		share.remaining++
		p.purges = append(p.purges, share)
		ds.tickMark(p)
		if len(p.purges) == 1 && p.state == partitionOpen {
			ds.startPurge(p) // an opening partition starts it once open
		}
	default:
		invariant.Assert(false, "a topic op has a topic kind")
	}
}

// shareStep counts one partition of a share done; the last sends the
// share back to the origin.
func (ds *DataShard) shareStep(share *dataFan, err error) {
	share.err = cmpErr(share.err, err)
	share.remaining--
	invariant.Assert(share.remaining >= 0, "a share finishes once")
	if share.remaining > 0 {
		return
	}
	if engine.IsFatal(share.err) {
		ds.data.fail(ds.shard, share.err)
	}
	origin := share.op.origin
	if origin == ds {
		ds.fanDone(share)
		return
	}
	ds.send(origin.shard.id, Message{Kind: dataMessageFanDone, Data: share})
}

// fanDone merges a share on the origin; the last one finishes the op.
func (ds *DataShard) fanDone(share *dataFan) {
	op := share.op
	invariant.Assert(op.origin == ds, "a share returns to the op's origin")
	invariant.Assert(op.fanPending > 0, "a share returns once")
	op.Err = cmpErr(op.Err, share.err)
	op.fanPending--
	if op.fanPending == 0 {
		ds.finish(op)
	}
}

// cmpErr keeps the first error.
func cmpErr(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

// ensure opens a partition for a Create share unless it is open already.
func (ds *DataShard) ensure(share *dataFan, key PartitionKey, p *dataPartition) {
	switch {
	case p == nil:
		ds.open(key, share.op.Config, share)
	case p.state == partitionOpening:
		p.waiters = append(p.waiters, share)
	case p.state == partitionDeleting:
		p.recreate = append(p.recreate, share)
	case p.state == partitionFailed:
		ds.shareStep(share, p.err)
	default:
		ds.shareStep(share, nil)
	}
}

// startDelete removes a partition for good once it is no longer opening:
// parked ops fail, the engine removes its files (a partition that failed
// to open has its directory removed as it is).
func (ds *DataShard) startDelete(p *dataPartition) {
	invariant.Assert(p.state != partitionOpening, "a delete waits for the open")
	failedOpen := p.state == partitionFailed
	p.state = partitionDeleting
	ds.tickMark(p)
	ds.unpark(p) // fails every parked op: the partition is going
	if failedOpen {
		err := os.RemoveAll(PartitionDirectory(ds.data.options.Directory, p.key))
		ds.deleted(p, err)
		return
	}
	ds.destroyCluster(p, func() {
		p.part.Delete(func(err error) { ds.deleted(p, err) })
	})
}

// deleted ends a delete: the Delete shares finish, and a Create that came
// meanwhile opens the partition afresh.
func (ds *DataShard) deleted(p *dataPartition, err error) {
	if ds.partitions[p.key] == p {
		delete(ds.partitions, p.key)
	}
	for len(p.purges) > 0 {
		ds.purgeFinished(p, ErrPartitionNotFound) // waited, never started
	}
	deleters, recreate := p.deleters, p.recreate
	p.deleters, p.recreate = nil, nil
	for _, share := range deleters {
		ds.shareStep(share, err)
	}
	for index, share := range recreate {
		if index == 0 {
			ds.open(p.key, share.op.Config, share)
			continue
		}
		ds.ensure(share, p.key, ds.partitions[p.key])
	}
	if next := ds.partitions[p.key]; next != nil && next != p {
		// Ops that came after the Create wait for the new partition.
		next.parked = append(next.parked, p.parked[p.parkHead:]...)
		ds.tickMark(next)
		p.parked, p.parkHead = nil, 0
		return
	}
	ds.unpark(p) // no Create came: what parked fails
}

// startPurge runs the oldest waiting purge of a partition.
func (ds *DataShard) startPurge(p *dataPartition) {
	for len(p.purges) > 0 {
		if p.state != partitionOpen {
			ds.purgeFinished(p, p.failure())
			continue
		}
		if p.purging {
			return
		}
		if p.cluster != nil {
			// An entry of the partition's log, run on every node.
			p.cluster.submitPurge(p.purges[0].op.PurgeGeneration)
			return
		}
		err := p.part.Purge(&p.purgeOp)
		if err == nil {
			p.purging = true
			return
		}
		if errors.Is(err, engine.ErrBusy) {
			// Retention or DeleteSegments runs: retry on the next tick.
			return
		}
		ds.purgeFinished(p, err)
	}
}

func (ds *DataShard) purgeDone(p *dataPartition) {
	p.purging = false
	ds.purgeFinished(p, p.purgeOp.Err)
	ds.startPurge(p)
	ds.schedule(p)
}

// purgeFinished ends the oldest waiting purge with err.
func (ds *DataShard) purgeFinished(p *dataPartition, err error) {
	share := p.purges[0]
	copy(p.purges, p.purges[1:])
	p.purges[len(p.purges)-1] = nil
	p.purges = p.purges[:len(p.purges)-1]
	ds.shareStep(share, err)
}

// totals sums this shard's open partitions.
func (ds *DataShard) totals() ShardDataStats {
	var totals ShardDataStats
	for _, p := range ds.partitions {
		if p.state != partitionOpen {
			continue
		}
		stats := p.part.Stats()
		totals.Partitions++
		totals.Segments += stats.SegmentCount
		totals.MessagesCount += stats.MessagesCount
		totals.SizeBytes += stats.SizeBytes
	}
	return totals
}

// RemoveTopicDirectory removes a deleted topic's now empty directories
// ({root}/streams/{stream}/topics/{topic} and its partitions directory).
// Call it after Delete of every partition of the topic completed, before
// the topic id can be reused; a directory that is not empty stays.
func RemoveTopicDirectory(root string, stream, topic uint32) error {
	topicDirectory := filepath.Join(root, "streams", strconv.FormatUint(uint64(stream), 10),
		"topics", strconv.FormatUint(uint64(topic), 10))
	for _, path := range []string{filepath.Join(topicDirectory, "partitions"), topicDirectory} {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}
