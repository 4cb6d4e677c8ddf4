package shard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/vsr"
	"github.com/whippetio/whippet/wire"
)

// A clustered partition's writes go through its replication group (id
// clusterPartitionGroupBit | namespace, hosted on the partition's owner
// shard): an append, a stored or deleted consumer offset becomes a request,
// and every node applies the committed log to its own copy of the partition
// in the same order, so offsets are identical everywhere. Reads (polls,
// stored offsets, stats) are served from the local copy on every node.
//
// The local engine writes without fdatasync (written); the group's journal
// is what a quorum makes durable (synced for persisted topics). The
// application record is the applied mark (op, offset next) of a state the
// engine has fdatasynced, so a restart re-applies from there and skips the
// entries whose batches the engine already holds (offset arithmetic).

// Partition group operations (vsr.Entry.Operation).
const (
	partitionOpAppend         uint8 = 1 // body: u64 timestamp µs, batch record
	partitionOpStoreOffset    uint8 = 2 // body: u8 consumer kind, u32 id, u64 offset
	partitionOpDeleteOffset   uint8 = 3 // body: u8 consumer kind, u32 id
	partitionOpPurge          uint8 = 4 // body: u64 the topic's purge generation
	partitionOpDeleteSegments uint8 = 5 // body: u32 segment count
)

const (
	partitionAppendHeaderBytes = 8
	partitionOffsetBodyBytes   = 13
	// partitionRecordBytes: the application record, (applied op, offset
	// next, purge generation); partitionRecordBytesV1 lacks the generation.
	partitionRecordBytes   = 24
	partitionRecordBytesV1 = 16
	// partitionMarkOpsMin: the applied mark moves (an engine fdatasync)
	// once this many ops applied since the last one, or at a tick.
	partitionMarkOpsMin = clusterPipelineLen
)

// clusterPartition is one partition's ClusterApplication.
type clusterPartition struct {
	ds    *DataShard
	p     *dataPartition
	group *ClusterGroup

	// The Apply under way: entries[index] is next; claimed is the request
	// Claim returned for it (kept while the engine is busy).
	entries  []vsr.Entry
	index    int
	claimed  *ClusterRequest
	done     func()
	waiting  bool // the engine was busy: resume at a completion or tick
	resuming bool

	appendsInflight int
	appendFree      []*clusterAppend
	offsetOp        engine.OffsetOp
	offsetBusy      bool
	offsetClaimed   *DataOp

	appliedOp uint64
	// offsetNext is the engine's next offset as the log has it: after a
	// restart the engine may hold more (skipUntil), whose entries are
	// skipped.
	offsetNext uint64
	skipUntil  uint64

	// purgeGen is the topic purge generation the log has applied (a
	// purge request of an older or equal generation is a duplicate: every
	// node proposes each purge). purgePending: after a restart the engine
	// shows a purge (its generation) the mark does not; every entry up to
	// that purge's entry is skipped (the engine holds its outcome).
	purgeGen     uint64
	purgePending uint64

	// The purge or delete-segments of the log under way in the engine, and
	// the request of this node it answers.
	maintenanceOp      engine.MaintenanceOp
	maintenanceBusy    bool
	maintenanceKind    uint8
	maintenanceClaimed *ClusterRequest
	purgeRequest       ClusterRequest
	purgeSince         time.Time

	markedOp   uint64
	syncing    bool
	syncOp     uint64
	syncOffset uint64
	syncGen    uint64
	record     [partitionRecordBytes]byte
	syncFn     func(error)

	restore *partitionRestore // waiting for the writes in flight

	// failed: an engine error on a committed append; the apply is held.
	failed error
}

// partitionGroup is the group id of a partition.
func partitionGroup(key PartitionKey) uint64 { return clusterPartitionGroupBit | key.Namespace() }

// openCluster opens the partition's group (the engine partition is open)
// and calls done.
func (ds *DataShard) openCluster(p *dataPartition, done func(error)) {
	cp := &clusterPartition{ds: ds, p: p}
	cp.offsetOp.Done = cp.offsetDone
	cp.maintenanceOp.Done = cp.maintenanceDone
	cp.syncFn = cp.synced
	// A partition opened for a Create share is being created by a
	// committed command; one opened at start existed before.
	config := GroupConfig{Group: partitionGroup(p.key), Application: cp,
		Sync: p.config.Durability == engine.DurabilityPersisted, Batch: true, Created: len(p.waiters) > 0}
	ds.data.cluster.Local(ds.shard).Open(config, func(g *ClusterGroup, err error) {
		if err == nil {
			cp.group = g
			p.cluster = cp
		}
		done(err)
	})
}

