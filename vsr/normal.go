package vsr

import (
	"math/bits"

	"github.com/whippetio/whippet/internal/invariant"
)

// onRequest admits a client request at the primary. A retry of the latest
// committed request is answered again; one still in the pipeline is left to
// its commit; an older one is dropped; a new one becomes the next op.
func (r *Replica) onRequest(h *Header, message []byte) {
	if r.status != StatusNormal || !r.IsPrimary() || h.Client == 0 || h.Request == 0 {
		return
	}
	if session, ok := r.clients.find(h.Client); ok {
		if h.Request == session.Request {
			r.sendReply(h.Client, session.Request, session.Op)
			return
		}
		if h.Request < session.Request {
			return
		}
	}
	if r.inPipeline(h.Client, h.Request) {
		return
	}
	if r.op-r.commitMin >= uint64(r.cfg.PipelineLen) {
		return // full: the client retries after its timeout
	}
	if r.op+1-r.commitMin >= uint64(len(r.journal.slots)) {
		return
	}
	r.prepare(h, message[headerBytes:])
}

func (r *Replica) inPipeline(client, request uint64) bool {
	for op := r.commitMin + 1; op <= r.op; op++ {
		s := r.journal.entry(op)
		invariant.Assert(s != nil, "a primary holds every pipeline op")
		if s.client == client && s.request >= request {
			return true
		}
	}
	return false
}

// prepare seals the next op, journals it and sends it down the chain.
func (r *Replica) prepare(request *Header, body []byte) {
	invariant.Assert(r.complete(), "a primary prepares only on a complete log")
	p := r.header(CommandPrepare)
	p.Op = r.op + 1
	p.Commit = r.commitMax
	p.Parent = r.opChecksum
	p.Client = request.Client
	p.Request = request.Request
	p.Operation = request.Operation
	s := &r.journal.slots[r.journal.index(p.Op)]
	size := headerBytes + len(body)
	if cap(s.message) < size {
		s.message = make([]byte, size)
	}
	s.message = encodeMessage(s.message[:size], &p, body)
	r.journal.claim(s, &p)
	r.writeSlot(s)
	r.op = p.Op
	r.opChecksum = p.Checksum
	r.chainLow = min(r.chainLow, r.op)
	r.pipeline[r.op%uint64(r.cfg.PipelineLen)] = 1 << r.replica
	if next := r.next(); next != r.replica {
		r.sendMessage(next, s.message)
	}
	r.commitPipeline()
}

// next is this replica's successor on the ring.
func (r *Replica) next() uint8 { return (r.replica + 1) % r.count }

// onPrepare journals a prepare from the primary of this view, forwards it
// along the chain and acknowledges it to the primary; prepares of earlier
// views arrive as answers to repair requests.
func (r *Replica) onPrepare(h *Header, message []byte) {
	if h.View > r.view && r.status != StatusRecovering {
		r.requestStartView(h.View)
		return
	}
	if h.View < r.view || r.status != StatusNormal || r.IsPrimary() || h.Replica != r.primaryIndex(r.view) {
		r.onRepairPrepare(h, message)
		return
	}
	r.reset(timeoutNormal)
	r.commitMax = max(r.commitMax, h.Commit)
	switch {
	case h.Op <= r.commitMin:
		r.ackedOp = 0 // the primary retransmits: it has lost an ack
	case h.Op <= r.op:
		if s := r.journal.entry(h.Op); s != nil && s.checksum == h.Checksum {
			r.ackedOp = 0
		} else {
			r.onRepairPrepare(h, message)
		}
	case h.Op == r.op+1 && h.Parent == r.opChecksum:
		r.appendPrepare(h, message)
		r.forwardJournaled(h)
	default:
		r.adoptPrepareHead(h, message)
		r.forwardJournaled(h)
	}
}

// forwardJournaled passes on the journal's copy of the prepare h names:
// Ready references only bytes the replica owns, never the caller's input,
// which the caller may reuse before it sends. A prepare past the journal's
// reach is not forwarded; the successor repairs it.
func (r *Replica) forwardJournaled(h *Header) {
	if s := r.journal.entry(h.Op); s != nil && s.checksum == h.Checksum {
		r.forward(s.message)
	}
}

