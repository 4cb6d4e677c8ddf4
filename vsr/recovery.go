package vsr

import (
	"errors"
	"slices"

	"github.com/whippetio/whippet/internal/invariant"
)

// recoveryState is the VR Revisited recovery protocol (§4.3) of a replica
// whose journal came back damaged: it may have lost prepares it had
// acknowledged, so it must not vote until it has learned the current log.
type recoveryState struct {
	nonce           uint64
	from            uint32
	viewMax         uint32
	primaryView     uint32
	primaryOp       uint64
	primaryChecksum uint32
	primaryCommit   uint64
	havePrimary     bool
	adopted         bool
	progress        uint64 // chainLow at the last recovery timeout
}

// Open returns a replica restarted from its durable state: the hard state
// last persisted and the raw bytes of every journal slot (nil or zeros for a
// slot never written). Slots that fail their checksums, torn writes or
// corrupted sectors, put the replica into recovery: it may have lost
// prepares it acknowledged, so it learns the log from a quorum before it
// votes again. An intact journal lets it rejoin at once in its durable view.
func Open(cfg Config, hs HardState, slots [][]byte) (*Replica, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	if len(slots) > cfg.JournalSlotCount || hs.LogView > hs.View || cfg.AppliedOp > hs.Commit {
		return nil, ErrConfig
	}
	r := newReplica(cfg)
	r.view, r.logView, r.voteView = hs.View, hs.LogView, hs.VoteView
	r.clients.reset(hs.Clients)
	damaged := r.loadJournal(slots)
	applied, err := r.appliedChecksum(hs, cfg.AppliedOp)
	if err != nil && r.count == 1 {
		return nil, ErrUnrecoverable
	}
	if err != nil {
		// The application lost more than the journal can replay (say, a
		// snapshot it never installed): recover, and repair or transfer
		// state up from the application's op.
		damaged = true
		r.commitUnknown = true
		r.durable = hs
		r.durable.Clients = slices.Clone(hs.Clients)
	}
	r.commitMin, r.commitChecksum, r.commitMax = cfg.AppliedOp, applied, hs.Commit
	r.appliedOp = cfg.AppliedOp
	r.op, r.opChecksum = r.commitMin, r.commitChecksum
	for !r.commitUnknown {
		s := r.journal.entry(r.op + 1)
		if s == nil || s.parent != r.opChecksum {
			break
		}
		r.op, r.opChecksum = r.op+1, s.checksum
	}
	if !r.commitUnknown {
		invariant.Assert(r.op >= r.commitMax, "the journal holds the ops replayed to the application")
	}
	r.chainLow = r.commitMin + 1
	// Entries past a gap above the head are left from a log this replica
	// had moved away from; they must never link into a prefix it names in a
	// DoViewChange, so they are erased, durably, with the first batch.
	for i := range r.journal.slots {
		s := &r.journal.slots[i]
		if s.present && s.op > r.op {
			r.journal.erase(s.op)
			r.ready.Writes = append(r.ready.Writes, Write{Slot: i, Op: s.op})
		}
	}
	r.openStatus(damaged)
	// What Open decided (erasures, replayed commits, messages) becomes the
	// first batch, returned by the first Step or Tick.
	r.carry = true
	return r, nil
}

func (r *Replica) openStatus(damaged bool) {
	if damaged && r.count == 1 {
		// A lone replica commits an op in the batch that persists it, so a
		// damaged slot above the durable commit point was never
		// acknowledged: drop it. (Below it, replay already succeeded.)
		for _, index := range r.damagedSlots {
			r.ready.Writes = append(r.ready.Writes, Write{Slot: index})
		}
		r.damagedSlots = r.damagedSlots[:0]
		damaged = false
	}
	switch {
	case damaged:
		r.startRecovery()
	case r.count == 1 || (r.view == r.logView && r.IsPrimary()):
		r.dvcDecided = true
		r.status = StatusViewChange
		r.becomePrimary()
	case r.view == r.logView:
		r.becomeBackup()
	default:
		r.status = StatusViewChange
		r.startViewChange(r.view)
		r.requestStartView(r.view)
	}
}

var errNoReplay = errors.New("vsr: journal lacks committed ops the application has not applied")

// appliedChecksum walks the journal down from the durable commit point to
// the op the application last applied and returns that op's checksum; the
// ops between are handed to the application again.
func (r *Replica) appliedChecksum(hs HardState, applied uint64) (uint32, error) {
	sum := hs.CommitChecksum
	for op := hs.Commit; op > applied; op-- {
		s := r.journal.entry(op)
		if s == nil || s.checksum != sum {
			return 0, errNoReplay
		}
		sum = s.parent
	}
	return sum, nil
}