// destroyCluster closes a deleted partition's group (this node's requests
// on it fail, the batch under way ends) and removes its journal, then runs
// next: the engine partition goes only after, so no apply outlives it and
// a partition created again under the same ids opens a fresh group.
func (ds *DataShard) destroyCluster(p *dataPartition, next func()) {
	cp := p.cluster
	if cp == nil {
		next()
		return
	}
	cp.group.Destroy(func(err error) {
		p.cluster = nil
		if err != nil {
			ds.data.logger.Warn("shard: remove a deleted partition's group", "partition", p.key.String(), "err", err.Error())
		}
		next()
	})
}

// Recover reads the applied mark: the engine holds at least everything up
// to it.
// A purge the engine completed after the mark (its generation is newer)
// puts the partition in the purge-pending state instead.
func (cp *clusterPartition) Recover(_ *ClusterGroup, record []byte) (uint64, error) {
	engineNext := cp.p.part.OffsetNext()
	engineGen := cp.p.part.PurgeGeneration()
	switch len(record) {
	case partitionRecordBytes:
		cp.purgeGen = binary.LittleEndian.Uint64(record[16:])
		fallthrough
	case partitionRecordBytesV1:
		cp.appliedOp = binary.LittleEndian.Uint64(record)
		cp.offsetNext = binary.LittleEndian.Uint64(record[8:])
		if len(record) == partitionRecordBytesV1 {
			cp.purgeGen = engineGen
		}
	}
	cp.skipUntil = engineNext
	cp.markedOp = cp.appliedOp
	if engineGen > cp.purgeGen {
		cp.purgePending = engineGen
		return cp.appliedOp, nil
	}
	if engineNext < cp.offsetNext {
		return 0, errors.New("shard: partition holds fewer messages than its applied mark")
	}
	return cp.appliedOp, nil
}

// submit proposes a write op (append, store or delete offset, delete
// segments) of this node through the group; it completes when the entry
// applies here.
func (cp *clusterPartition) submit(op *DataOp) {
	req := &op.clusterRequest
	*req = ClusterRequest{Context: op, Failed: cp.ds.clusterFailedFn}
	switch op.kind {
	case DataDeleteSegments:
		req.Operation = partitionOpDeleteSegments
		req.Message = make([]byte, vsr.HeaderBytes+4)
		binary.LittleEndian.PutUint32(req.Message[vsr.HeaderBytes:], uint32(max(op.SegmentCount, 0)))
	case DataAppend:
		timestamp := op.Timestamp
		if timestamp == 0 {
			timestamp = uint64(cp.ds.data.options.Now().UnixMicro())
		}
		req.Operation = partitionOpAppend
		req.Message = make([]byte, vsr.HeaderBytes+partitionAppendHeaderBytes+len(op.Batch))
		binary.LittleEndian.PutUint64(req.Message[vsr.HeaderBytes:], timestamp)
		copy(req.Message[vsr.HeaderBytes+partitionAppendHeaderBytes:], op.Batch)
	case DataStoreOffset:
		cp.submitOffset(op, partitionOpStoreOffset, op.Offset)
		return
	case DataDeleteOffset:
		cp.submitOffset(op, partitionOpDeleteOffset, 0)
		return
	default:
		invariant.Assert(false, "only writes go through the group")
	}
	if err := cp.group.Submit(req); err != nil {
		cp.ds.clusterFailed(req, err)
	}
}

