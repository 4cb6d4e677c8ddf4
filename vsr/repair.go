package vsr

import "github.com/whippetio/whippet/internal/invariant"

// setHead makes (op, sum) the trusted head of the log: it came from the
// primary of the current view (a Prepare, Commit or StartView) or from the
// quorum's choice during a view change. Entries above op belong to a
// discarded suffix and are erased, durably.
func (r *Replica) setHead(op uint64, sum uint32) {
	invariant.Assert(op >= r.commitMin, "a trusted head never falls below the commit point")
	if op == r.commitMin && r.commitUnknown {
		r.learnCommitChecksum(sum)
	}
	if op == r.commitMin {
		invariant.Assert(sum == r.commitChecksum, "a head at the commit point is the committed op")
	}
	for erase := op + 1; erase <= r.op; erase++ {
		r.eraseSlot(erase)
	}
	r.op = op
	r.opChecksum = sum
	r.chainLow = op + 1
	if s := r.journal.entry(op); s != nil && s.checksum == sum {
		r.chainLow = op
	}
	if op == r.commitMin {
		r.chainLow = op + 1
	}
	r.extendChain()
}

// contradicts reports whether a head a peer names conflicts with what this
// replica committed. A correct peer never sends one; such a message is
// dropped rather than trusted (peers are authenticated, not infallible).
func (r *Replica) contradicts(op uint64, sum uint32) bool {
	if op < r.commitMin {
		return true
	}
	return op == r.commitMin && !r.commitUnknown && sum != r.commitChecksum
}

// wanted returns the checksum the op below the verified chain must have.
func (r *Replica) wanted() (op uint64, sum uint32) {
	op = r.chainLow - 1
	if op == r.op {
		return op, r.opChecksum
	}
	s := r.journal.entry(r.chainLow)
	invariant.Assert(s != nil, "the verified chain is present")
	return op, s.parent
}

// extendChain walks the verified chain down through journal entries that
// link to it, until it meets the commit point or a gap.
func (r *Replica) extendChain() {
	for r.chainLow > r.commitMin+1 {
		op, sum := r.wanted()
		s := r.journal.entry(op)
		if s == nil || s.checksum != sum {
			return
		}
		r.chainLow = op
	}
	if r.chainLow == r.commitMin+1 && r.chainLow <= r.op {
		s := r.journal.entry(r.chainLow)
		if r.commitUnknown {
			r.learnCommitChecksum(s.parent)
		}
		invariant.Assert(s.parent == r.commitChecksum, "the log links to the committed prefix")
	}
}

// learnCommitChecksum takes the checksum of the commit point from a chain
// anchored at a trusted head.
func (r *Replica) learnCommitChecksum(sum uint32) {
	invariant.Assert(r.status == StatusRecovering, "only a recovering replica lacks its commit checksum")
	r.commitChecksum = sum
	r.commitUnknown = false
	r.hardChanged = true
}

// repair asks a peer for the ops below the verified chain, newest first, or
// for a state transfer when the gap is wider than the journal.
func (r *Replica) repair() {
	if r.complete() {
		return
	}
	if !r.timeouts[timeoutRepair].running {
		r.start(timeoutRepair)
	}
	peer := r.repairTarget()
	if peer == r.replica {
		invariant.Assert(r.count == 1, "only a lone replica has no peer to repair from")
		return
	}
	if r.op-r.commitMin >= uint64(len(r.journal.slots)) {
		r.requestState(peer)
		return
	}
	op, sum := r.wanted()
	request := r.header(CommandRequestPrepares)
	request.Op = op
	request.Context = sum
	request.Commit = max(r.commitMin+1, op-min(op, repairPreparesMax-1))
	r.sendHeader(peer, 0, &request)
}

// repairTarget prefers the peer that pointed at the head; otherwise a
// seeded draw spreads repair load over the other replicas.
func (r *Replica) repairTarget() uint8 {
	if r.count == 1 {
		return r.replica
	}
	if r.repairPeer != int(r.replica) && r.prng.IntN(2) == 0 {
		return uint8(r.repairPeer)
	}
	peer := uint8(r.prng.IntN(int(r.count) - 1))
	if peer >= r.replica {
		peer++
	}
	return peer
}

func (r *Replica) onRepairTimeout() {
	if r.complete() {
		r.stop(timeoutRepair)
		return
	}
	r.repair()
}

// onRepairPrepare accepts a prepare that answers a repair: the one the chain
// wants (peers answer newest first, so in-order delivery fills a gap in one
// round).
func (r *Replica) onRepairPrepare(h *Header, message []byte) {
	if h.Op >= r.chainLow && h.Op <= r.op && r.journal.entry(h.Op).checksum == h.Checksum {
		// A primary retransmits prepares of earlier views after a view
		// change: it lost this backup's acknowledgement, so send it again.
		r.ackedOp = 0
		return
	}
	if h.Op <= r.commitMin || h.Op >= r.chainLow || h.Op > r.op {
		return
	}
	if h.Op-r.commitMin >= uint64(len(r.journal.slots)) || r.op-r.commitMin >= uint64(len(r.journal.slots)) {
		return
	}
	// Only the op the chain wants is taken. An unverified prepare could come
	// from a stale primary of an older view, and the linked prefix this
	// replica names in DoViewChange must hold no such entry.
	op, sum := r.wanted()
	if h.Op == op && h.Checksum == sum {
		r.writeSlot(r.journal.put(h, message))
		r.chainLow = op
		r.extendChain()
	}
}

// onRequestPrepares serves a repair: the asked op if it has the asked
// checksum, then the ops below it while they link, newest first.
func (r *Replica) onRequestPrepares(h *Header) {
	if h.Replica == r.replica || h.Commit > h.Op {
		return
	}
	s := r.journal.entry(h.Op)
	if s == nil || s.checksum != h.Context {
		if h.Op <= r.commitMin || (r.op >= uint64(len(r.journal.slots)) && h.Op <= r.op-uint64(len(r.journal.slots))) {
			evicted := r.header(CommandPreparesEvicted)
			evicted.Op = h.Op
			r.sendHeader(h.Replica, 0, &evicted)
		}
		return
	}
	for op := h.Op; ; op-- {
		r.sendMessage(h.Replica, s.message)
		if op == h.Commit || op == 0 {
			return
		}
		below := r.journal.entry(op - 1)
		if below == nil || below.checksum != s.parent {
			return
		}
		s = below
	}
}

// onPreparesEvicted means the peer overwrote what this replica needs: only
// a state transfer can bridge the gap.
func (r *Replica) onPreparesEvicted(h *Header) {
	if r.complete() || h.Op >= r.chainLow || h.Op <= r.commitMin {
		return
	}
	r.requestState(h.Replica)
}
