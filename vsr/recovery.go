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
	// fresh holds the peers that answered they hold nothing (never
	// acknowledged a prepare nor joined a view change); viewZero those that
	// answered their log is still the one of view 0 (never voted, log view
	// 0), with the longest such log in zeroOp, zeroChecksum, zeroPeer.
	fresh        uint32
	viewZero     uint32
	zeroOp       uint64
	zeroChecksum uint32
	zeroCommit   uint64
	zeroPeer     uint8
}

// RecoveryResponse flags, in the header's request field.
const (
	// recoveryFresh: the sender holds nothing (isFresh).
	recoveryFresh uint64 = 1 << 0
	// recoveryNotNormal: the sender is itself recovering; its answer names
	// no view or head and does not count towards adopting one.
	recoveryNotNormal uint64 = 1 << 1
	// recoveryViewZero: the sender never voted and its log view is 0; op,
	// context and commit are its own head and commit point.
	recoveryViewZero uint64 = 1 << 2
)

// Open returns a replica restarted from its durable state: the hard state
// last persisted and the raw bytes of every journal slot (nil or zeros for a
// slot never written). Slots that fail their checksums, torn writes or
// corrupted sectors, put the replica into recovery: it may have lost
// prepares it acknowledged, so it learns the log from a quorum before it
// votes again. An intact journal lets it rejoin at once in its durable view.
//
// Empty durable state (zero HardState, no slot written, AppliedOp 0) is
// taken for lost state: a replica whose data was wiped looks exactly like
// one that never ran. It recovers, and starts fresh at view 0 only when
// enough peers answer that they hold nothing (see doc.go, "Fresh
// replicas"). New is for a replica its caller knows never held anything.
func Open(cfg Config, hs HardState, slots [][]byte) (*Replica, error) {
	return open(cfg, hs, slots, false)
}