// submitOffset proposes a stored or deleted consumer offset: a
// StoreOffset, a DeleteOffset, or the auto-commit of a poll (op is the
// poll, answered with what it read once the offset applied here).
func (cp *clusterPartition) submitOffset(op *DataOp, operation uint8, offset uint64) {
	invariant.Assert(operation == partitionOpStoreOffset || operation == partitionOpDeleteOffset, "an offset operation")
	req := &op.clusterRequest
	*req = ClusterRequest{Context: op, Failed: cp.ds.clusterFailedFn, Operation: operation}
	req.Message = make([]byte, vsr.HeaderBytes+partitionOffsetBodyBytes)
	body := req.Message[vsr.HeaderBytes:]
	body[0] = byte(op.Consumer.Kind)
	binary.LittleEndian.PutUint32(body[1:], op.Consumer.ID)
	binary.LittleEndian.PutUint64(body[5:], offset)
	if err := cp.group.Submit(req); err != nil {
		cp.ds.clusterFailed(req, err)
	}
}

// clusterFailed ends an op whose request will not apply here.
func (ds *DataShard) clusterFailed(req *ClusterRequest, err error) {
	ds.clusterAnswer(req.Context.(*DataOp), err)
}

// clusterAnswer completes this node's op with the outcome of its request.
// A poll's auto-commit keeps the poll's result: the messages were read,
// and a commit that did not apply leaves the consumer where it was.
func (ds *DataShard) clusterAnswer(op *DataOp, err error) {
	op.clusterRequest.Message = nil
	if op.kind == DataPoll {
		if err != nil {
			ds.data.logger.Debug("shard: a poll's auto-commit did not apply", "partition", op.Key.String(), "err", err.Error())
		}
	} else {
		op.Err = err
	}
	ds.complete(op)
}

// Apply applies entries in order; an engine that is busy (full journal)
// holds the rest until a completion or tick resumes.
func (cp *clusterPartition) Apply(_ *ClusterGroup, entries []vsr.Entry, done func()) {
	invariant.Assert(cp.done == nil, "one apply at a time")
	cp.entries, cp.index, cp.done = entries, 0, done
	cp.resume()
}

func (cp *clusterPartition) resume() {
	if cp.resuming || cp.done == nil {
		return
	}
	cp.resuming = true
	for cp.index < len(cp.entries) && cp.failed == nil {
		entry := &cp.entries[cp.index]
		if cp.claimed == nil {
			cp.claimed = cp.group.Claim(entry)
		}
		if !cp.applyOne(entry) {
			cp.waiting, cp.resuming = true, false
			return
		}
		cp.claimed = nil
		cp.appliedOp = entry.Op
		cp.index++
	}
	if cp.failed != nil {
		// Held: the group's batch never ends, so this replica neither
		// applies nor acknowledges more of the partition.
		cp.waiting, cp.resuming = true, false
		return
	}
	cp.waiting, cp.resuming = false, false
	done := cp.done
	cp.entries, cp.done = nil, nil
	cp.mark(false)
	done()
}

// applyOne applies one entry; false when the engine cannot take it yet.
func (cp *clusterPartition) applyOne(entry *vsr.Entry) bool {
	if cp.maintenanceBusy {
		return false // a purge or delete-segments runs: later entries see its result
	}
	switch entry.Operation {
	case partitionOpAppend:
		return cp.applyAppend(entry)
	case partitionOpStoreOffset, partitionOpDeleteOffset:
		return cp.applyOffset(entry)
	case partitionOpPurge, partitionOpDeleteSegments:
		return cp.applyMaintenance(entry)
	}
	cp.reject(errors.New("shard: unknown partition operation"))
	return true
}

// claimedOp is the DataOp of this node's request the entry commits.
func (cp *clusterPartition) claimedOp() *DataOp {
	if cp.claimed == nil {
		return nil
	}
	op, _ := cp.claimed.Context.(*DataOp) // a purge's request names its partition
	return op
}

// reject answers the claimed request with err: the entry changes nothing,
// on every node alike.
func (cp *clusterPartition) reject(err error) {
	if op := cp.claimedOp(); op != nil {
		cp.ds.clusterAnswer(op, err)
	} else if cp.claimed != nil {
		cp.purgeAnswered(cp.claimed, err)
	}
}

