package shard

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/vsr"
)

// A clustered partition's purge and delete-segments are entries of its own
// log, so every node runs them at the same point among the appends and
// offsets. A purge of the topic (metadata generation g) is proposed by
// every node when it applies the metadata command: the first entry of
// generation g to commit purges, the later ones are duplicates. The purge
// resets the log's offset arithmetic (offset next 0) and moves the applied
// mark at once; the engine records g with the purge, so a restart that
// finds the engine purged past the mark skips every entry up to that
// purge's entry (purgePending).

// encodeRecord fills the application record (the applied mark).
func (cp *clusterPartition) encodeRecord(op, next, gen uint64) {
	binary.LittleEndian.PutUint64(cp.record[:], op)
	binary.LittleEndian.PutUint64(cp.record[8:], next)
	binary.LittleEndian.PutUint64(cp.record[16:], gen)
}

// applyMaintenance starts a purge or delete-segments once every earlier
// append and offset is in the engine; false when it must wait.
func (cp *clusterPartition) applyMaintenance(entry *vsr.Entry) bool {
	if cp.appendsInflight > 0 || cp.offsetBusy {
		return false
	}
	purge := entry.Operation == partitionOpPurge
	op := &cp.maintenanceOp
	op.Err, op.SegmentsDeleted, op.BytesDeleted = nil, 0, 0
	switch {
	case purge && len(entry.Body) != 8:
		cp.reject(engine.ErrInvalidBatch)
		return true
	case purge:
		generation := binary.LittleEndian.Uint64(entry.Body)
		if cp.skipPurge(generation) {
			cp.reject(nil)
			return true
		}
		op.PurgeGeneration = generation
	case len(entry.Body) != 4 || cp.purgePending != 0 || cp.offsetNext < cp.skipUntil:
		// Ran before the restart (or cut by a later purge): the engine
		// shows its outcome.
		cp.reject(ErrClusterOutcomeUnknown)
		return true
	default:
		op.SegmentCount = int(binary.LittleEndian.Uint32(entry.Body))
	}
	// Set before the call: Done may run inside it.
	cp.maintenanceBusy, cp.maintenanceKind, cp.maintenanceClaimed = true, entry.Operation, cp.claimed
	var err error
	saved := [3]uint64{cp.purgeGen, cp.offsetNext, cp.skipUntil}
	if purge {
		// The engine restarts the partition empty at offset 0.
		cp.purgeGen = op.PurgeGeneration
		cp.offsetNext, cp.skipUntil = 0, 0
		err = cp.p.part.Purge(op)
	} else {
		err = cp.p.part.DeleteSegments(op)
	}
	if err != nil {
		cp.maintenanceBusy, cp.maintenanceClaimed = false, nil
		cp.purgeGen, cp.offsetNext, cp.skipUntil = saved[0], saved[1], saved[2]
		if errors.Is(err, engine.ErrBusy) {
			return false // retention runs: a tick resumes
		}
		cp.maintenanceFailed(entry.Operation, err)
		cp.reject(err)
		return true
	}
	return true
}

// skipPurge reports whether a purge of generation needs no engine run: a
// duplicate of an applied one, or (after a restart) one the engine ran.
func (cp *clusterPartition) skipPurge(generation uint64) bool {
	if generation <= cp.purgeGen {
		return true
	}
	if cp.purgePending == 0 {
		return false
	}
	cp.purgeGen = generation
	if generation >= cp.purgePending {
		// The engine's last purge: what follows it is in the engine from
		// offset 0 on.
		cp.purgePending, cp.offsetNext = 0, 0
	}
	return true
}

// maintenanceFailed: a purge the engine refuses leaves this replica
// different from its peers; the node stops rather than serve it.
func (cp *clusterPartition) maintenanceFailed(operation uint8, err error) {
	cp.ds.data.logger.Error("shard: replicated maintenance failed", "partition", cp.p.key.String(),
		"operation", operation, "err", err.Error())
	if operation == partitionOpPurge || engine.IsFatal(err) {
		cp.ds.data.fail(cp.ds.shard, &engine.FatalError{Op: "replicated purge", Path: cp.p.key.String(), Err: err})
	}
}

// maintenanceDone answers this node's request, moves the mark after a
// purge and resumes the apply.
func (cp *clusterPartition) maintenanceDone(op *engine.MaintenanceOp) {
	invariant.Assert(cp.maintenanceBusy, "a maintenance op completes once")
	cp.maintenanceBusy = false
	kind, claimed := cp.maintenanceKind, cp.maintenanceClaimed
	cp.maintenanceClaimed = nil
	if op.Err != nil {
		cp.maintenanceFailed(kind, op.Err)
	}
	if claimed != nil {
		if dataOp, ok := claimed.Context.(*DataOp); ok {
			dataOp.SegmentCount = op.SegmentsDeleted
			cp.ds.clusterAnswer(dataOp, op.Err)
		} else {
			cp.purgeAnswered(claimed, op.Err)
		}
	}
	if kind == partitionOpPurge && op.Err == nil && !cp.syncing {
		cp.mark(true) // a restart must not meet the pre-purge mark
	}
	if cp.waiting {
		cp.resume()
	}
	cp.quiesced()
}

// submitPurge proposes the purge of the topic's generation; one at a time
// per partition (the oldest of p.purges).
func (cp *clusterPartition) submitPurge(generation uint64) {
	p := cp.p
	invariant.Assert(!p.purging, "one purge request at a time")
	if cp.purgeSince.IsZero() {
		cp.purgeSince = time.Now()
	}
	p.purging = true
	req := &cp.purgeRequest
	*req = ClusterRequest{Operation: partitionOpPurge, Context: p, Failed: cp.purgeFailed}
	req.Message = make([]byte, vsr.HeaderBytes+8)
	binary.LittleEndian.PutUint64(req.Message[vsr.HeaderBytes:], generation)
	if err := cp.group.Submit(req); err != nil {
		cp.purgeFailed(req, err)
	}
}

// purgeFailed: a purge request the group did not take is proposed again
// at a tick (the purge is committed in the metadata; some node's request
// must enter the partition's log), until the request lifetime passed.
func (cp *clusterPartition) purgeFailed(req *ClusterRequest, err error) {
	req.Message = nil
	p := cp.p
	if !p.purging {
		return
	}
	p.purging = false
	lifetime := cp.ds.data.cluster.requestLifetime
	if errors.Is(err, ErrClusterNotAccepted) && time.Since(cp.purgeSince) < lifetime && p.state == partitionOpen {
		return // the data tick proposes it again
	}
	cp.purgeSince = time.Time{}
	cp.ds.purgeFinished(p, err)
	cp.ds.startPurge(p)
}

// purgeAnswered ends this node's claimed purge request: the purge (or its
// duplicate) applied here.
func (cp *clusterPartition) purgeAnswered(req *ClusterRequest, err error) {
	invariant.Assert(req.Context == cp.p, "the claimed request is a purge")
	req.Message = nil
	p := cp.p
	if !p.purging || len(p.purges) == 0 {
		return // the partition's delete ended its purges
	}
	p.purging = false
	cp.purgeSince = time.Time{}
	cp.ds.purgeFinished(p, err)
	cp.ds.startPurge(p)
	cp.ds.schedule(p)
}
