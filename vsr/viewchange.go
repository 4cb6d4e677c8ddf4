package vsr

import "github.com/whippetio/whippet/internal/invariant"

// startViewChange moves to view and votes for it. The new view is persisted
// (Ready.HardState) before the StartViewChange leaves, so a restarted replica
// never acts in a view below one it voted for.
func (r *Replica) startViewChange(view uint32) {
	invariant.Assert(view > r.view || r.status != StatusNormal, "a view change moves forward")
	invariant.Assert(r.status != StatusRecovering, "a recovering replica does not vote")
	if r.status == StatusViewChange {
		r.attempts++
	} else {
		r.attempts = 0
	}
	r.view = view
	r.status = StatusViewChange
	r.hardChanged = true
	r.svcFrom = 0
	r.dvcFrom = 0
	r.dvcSent = false
	r.dvcDecided = false
	r.ackedOp = 0
	r.stopAll()
	r.start(timeoutViewChange)
	r.start(timeoutViewChangeResend)
	r.start(timeoutRepair)
	svc := r.header(CommandStartViewChange)
	r.broadcast(&svc)
	r.maybeSendDoViewChange()
}

func (r *Replica) onStartViewChange(h *Header) {
	if r.status == StatusRecovering || h.View < r.view {
		return
	}
	if h.View > r.view {
		r.startViewChange(h.View)
	}
	if r.status != StatusViewChange || h.View != r.view {
		return
	}
	r.svcFrom |= 1 << h.Replica
	r.maybeSendDoViewChange()
}

// maybeSendDoViewChange votes once StartViewChange arrived from a quorum
// (counting this replica). The vote names the longest hash-linked prefix of
// the log this replica holds, so a new primary can always fetch what it picks.
func (r *Replica) maybeSendDoViewChange() {
	if r.dvcSent || countBits(r.svcFrom)+1 < r.quorum {
		return
	}
	r.dvcSent = true
	r.sendDoViewChange()
}

func (r *Replica) sendDoViewChange() {
	op, sum := r.prefix()
	if r.voteView < r.view {
		r.voteView = r.view
		r.hardChanged = true
	}
	if r.isPrimaryOf(r.view) {
		r.recordDoViewChange(r.replica, dvcVote{r.logView, op, sum, r.commitMax})
		return
	}
	dvc := r.header(CommandDoViewChange)
	dvc.LogView = r.logView
	dvc.Op = op
	dvc.Context = sum
	dvc.Commit = r.commitMax
	r.sendHeader(r.primaryIndex(r.view), 0, &dvc)
}

// prefix returns the highest op such that the journal holds every op from
// the commit point up to it, each linked to its parent, and its checksum.
func (r *Replica) prefix() (uint64, uint32) {
	op, sum := r.commitMin, r.commitChecksum
	for op < r.op {
		s := r.journal.entry(op + 1)
		if s == nil || s.parent != sum {
			break
		}
		op, sum = op+1, s.checksum
	}
	invariant.Assert(op <= r.op, "the named prefix lies inside the log")
	return op, sum
}

func (r *Replica) onDoViewChange(h *Header) {
	if r.status == StatusRecovering || h.View < r.view || !r.isPrimaryOf(h.View) {
		return
	}
	if h.View > r.view {
		r.startViewChange(h.View)
	}
	if r.status != StatusViewChange || h.View != r.view {
		return
	}
	r.recordDoViewChange(h.Replica, dvcVote{h.LogView, h.Op, h.Context, h.Commit})
}

// recordDoViewChange counts a vote; with a quorum (its own vote included) the
// new primary picks the log of the highest (log view, op) and repairs its own
// journal to it before it starts the view (advance → becomePrimary).
func (r *Replica) recordDoViewChange(from uint8, vote dvcVote) {
	invariant.Assert(r.isPrimaryOf(r.view), "only the new primary counts DoViewChange")
	invariant.Assert(r.status == StatusViewChange, "DoViewChange counts during a view change")
	r.dvcVotes[from] = vote
	r.dvcFrom |= 1 << from
	if r.dvcDecided || r.dvcFrom&(1<<r.replica) == 0 || countBits(r.dvcFrom) < r.quorum {
		return
	}
	best := r.replica
	commit := uint64(0)
	for i := uint8(0); i < r.count; i++ {
		if r.dvcFrom&(1<<i) == 0 {
			continue
		}
		v, b := r.dvcVotes[i], r.dvcVotes[best]
		if v.logView > b.logView || (v.logView == b.logView && v.op > b.op) {
			best = i
		}
		commit = max(commit, v.commit)
	}
	chosen := r.dvcVotes[best]
	if r.contradicts(chosen.op, chosen.checksum) {
		// Impossible with correct peers: the chosen log holds every
		// committed op. Wait for the next view rather than lose one.
		r.dvcFrom = 1 << r.replica
		return
	}
	// Every op at least a pipeline below the head was committed by the
	// primary that prepared the head.
	if chosen.op > uint64(r.cfg.PipelineLen) {
		commit = max(commit, chosen.op-uint64(r.cfg.PipelineLen))
	}
	r.commitMax = max(r.commitMax, min(commit, chosen.op))
	r.dvcDecided = true
	r.repairPeer = int(best)
	r.setHead(chosen.op, chosen.checksum)
	r.repair()
}

// onStartView installs the new primary's head; the journal is then repaired
// up to it and the backup acknowledges once its log is complete.
func (r *Replica) onStartView(h *Header) {
	if r.status == StatusRecovering || h.View < r.view || r.isPrimaryOf(h.View) {
		return
	}
	if h.View == r.view && r.status == StatusNormal || r.contradicts(h.Op, h.Context) {
		return
	}
	r.view = h.View
	r.hardChanged = true
	r.becomeBackup()
	r.commitMax = max(r.commitMax, h.Commit)
	r.setHead(h.Op, h.Context)
	invariant.Assert(r.status == StatusNormal && !r.IsPrimary(), "StartView makes a backup")
	r.repairPeer = int(h.Replica)
	r.repair()
}

// requestStartView asks the primary of a view this replica missed the start
// of for its StartView.
func (r *Replica) requestStartView(view uint32) {
	rsv := r.header(CommandRequestStartView)
	rsv.View = view
	r.sendHeader(r.primaryIndex(view), 0, &rsv)
}

func (r *Replica) onRequestStartView(h *Header) {
	if h.View != r.view || r.status != StatusNormal || !r.IsPrimary() || h.Replica == r.replica {
		return
	}
	start := r.header(CommandStartView)
	start.Op = r.op
	start.Context = r.opChecksum
	start.Commit = r.commitMax
	r.sendHeader(h.Replica, 0, &start)
}

func (r *Replica) onViewChangeTimeout() {
	invariant.Assert(r.status == StatusViewChange, "only a view change stalls")
	r.startViewChange(r.view + 1)
}

func (r *Replica) onViewChangeResendTimeout() {
	svc := r.header(CommandStartViewChange)
	r.broadcast(&svc)
	if r.dvcSent && !r.isPrimaryOf(r.view) {
		r.sendDoViewChange()
	}
}

func countBits(set uint32) int {
	count := 0
	for ; set != 0; set &= set - 1 {
		count++
	}
	return count
}