func (cp *clusterPartition) applyAppend(entry *vsr.Entry) bool {
	body := entry.Body
	var header wire.BatchHeader
	if len(body) < partitionAppendHeaderBytes {
		cp.reject(engine.ErrInvalidBatch)
		return true
	}
	if _, err := header.Decode(body[partitionAppendHeaderBytes:]); err != nil {
		cp.reject(engine.ErrInvalidBatch)
		return true
	}
	if cp.purgePending != 0 || cp.offsetNext < cp.skipUntil {
		// Applied before the restart past the mark: the engine holds it.
		cp.offsetNext += uint64(header.MessageCount)
		cp.reject(ErrClusterOutcomeUnknown)
		return true
	}
	appendOp := cp.takeAppendOp()
	appendOp.claimed = cp.claimedOp()
	if appendOp.claimed != nil {
		appendOp.claimed.clusterRequest.Message = nil // the engine copies the entry's body
	}
	appendOp.Batch = body[partitionAppendHeaderBytes:]
	appendOp.Timestamp = max(binary.LittleEndian.Uint64(body), 1)
	cp.appendsInflight++
	err := cp.p.part.Append(&appendOp.AppendOp)
	cp.p.ticking = true
	cp.ds.tickMark(cp.p)
	appendOp.Batch = nil
	if err != nil {
		cp.appendsInflight--
		appendOp.claimed = nil
		cp.appendFree = append(cp.appendFree, appendOp)
		if errors.Is(err, engine.ErrJournalFull) || errors.Is(err, engine.ErrBusy) {
			return false
		}
		if !errors.Is(err, engine.ErrInvalidBatch) {
			// Not the same on every replica: skipping it would leave a hole.
			cp.appendFailed(err)
			return false
		}
		cp.reject(err)
		return true
	}
	// Done may have run already; the counts it left are intact until the
	// op is taken again.
	cp.offsetNext = appendOp.BaseOffset + uint64(appendOp.Count)
	return true
}

// clusterAppend is one replicated append: the engine op and, when this
// node made the request, the DataOp it answers.
type clusterAppend struct {
	engine.AppendOp
	claimed *DataOp
}

func (cp *clusterPartition) takeAppendOp() *clusterAppend {
	if last := len(cp.appendFree) - 1; last >= 0 {
		op := cp.appendFree[last]
		cp.appendFree = cp.appendFree[:last]
		return op
	}
	op := &clusterAppend{}
	op.Done = func(*engine.AppendOp) { cp.appendDone(op) }
	return op
}

// appendDone answers this node's request with what the engine stored.
func (cp *clusterPartition) appendDone(op *clusterAppend) {
	if op.Err != nil {
		cp.appendFailed(op.Err)
	}
	if claimed := op.claimed; claimed != nil {
		op.claimed = nil
		claimed.BaseOffset, claimed.Messages, claimed.Err = op.BaseOffset, op.Count, op.Err
		if op.Err != nil {
			// The entry committed: other replicas hold it.
			claimed.Err = ErrClusterOutcomeUnknown
		}
		cp.ds.complete(claimed)
	}
	cp.appendFree = append(cp.appendFree, op)
	cp.appended()
}

// appendFailed handles an engine error on a committed append. The engine
// retries failed writes itself (RetryWrites), so what reaches here is not
// a full disk but a fatal or unexpected error: the entry cannot be
// applied, and applying later ones would leave a hole and shift offsets.
// The apply stops for good (failed) and the node stops; the group's other
// replicas hold the entry, and a restart re-applies it from the mark.
func (cp *clusterPartition) appendFailed(err error) {
	if cp.failed == nil {
		cp.failed = err
		cp.ds.data.logger.Error("shard: replicated append failed; the partition stops applying",
			"partition", cp.p.key.String(), "err", err.Error())
	}
	cp.ds.data.fail(cp.ds.shard, fmt.Errorf("shard: replicated append on %s: %w", cp.p.key.String(), err))
}

// appended counts a finished append (this node's or another's) and resumes
// an apply that waited for the engine.
func (cp *clusterPartition) appended() {
	invariant.Assert(cp.appendsInflight > 0, "an append completes once")
	cp.appendsInflight--
	if cp.waiting {
		cp.resume()
	}
	if cp.appendsInflight == 0 {
		cp.quiesced()
	}
}