func open(cfg Config, hs HardState, slots [][]byte, known bool) (*Replica, error) {
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
	r.fresh = !hs.written && hs.View == 0 && hs.Commit == 0 && len(hs.Clients) == 0 && cfg.AppliedOp == 0 &&
		r.op == 0 && len(r.damagedSlots) == 0
	if (r.fresh && !known && r.count > 1) || hs.Recovering {
		damaged = true
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

// isFresh reports whether this replica holds nothing: its log is empty
// and was never cut (log view 0: no view change completed here, so nothing
// acknowledged was truncated), it never voted (DoViewChange) and knows of no
// commit. It may have started view changes that never completed. A
// recovering replica qualifies only when it started from empty state: a
// damaged one may have lost what it acknowledged.
func (r *Replica) isFresh() bool {
	if r.voteView != 0 || r.logView != 0 || r.op != 0 || r.commitMax != 0 {
		return false
	}
	return r.status != StatusRecovering || r.fresh
}

// viewZero reports whether this replica's log is still the one of view 0:
// it never voted and no view change completed here. Its log may miss ops
// (damaged, or lagging), but holds no op of another view.
func (r *Replica) viewZero() bool { return r.voteView == 0 && r.logView == 0 }

// onRecovery answers a recovering peer; the primary adds its log head, and
// a replica that holds nothing says so, even while it recovers itself.
func (r *Replica) onRecovery(h *Header) {
	viewZero := r.viewZero()
	if (r.status != StatusNormal && !viewZero) || h.Replica == r.replica {
		return
	}
	response := r.header(CommandRecoveryResponse)
	response.Nonce = h.Nonce
	if r.isFresh() {
		response.Request |= recoveryFresh
	}
	if r.status != StatusNormal {
		response.Request |= recoveryNotNormal
	}
	if viewZero {
		response.Request |= recoveryViewZero
		response.Op, response.Context, response.Commit = r.op, r.opChecksum, r.commitMax
	} else if r.IsPrimary() {
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
	need := int(r.count) - r.quorum + 1
	// A peer that says it holds nothing may itself have been wiped: a
	// fresh answer counts only where f-1 of them could be false (doc.go).
	needFresh := need + max(int(r.count-1)/2-1, 0)
	if h.Request&recoveryFresh != 0 {
		rec.fresh |= 1 << h.Replica
		if r.fresh && r.isFresh() && r.view == 0 && countBits(rec.fresh) >= needFresh {
			r.startFresh()
			return
		}
	}
	if h.Request&recoveryViewZero != 0 && r.fresh && r.view == 0 && r.isFresh() && r.onViewZero(h) {
		return
	}
	if h.Request&recoveryNotNormal == 0 {
		rec.from |= 1 << h.Replica
		rec.viewMax = max(rec.viewMax, h.View)
	}
	answered := countBits(rec.from) >= need || countBits(rec.from|rec.fresh) >= needFresh
	if h.Request&recoveryNotNormal != 0 {
		if answered && rec.havePrimary && rec.primaryView == rec.viewMax {
			r.adopt()
		}
		return
	}
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
	if !answered || !rec.havePrimary || rec.primaryView != rec.viewMax {
		return
	}
	r.adopt()
}

// adopt takes the view and head the primary reported and starts repair.
func (r *Replica) adopt() {
	rec := &r.recovery
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

// onViewZero records an answer from a peer whose log is view 0's. Once
// every other replica answered so, no view change ever completed (one
// needs a quorum of votes, and only this replica may have voted before it
// lost its state), so view 0's log is the group's: every committed op is
// in the longest of those logs (a quorum, so some other replica, holds
// it). The replica adopts that log in view 0, or starts fresh when it is
// empty. It reports whether recovery ended or was adopted.
func (r *Replica) onViewZero(h *Header) bool {
	rec := &r.recovery
	rec.viewZero |= 1 << h.Replica
	if rec.viewZero == 1<<h.Replica || h.Op > rec.zeroOp {
		rec.zeroOp, rec.zeroChecksum, rec.zeroCommit, rec.zeroPeer = h.Op, h.Context, h.Commit, h.Replica
	}
	if countBits(rec.viewZero) < int(r.count)-1 {
		return false
	}
	if rec.zeroOp == 0 {
		r.startFresh()
		return true
	}
	rec.adopted = true
	r.hardChanged = true
	r.commitMax = max(r.commitMax, rec.zeroCommit)
	r.repairPeer = int(rec.zeroPeer)
	r.setHead(rec.zeroOp, rec.zeroChecksum)
	rec.progress = r.chainLow
	r.repair()
	return true
}

// startFresh ends the recovery of a replica that started from empty state
// once n-quorum+1 peers answered that they hold nothing: with at most
// quorum-1 replicas (itself included) that may ever have acknowledged a
// prepare, no op can have committed, so view 0 with an empty log is the
// group's state, as for New.
func (r *Replica) startFresh() {
	invariant.Assert(r.fresh && r.isFresh(), "only a replica that holds nothing starts fresh")
	invariant.Assert(r.status == StatusRecovering, "a fresh start ends a recovery")
	r.recovery = recoveryState{}
	r.stopAll()
	if r.IsPrimary() {
		// It may have sealed prepares in view 0 before it lost its state,
		// some maybe still in flight: it never seals in view 0 again.
		r.status = StatusViewChange
		r.startViewChange(1)
		return
	}
	r.becomeBackup()
}

// finishRecovery runs once the adopted log is complete: the replica is a
// backup again and may vote.
func (r *Replica) finishRecovery() {
	invariant.Assert(r.complete(), "recovery ends on a complete log")
	if r.IsPrimary() {
		// Only a view-0 log adopted from peers (onViewZero) makes the
		// replica primary of the adopted view; having lost what it sealed
		// there, it must not seal again in view 0: it completes its log in
		// view 0 and starts view 1.
		invariant.Assert(r.view == 0, "a recovering replica learned the head from another primary")
		r.status = StatusViewChange
		r.logView = r.view
		r.commitTo(r.commitMax)
		r.startViewChange(r.view + 1)
	} else {
		r.becomeBackup()
		r.logView = r.view
		r.hardChanged = true
		r.commitTo(r.commitMax)
		r.sendPrepareOK()
	}
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