func (r *Replica) appendPrepare(h *Header, message []byte) {
	invariant.Assert(h.Op == r.op+1, "an appended prepare is the next op")
	invariant.Assert(h.Parent == r.opChecksum, "an appended prepare links to the head")
	if h.Op-r.commitMin >= uint64(len(r.journal.slots)) {
		r.setHead(h.Op, h.Checksum)
		return
	}
	headPresent := r.chainLow <= r.op
	s := r.journal.put(h, message)
	r.writeSlot(s)
	r.op = h.Op
	r.opChecksum = h.Checksum
	if !headPresent {
		r.chainLow = r.op
		r.extendChain()
	}
}

// adoptPrepareHead takes a prepare past a gap (or past a stale suffix) as the
// new head; the ops below it are repaired.
func (r *Replica) adoptPrepareHead(h *Header, message []byte) {
	r.setHead(h.Op, h.Checksum)
	if h.Op-r.commitMin < uint64(len(r.journal.slots)) {
		r.writeSlot(r.journal.put(h, message))
		r.chainLow = h.Op
		r.extendChain()
	}
	invariant.Assert(r.op == h.Op, "the adopted prepare is the head")
	r.repair()
}

// forward passes a prepare to the next replica of the chain, which ends
// before it wraps around to the primary.
func (r *Replica) forward(message []byte) {
	if next := r.next(); next != r.primaryIndex(r.view) {
		r.sendMessage(next, message)
	}
}

func (r *Replica) sendPrepareOK() {
	invariant.Assert(!r.IsPrimary(), "only a backup sends PrepareOK")
	invariant.Assert(r.complete(), "PrepareOK promises a complete log")
	ok := r.header(CommandPrepareOK)
	ok.Op = r.op
	ok.Context = r.opChecksum
	r.sendHeader(r.primaryIndex(r.view), 0, &ok)
	r.ackedOp = r.op
}

// onPrepareOK counts an acknowledgement. A backup acknowledges its whole
// log, so an ack for op also acknowledges every op below it.
func (r *Replica) onPrepareOK(h *Header) {
	if h.View != r.view || r.status != StatusNormal || !r.IsPrimary() {
		return
	}
	if h.Op <= r.commitMin || h.Op > r.op || h.Replica == r.replica {
		return
	}
	s := r.journal.entry(h.Op)
	invariant.Assert(s != nil, "a primary holds every pipeline op")
	if s.checksum != h.Context {
		return
	}
	invariant.Assert(h.Op-r.commitMin <= uint64(r.cfg.PipelineLen), "an acknowledged op is in the pipeline")
	for op := r.commitMin + 1; op <= h.Op; op++ {
		r.pipeline[op%uint64(r.cfg.PipelineLen)] |= 1 << h.Replica
	}
	r.commitPipeline()
}

// commitPipeline commits, in order, every pipeline head a quorum holds.
func (r *Replica) commitPipeline() {
	for r.commitMin < r.op {
		acks := r.pipeline[(r.commitMin+1)%uint64(r.cfg.PipelineLen)]
		if bits.OnesCount32(acks) < r.quorum {
			return
		}
		r.commitMax = max(r.commitMax, r.commitMin+1)
		r.commitOne()
	}
}

// commitTo commits the local log up to op, as far as it reaches.
func (r *Replica) commitTo(op uint64) {
	for r.commitMin < min(op, r.op) && r.complete() {
		r.commitOne()
	}
}

func (r *Replica) commitOne() {
	op := r.commitMin + 1
	s := r.journal.entry(op)
	invariant.Assert(s != nil, "a committed op is journaled")
	invariant.Assert(s.parent == r.commitChecksum, "a committed op links to its parent")
	var h Header
	readHeader(s.message, &h)
	r.ready.Committed = append(r.ready.Committed, Entry{Op: op, Checksum: s.checksum, Client: h.Client,
		Request: h.Request, Operation: h.Operation, Body: s.message[headerBytes:]})
	if h.Client != 0 {
		r.clients.commit(h.Client, h.Request, op)
		if r.status == StatusNormal && r.IsPrimary() {
			r.sendReply(h.Client, h.Request, op)
		}
	}
	r.commitMin = op
	r.commitChecksum = s.checksum
	r.chainLow = max(r.chainLow, op+1)
	r.hardChanged = true
}