// applyOffset stores or deletes a consumer offset once every earlier append
// is visible, so the check against the current offset sees the same
// partition on every node.
func (cp *clusterPartition) applyOffset(entry *vsr.Entry) bool {
	if cp.appendsInflight > 0 || cp.offsetBusy {
		return false
	}
	body := entry.Body
	if len(body) < partitionOffsetBodyBytes {
		cp.reject(ErrClusterOutcomeUnknown)
		return true
	}
	offsetOp := &cp.offsetOp
	offsetOp.Consumer = engine.Consumer{Kind: engine.ConsumerKind(body[0]), ID: binary.LittleEndian.Uint32(body[1:])}
	offsetOp.Offset = binary.LittleEndian.Uint64(body[5:])
	if cp.purgePending != 0 {
		// A purge after it cleared it, in the engine already.
		cp.reject(ErrClusterOutcomeUnknown)
		return true
	}
	if entry.Operation == partitionOpStoreOffset && cp.offsetNext < cp.skipUntil &&
		(cp.offsetNext == 0 || offsetOp.Offset > cp.offsetNext-1) {
		// Re-applied after a restart while the engine holds more than the
		// log has reached: checked against the offset the log implies, as
		// it was on every node the first time.
		cp.reject(engine.ErrInvalidOffset)
		return true
	}
	offsetOp.Err = nil
	var err error
	if entry.Operation == partitionOpStoreOffset {
		err = cp.p.part.StoreOffset(offsetOp)
	} else {
		err = cp.p.part.DeleteOffset(offsetOp)
	}
	if errors.Is(err, engine.ErrBusy) {
		return false
	}
	if err != nil {
		cp.reject(err)
		return true
	}
	cp.offsetBusy = true
	cp.offsetClaimed = cp.claimedOp()
	return true
}

func (cp *clusterPartition) offsetDone(op *engine.OffsetOp) {
	cp.offsetBusy = false
	if claimed := cp.offsetClaimed; claimed != nil {
		cp.offsetClaimed = nil
		cp.ds.clusterAnswer(claimed, op.Err)
	}
	if cp.waiting {
		cp.resume()
	}
	cp.quiesced()
}

// mark moves the applied mark: an fdatasync of the partition makes what
// is applied durable, then the group persists (op, offset next) as its
// application record. A tick marks whatever is unmarked.
func (cp *clusterPartition) mark(tick bool) {
	if cp.syncing || cp.appliedOp == cp.markedOp || !tick && cp.appliedOp-cp.markedOp < partitionMarkOpsMin {
		return
	}
	if cp.purgePending != 0 || cp.offsetNext < cp.skipUntil || cp.maintenanceBusy {
		return // the log has not caught up with the engine yet
	}
	op, next := cp.appliedOp, cp.offsetNext
	if err := cp.p.part.Sync(cp.syncFn); err != nil {
		return // busy: a later apply or tick tries again
	}
	cp.syncing, cp.syncOp, cp.syncOffset, cp.syncGen = true, op, next, cp.purgeGen
}

func (cp *clusterPartition) synced(err error) {
	cp.syncing = false
	if err != nil {
		if engine.IsFatal(err) {
			cp.ds.data.fail(cp.ds.shard, err)
		}
		return
	}
	cp.markedOp = cp.syncOp
	cp.encodeRecord(cp.syncOp, cp.syncOffset, cp.syncGen)
	if cp.group != nil && cp.group.state == vsrGroupOpen {
		cp.group.Record(cp.record[:])
	}
}

// tick resumes an apply waiting for the engine and marks what is applied.
func (cp *clusterPartition) tick() {
	if cp.waiting {
		cp.resume()
	}
	cp.mark(true)
}

// partitionSnapshotVersion heads a partition's state transfer payload:
// [version u8][applied op u64][offset next u64][purge generation u64],
// then the engine's partition snapshot (engine.ExportSnapshot).
const (
	partitionSnapshotVersion     = 2
	partitionSnapshotHeaderBytes = 25
)

// errPartitionSnapshot: a state transfer payload this node cannot install.
var errPartitionSnapshot = errors.New("shard: partition snapshot cannot be installed")

// SnapshotReady: a snapshot must wait until every applied append and
// offset is in the engine (clusterSnapshotGate).
func (cp *clusterPartition) SnapshotReady() bool {
	return cp.appendsInflight == 0 && !cp.offsetBusy && !cp.maintenanceBusy
}

// quiesced lets a held snapshot request go once nothing is in flight.
func (cp *clusterPartition) quiesced() {
	if cp.SnapshotReady() {
		if cp.restore != nil {
			cp.install()
			return
		}
		if cp.group != nil {
			cp.group.Quiesced()
		}
	}
}

