package vsr

// Timeouts are counted in ticks; the caller decides how long a tick is
// (10 ms in the server). Zero fields take the defaults below. NormalTicks
// must exceed CommitTicks plus the slowest expected delivery, or backups
// start view changes against a live primary. View-change and recovery
// timeouts back off exponentially while attempts fail.
type Timeouts struct {
	PrepareTicks          uint32 // primary resends unacknowledged prepares
	CommitTicks           uint32 // primary heartbeat carrying the commit point
	NormalTicks           uint32 // backup gives up on a silent primary
	ViewChangeTicks       uint32 // a stalled view change moves to the next view
	ViewChangeResendTicks uint32 // resend StartViewChange / DoViewChange
	RepairTicks           uint32 // resend RequestPrepares / RequestState
	RecoveryTicks         uint32 // resend Recovery
	JitterTicks           uint32 // seeded jitter added to normal and view-change timeouts
}

func (t *Timeouts) normalize() {
	defaults := Timeouts{PrepareTicks: 20, CommitTicks: 20, NormalTicks: 120,
		ViewChangeTicks: 120, ViewChangeResendTicks: 20, RepairTicks: 10,
		RecoveryTicks: 40, JitterTicks: 60}
	fill := func(field *uint32, value uint32) {
		if *field == 0 {
			*field = value
		}
	}
	fill(&t.PrepareTicks, defaults.PrepareTicks)
	fill(&t.CommitTicks, defaults.CommitTicks)
	fill(&t.NormalTicks, defaults.NormalTicks)
	fill(&t.ViewChangeTicks, defaults.ViewChangeTicks)
	fill(&t.ViewChangeResendTicks, defaults.ViewChangeResendTicks)
	fill(&t.RepairTicks, defaults.RepairTicks)
	fill(&t.RecoveryTicks, defaults.RecoveryTicks)
	fill(&t.JitterTicks, defaults.JitterTicks)
}

// backoffShiftMax caps the exponential backoff of view-change and recovery
// timeouts at 32 times their base.
const backoffShiftMax = 5

type timeoutID uint8

const (
	timeoutPrepare timeoutID = iota
	timeoutCommit
	timeoutNormal
	timeoutViewChange
	timeoutViewChangeResend
	timeoutRepair
	timeoutRecovery
	timeoutCount
)

type timeout struct {
	running bool
	ticks   uint32
	after   uint32
}

func (r *Replica) timeoutBase(id timeoutID) (base uint32, jitter bool) {
	t := &r.cfg.Timeouts
	switch id {
	case timeoutPrepare:
		return t.PrepareTicks, false
	case timeoutCommit:
		return t.CommitTicks, false
	case timeoutNormal:
		return t.NormalTicks, true
	case timeoutViewChange:
		return t.ViewChangeTicks, true
	case timeoutViewChangeResend:
		return t.ViewChangeResendTicks, false
	case timeoutRepair:
		return t.RepairTicks, false
	default:
		return t.RecoveryTicks, false
	}
}

// start (re)arms a timeout. Jittered timeouts draw from the replica's own
// seeded stream so replicas of one seed break ties the same way every run.
func (r *Replica) start(id timeoutID) {
	base, jitter := r.timeoutBase(id)
	after := base
	switch id {
	case timeoutViewChange, timeoutRecovery:
		// Back off while attempts keep failing, so a view change or a
		// recovery outlasts a network slower than its timeout.
		after = base << min(r.attempts, backoffShiftMax)
	}
	if jitter {
		after += uint32(r.prng.IntN(int(r.cfg.Timeouts.JitterTicks) + 1))
	}
	r.timeouts[id] = timeout{running: true, after: after}
}

func (r *Replica) stop(id timeoutID) { r.timeouts[id] = timeout{} }

// reset restarts a running timeout's count without a new jitter draw.
func (r *Replica) reset(id timeoutID) {
	if r.timeouts[id].running {
		r.timeouts[id].ticks = 0
	}
}

func (r *Replica) tickTimeouts() {
	for id := timeoutID(0); id < timeoutCount; id++ {
		t := &r.timeouts[id]
		if !t.running {
			continue
		}
		t.ticks++
		if t.ticks < t.after {
			continue
		}
		t.ticks = 0
		r.onTimeout(id)
	}
}

func (r *Replica) onTimeout(id timeoutID) {
	switch id {
	case timeoutPrepare:
		r.onPrepareTimeout()
	case timeoutCommit:
		r.onCommitTimeout()
	case timeoutNormal:
		r.onNormalTimeout()
	case timeoutViewChange:
		r.onViewChangeTimeout()
	case timeoutViewChangeResend:
		r.onViewChangeResendTimeout()
	case timeoutRepair:
		r.onRepairTimeout()
	case timeoutRecovery:
		r.onRecoveryTimeout()
	}
}

// stopAll stops every timeout; a status change then starts the ones it needs.
func (r *Replica) stopAll() {
	for id := timeoutID(0); id < timeoutCount; id++ {
		r.stop(id)
	}
}