func (r *Replica) sendReply(client, request, op uint64) {
	reply := r.header(CommandReply)
	reply.Client = client
	reply.Request = request
	reply.Op = op
	reply.Commit = r.commitMin
	r.sendHeader(0, client, &reply)
}

// onCommit is the primary's heartbeat: it moves the commit point and tells a
// backup that fell behind where the head of the log is.
func (r *Replica) onCommit(h *Header) {
	if h.View > r.view && r.status != StatusRecovering {
		r.requestStartView(h.View)
		return
	}
	if h.View != r.view || r.status != StatusNormal || r.IsPrimary() || h.Replica != r.primaryIndex(r.view) {
		return
	}
	r.reset(timeoutNormal)
	r.commitMax = max(r.commitMax, min(h.Commit, h.Op))
	if h.Op > r.op {
		r.setHead(h.Op, h.Context)
		r.repair()
	}
}

func (r *Replica) onCommitTimeout() { r.sendCommit() }

// sendCommit tells every backup the commit point and the head.
func (r *Replica) sendCommit() {
	invariant.Assert(r.status == StatusNormal, "only a normal primary heartbeats")
	invariant.Assert(r.IsPrimary(), "only the primary heartbeats")
	commit := r.header(CommandCommit)
	commit.Commit = r.commitMax
	commit.Op = r.op
	commit.Context = r.opChecksum
	r.broadcast(&commit)
}

// onPrepareTimeout resends, straight to each backup, the pipeline ops it
// has not acknowledged (the chain may be broken anywhere).
func (r *Replica) onPrepareTimeout() {
	invariant.Assert(r.IsPrimary(), "only the primary retransmits")
	for i := uint8(0); i < r.count; i++ {
		if i == r.replica {
			continue
		}
		for op := r.commitMin + 1; op <= r.op; op++ {
			if r.pipeline[op%uint64(r.cfg.PipelineLen)]&(1<<i) != 0 {
				continue
			}
			if len(r.ready.Messages)+int(r.count) >= cap(r.ready.Messages) {
				return
			}
			r.sendMessage(i, r.journal.entry(op).message)
		}
	}
}

func (r *Replica) onNormalTimeout() {
	invariant.Assert(!r.IsPrimary(), "a primary does not time itself out")
	r.startViewChange(r.view + 1)
}

// becomePrimary enters normal status as primary of the view on a complete
// log: commit what is known committed, then collect acks for the rest.
func (r *Replica) becomePrimary() {
	invariant.Assert(r.complete(), "a primary starts on a complete log")
	r.status = StatusNormal
	r.attempts = 0
	r.logView = r.view
	r.hardChanged = true
	r.dvcDecided = false
	r.commitTo(r.commitMax)
	invariant.Assert(r.op-r.commitMin <= uint64(r.cfg.PipelineLen), "the uncommitted suffix fits the pipeline")
	for op := r.commitMin + 1; op <= r.op; op++ {
		r.pipeline[op%uint64(r.cfg.PipelineLen)] = 1 << r.replica
	}
	r.stopAll()
	if r.count > 1 {
		r.start(timeoutPrepare)
		r.start(timeoutCommit)
	}
	start := r.header(CommandStartView)
	start.Op = r.op
	start.Context = r.opChecksum
	start.Commit = r.commitMax
	r.broadcast(&start)
	r.commitPipeline()
}

// becomeBackup enters normal status as a backup of view.
func (r *Replica) becomeBackup() {
	r.status = StatusNormal
	r.attempts = 0
	r.dvcDecided = false
	r.ackedOp = 0
	r.stopAll()
	r.start(timeoutNormal)
	r.start(timeoutRepair)
}