// Snapshot is the state a lagging replica installs: the applied op, the
// offset next after it, then the partition's contents. A partition that
// cannot be exported (a purge under way, larger than a transfer, damaged)
// yields a payload the receiver refuses, which stops it rather than let it
// serve a partition that differs from its peers.
func (cp *clusterPartition) Snapshot(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, partitionSnapshotVersion)
	dst = binary.LittleEndian.AppendUint64(dst, cp.appliedOp)
	dst = binary.LittleEndian.AppendUint64(dst, cp.offsetNext)
	dst = binary.LittleEndian.AppendUint64(dst, cp.purgeGen)
	if cp.purgePending != 0 || cp.p.part.OffsetNext() != cp.offsetNext {
		cp.ds.data.logger.Error("shard: partition snapshot refused: the engine is not at the applied mark",
			"partition", cp.p.key.String())
		return dst[:start+1]
	}
	limit := engine.SnapshotBytesMax - partitionSnapshotHeaderBytes - (1 << 20)
	out, err := cp.p.part.ExportSnapshot(dst, limit, cp.ds.storage)
	if err != nil {
		cp.ds.data.logger.Error("shard: partition snapshot failed", "partition", cp.p.key.String(), "err", err.Error())
		return dst[:start+1]
	}
	return out
}

// partitionRestore is a peer's state waiting for this partition's
// writes to finish before it replaces the partition.
type partitionRestore struct {
	contents []byte
	op       uint64
	next     uint64
	gen      uint64
	done     func(error)
}

// Restore installs a peer's state: the engine partition closes, its
// directory is replaced by the snapshot's contents and it opens again;
// ops on it wait meanwhile.
func (cp *clusterPartition) Restore(_ *ClusterGroup, snapshot []byte, op uint64, done func(error)) {
	if len(snapshot) < partitionSnapshotHeaderBytes || snapshot[0] != partitionSnapshotVersion {
		done(errPartitionSnapshot)
		return
	}
	applied := binary.LittleEndian.Uint64(snapshot[1:])
	if applied != op {
		done(errPartitionSnapshot)
		return
	}
	cp.restore = &partitionRestore{contents: snapshot[partitionSnapshotHeaderBytes:], op: op,
		next: binary.LittleEndian.Uint64(snapshot[9:]), gen: binary.LittleEndian.Uint64(snapshot[17:]), done: done}
	cp.quiesced()
}

// install replaces the partition with the waiting restore.
func (cp *clusterPartition) install() {
	restore, ds, p := cp.restore, cp.ds, cp.p
	cp.restore = nil
	p.state = partitionOpening // ops park until it opens again
	p.part.Close(func(err error) {
		if err != nil {
			restore.done(err)
			return
		}
		options := ds.partitionOptions(p.key, p.config)
		engine.InstallSnapshot(ds.storage, options, restore.contents, func(part *engine.Partition, err error) {
			if err != nil {
				restore.done(err)
				return
			}
			p.part, p.state = part, partitionOpen
			ds.tickMark(p)
			cp.appliedOp, cp.offsetNext, cp.skipUntil = restore.op, restore.next, part.OffsetNext()
			cp.markedOp = restore.op // the install fdatasynced the contents
			cp.purgeGen, cp.purgePending = restore.gen, 0
			cp.encodeRecord(restore.op, restore.next, restore.gen)
			cp.group.Record(cp.record[:])
			ds.data.logger.Info("shard: partition installed a peer's state", "partition", p.key.String(),
				"op", restore.op, "offset_next", restore.next)
			restore.done(nil)
			ds.unpark(p)
		})
	})
}

// describe names what the partition's apply waits for, for a log line.
func (cp *clusterPartition) describe() string {
	return fmt.Sprintf("applying=%v index=%d/%d waiting=%v appends_inflight=%d offset_busy=%v maintenance_busy=%v "+
		"restore=%v applied=%d marked=%d syncing=%v purge_gen=%d purge_pending=%d",
		cp.done != nil, cp.index, len(cp.entries), cp.waiting, cp.appendsInflight, cp.offsetBusy, cp.maintenanceBusy,
		cp.restore != nil, cp.appliedOp, cp.markedOp, cp.syncing, cp.purgeGen, cp.purgePending)
}