// loadJournal validates and loads slots and reports whether any was damaged.
func (r *Replica) loadJournal(slots [][]byte) bool {
	damaged := false
	var h Header
	for i, raw := range slots {
		if empty(raw) {
			continue
		}
		err := DecodeMessage(raw, &h)
		if err != nil || h.Command != CommandPrepare || h.Cluster != r.cfg.Cluster ||
			h.Group != r.cfg.Group || r.journal.index(h.Op) != i || h.Op == 0 {
			damaged = true
			r.damagedSlots = append(r.damagedSlots, i)
			continue
		}
		r.journal.put(&h, raw)
	}
	return damaged
}

func empty(raw []byte) bool {
	for _, b := range raw[:min(len(raw), headerBytes)] {
		if b != 0 {
			return false
		}
	}
	return true
}

func (r *Replica) startRecovery() {
	if r.status == StatusRecovering {
		r.attempts++
	} else {
		r.attempts = 0
	}
	r.status = StatusRecovering
	r.recovery = recoveryState{nonce: r.prng.Uint64() | 1}
	r.stopAll()
	r.start(timeoutRecovery)
	if r.count == 1 {
		return
	}
	recovery := r.header(CommandRecovery)
	recovery.Nonce = r.recovery.nonce
	r.broadcast(&recovery)
}

// onRecovery answers a recovering peer; the primary adds its log head.
func (r *Replica) onRecovery(h *Header) {
	if r.status != StatusNormal || h.Replica == r.replica {
		return
	}
	response := r.header(CommandRecoveryResponse)
	response.Nonce = h.Nonce
	if r.IsPrimary() {
		response.Op = r.op
		response.Context = r.opChecksum
		response.Commit = r.commitMax
	}
	r.sendHeader(h.Replica, 0, &response)
}

// onRecoveryResponse collects answers to this round's nonce. With answers
// from enough replicas that any view-change quorum includes one of them,
// and the head from the primary of the highest view among them, the
// replica adopts that view and head and repairs its journal up to it.
func (r *Replica) onRecoveryResponse(h *Header) {
	rec := &r.recovery
	if r.status != StatusRecovering || h.Nonce != rec.nonce || rec.adopted {
		return
	}
	rec.from |= 1 << h.Replica
	rec.viewMax = max(rec.viewMax, h.View)
	if h.Replica == r.primaryIndex(h.View) && r.contradicts(h.Op, h.Context) {
		return
	}
	if h.Replica == r.primaryIndex(h.View) && (!rec.havePrimary || h.View >= rec.primaryView) {
		rec.havePrimary = true
		rec.primaryView = h.View
		rec.primaryOp = h.Op
		rec.primaryChecksum = h.Context
		rec.primaryCommit = h.Commit
	}
	need := int(r.count) - r.quorum + 1
	if countBits(rec.from) < need || !rec.havePrimary || rec.primaryView != rec.viewMax {
		return
	}
	// A view this replica only started (StartViewChange) promised nothing,
	// and may never have happened; one it voted in, or had a complete log
	// in, it must not go below.
	if rec.primaryView < r.voteView || rec.primaryView < r.logView {
		return
	}
	rec.adopted = true
	r.view = rec.primaryView
	r.hardChanged = true
	r.commitMax = max(r.commitMax, rec.primaryCommit)
	r.repairPeer = int(r.primaryIndex(r.view))
	r.setHead(rec.primaryOp, rec.primaryChecksum)
	invariant.Assert(r.view >= r.voteView, "recovery never joins a view below a vote")
	rec.progress = r.chainLow
	r.repair()
}

// finishRecovery runs once the adopted log is complete: the replica is a
// backup again and may vote.
func (r *Replica) finishRecovery() {
	invariant.Assert(r.complete(), "recovery ends on a complete log")
	invariant.Assert(!r.IsPrimary(), "a recovering replica learned the head from another primary")
	r.becomeBackup()
	r.logView = r.view
	r.hardChanged = true
	r.commitTo(r.commitMax)
	r.sendPrepareOK()
	// The damage is repaired: erase what repair did not overwrite, so a
	// later restart does not take this old damage for a new loss.
	for _, index := range r.damagedSlots {
		if !r.journal.slots[index].present {
			r.ready.Writes = append(r.ready.Writes, Write{Slot: index})
		}
	}
	r.damagedSlots = r.damagedSlots[:0]
}

func (r *Replica) onRecoveryTimeout() {
	invariant.Assert(r.status == StatusRecovering, "only a recovering replica retries recovery")
	rec := &r.recovery
	if rec.adopted && r.chainLow < rec.progress {
		rec.progress = r.chainLow
		return
	}
	if !rec.adopted {
		// Answers to earlier rounds carry the same nonce and still count:
		// a slow network must not starve recovery.
		r.attempts++
		r.start(timeoutRecovery)
		recovery := r.header(CommandRecovery)
		recovery.Nonce = rec.nonce
		r.broadcast(&recovery)
		return
	}
	r.startRecovery()
}
