package shard

import (
	"encoding/binary"
	"time"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/vsr"
)

// Requests this node makes to a group travel as proposals: one vsr request
// numbered per (client, group), where the client is the group's shard on
// this node in this incarnation. A proposal carries one request, or, in a
// group that batches, every request that waited meanwhile (one journal
// write and one fdatasync on each replica for all of them). The primary
// steps it into its replica; a backup forwards it to the primary and
// resends it until it applies here, because any hop may drop it (vsr's
// client table turns a resend of a request it holds into nothing, or into
// a Reply once committed). Each request completes when this node applies
// it (Claim): every replica applies the same log, so what it did here (the
// offsets an append got) is what it did everywhere. A proposal whose number
// a later committed proposal of the same client overtook can never commit
// (the client table refuses older numbers): its requests are proposed
// again under a new number.

// ClusterRequest is one request this node proposes to a group.
type ClusterRequest struct {
	// Operation is the application's operation code (below
	// clusterBatchOperation).
	Operation uint8
	// Message is the request as vsr carries it: vsr.HeaderBytes for the
	// header, which the host seals, then the body. The caller keeps it
	// unchanged until the request is claimed or fails.
	Message []byte
	// Failed runs, on the group's shard, when the request will not be
	// claimed here: the group closed (ErrClusterStopped) or this node's
	// state was replaced by a transfer (its outcome is unknown here).
	Failed  func(req *ClusterRequest, err error)
	Context any

	submitted time.Time
}

// clusterProposal is one vsr request of this node: its requests, in the
// order the entry (or the batch inside it) lists them.
type clusterProposal struct {
	number   uint64
	message  []byte
	requests []*ClusterRequest
	claimed  int // requests Claim returned so far
	created  time.Time
	replied  time.Time // when the primary reported it committed
	state    requestState
	sentTick uint64
	sentView uint32
}

type requestState uint8

const (
	requestWaiting requestState = iota + 1 // to be stepped (primary) or sent
	requestSent                            // stepped or sent at sentTick
	requestReplied                         // committed: wait for the apply
)

// clusterBatchOperation marks an entry that batches several requests:
// the body is, per request, [operation u8][length u32][body]. The host
// unpacks it before the application sees the entries.
const clusterBatchOperation uint8 = 0xFF

// clusterBatchRecordBytes is a batched request's prefix.
const clusterBatchRecordBytes = 5

// clusterRequests are a group's requests from this node: those waiting for
// a proposal, then the proposals by increasing number.
type clusterRequests struct {
	waiting     []*ClusterRequest
	proposals   []*clusterProposal
	count       int // requests held, waiting or proposed
	bytes       int
	number      uint64 // the last number assigned
	batch       bool
	flushArmed  bool
	flushFn     func(time.Time)
	overtaken   []*ClusterRequest // Claim's scratch list
	unpackedBuf []vsr.Entry       // entries with batches unpacked
}

func (rs *clusterRequests) init(g *ClusterGroup, batch bool) {
	rs.batch = batch
	rs.proposals = make([]*clusterProposal, 0, clusterPipelineLen)
	rs.flushFn = func(time.Time) {
		rs.flushArmed = false
		g.flush()
	}
}

// Submit proposes req. ErrClusterNotAccepted means nothing was proposed
// (no primary known, a view change under way, too many requests waiting,
// or this node just stalled: ClusterShard.stalled). Once Submit returns nil the request is the group's until
// ClusterGroup.Claim returns it (the entry applied here) or Failed runs;
// it is never given up while it might still commit.
func (g *ClusterGroup) Submit(req *ClusterRequest) error {
	invariant.Assert(len(req.Message) >= vsr.HeaderBytes, "a request has room for its header")
	invariant.Assert(req.Operation != clusterBatchOperation, "the batch operation is the host's")
	rs := &g.requests
	if g.state != vsrGroupOpen || g.replica.Status() != vsr.StatusNormal {
		return ErrClusterNotAccepted
	}
	if rs.count >= clusterRequestsPerGroupMax || rs.bytes+len(req.Message) > clusterRequestBytesMax {
		return ErrClusterNotAccepted
	}
	now := time.Now()
	if g.shard.stalled(now) {
		return ErrClusterNotAccepted
	}
	req.submitted = now
	rs.waiting = append(rs.waiting, req)
	rs.count++
	rs.bytes += len(req.Message)
	if g.replica.IsPrimary() {
		g.kick()
		return nil
	}
	g.armFlush()
	return nil
}

// armFlush forwards the waiting requests at the end of this loop turn, so
// the requests of one turn travel together.
func (g *ClusterGroup) armFlush() {
	rs := &g.requests
	if rs.flushArmed {
		return
	}
	if _, err := g.shard.shard.After(0, rs.flushFn); err != nil {
		g.shard.shard.fail(err)
		return
	}
	rs.flushArmed = true
}

// flush forwards the waiting requests to the primary (a backup), or lets
// the primary step them. Requests past their lifetime go first: a node
// that was stopped (SIGSTOP) for longer than the lifetime must not forward
// what its clients gave up on before a tick expired it.
func (g *ClusterGroup) flush() {
	rs := &g.requests
	r := g.replica
	if g.state != vsrGroupOpen || len(rs.waiting) == 0 || r.Status() != vsr.StatusNormal {
		return
	}
	rs.expire(g.shard.cluster.requestLifetime)
	if r.IsPrimary() {
		g.kick()
		return
	}
	for len(rs.waiting) > 0 {
		p := g.propose()
		g.sendProposal(p)
	}
}

func (g *ClusterGroup) sendProposal(p *clusterProposal) {
	if g.shard.send(g.replica.PrimaryIndex(), p.message) {
		g.markSent(p)
		return
	}
	p.state = requestWaiting // the link is down: the tick resends
}

// propose turns waiting requests into a new proposal (all of them that
// fit one batch, in a group that batches).
func (g *ClusterGroup) propose() *clusterProposal {
	rs := &g.requests
	invariant.Assert(len(rs.waiting) > 0, "a proposal has requests")
	take, bytes := 1, len(rs.waiting[0].Message)-vsr.HeaderBytes+clusterBatchRecordBytes
	for rs.batch && take < len(rs.waiting) && take < clusterProposalRequestsMax {
		size := len(rs.waiting[take].Message) - vsr.HeaderBytes + clusterBatchRecordBytes
		if bytes+size > clusterProposalBytesMax {
			break
		}
		take, bytes = take+1, bytes+size
	}
	rs.number++
	// A proposal is as old as its oldest request: one that waited (a
	// stopped node, a full pipeline) expires with its client's patience,
	// not a lifetime after it was finally proposed.
	// The waiting list is in arrival order (overtaken requests, older,
	// go back at its head), so its head is the oldest.
	p := &clusterProposal{number: rs.number, state: requestWaiting, created: rs.waiting[0].submitted}
	p.requests = append(make([]*ClusterRequest, 0, take), rs.waiting[:take]...)
	clear(rs.waiting[:take])
	rs.waiting = rs.waiting[take:]
	if len(rs.waiting) == 0 {
		rs.waiting = rs.waiting[:0:0]
	}
	c := g.shard.cluster
	if take == 1 {
		req := p.requests[0]
		p.message = vsr.EncodeRequest(req.Message, c.options.Cluster, g.id, g.shard.client, p.number,
			req.Operation, req.Message[vsr.HeaderBytes:])
	} else {
		message := make([]byte, vsr.HeaderBytes, vsr.HeaderBytes+bytes)
		for _, req := range p.requests {
			message = append(message, req.Operation)
			message = binary.LittleEndian.AppendUint32(message, uint32(len(req.Message)-vsr.HeaderBytes))
			message = append(message, req.Message[vsr.HeaderBytes:]...)
		}
		p.message = vsr.EncodeRequest(message, c.options.Cluster, g.id, g.shard.client, p.number,
			clusterBatchOperation, message[vsr.HeaderBytes:])
	}
	rs.proposals = append(rs.proposals, p)
	return p
}

func (g *ClusterGroup) markSent(p *clusterProposal) {
	p.state = requestSent
	p.sentTick = g.shard.ticks
	p.sentView = g.replica.View()
}

// proposable reports whether this replica, a normal primary with room in
// its pipeline, has a proposal (or requests) to step.
func (rs *clusterRequests) proposable(g *ClusterGroup) bool {
	r := g.replica
	if r.Status() != vsr.StatusNormal || !r.IsPrimary() || r.Op()-r.CommitMin() >= clusterPipelineLen {
		return false
	}
	return rs.firstWaiting() != nil || len(rs.waiting) > 0
}

func (rs *clusterRequests) firstWaiting() *clusterProposal {
	for _, p := range rs.proposals {
		if p.state == requestWaiting {
			return p
		}
	}
	return nil
}

// next returns the message of the proposal to step, marked sent.
func (rs *clusterRequests) next(g *ClusterGroup) []byte {
	p := rs.firstWaiting()
	if p == nil {
		p = g.propose()
	}
	g.markSent(p)
	return p.message
}

// tick resends what has waited for too long, or was sent in an earlier
// view: to the primary, or back to the waiting state when this replica is
// the primary now.
func (rs *clusterRequests) tick(g *ClusterGroup) {
	r := g.replica
	if r.Status() != vsr.StatusNormal {
		return
	}
	rs.expire(g.shard.cluster.requestLifetime)
	resendTicks := uint64(g.shard.cluster.timeouts.NormalTicks / 2)
	for _, p := range rs.proposals {
		stale := p.state == requestSent && (p.sentView != r.View() || g.shard.ticks-p.sentTick >= resendTicks)
		if p.state == requestReplied || p.state == requestSent && !stale {
			continue
		}
		if r.IsPrimary() {
			p.state = requestWaiting
			continue
		}
		g.sendProposal(p)
	}
	if len(rs.waiting) > 0 && !r.IsPrimary() {
		g.flush()
	}
}

// expire gives up requests older than the request lifetime, which their
// clients have given up on too: a waiting one was never proposed
// (ErrClusterNotAccepted); a proposal not known committed stops being
// resent, so a request that stalled with a failed primary does not land
// long after its client moved on (ErrClusterOutcomeUnknown). A committed
// proposal whose apply here has not come a lifetime after the commit (this
// node lags, or its apply is stuck) is given up too: it did commit, but
// what it did here is unknown (ErrClusterOutcomeUnknown); its entry still
// applies when it comes, answering no one.
func (rs *clusterRequests) expire(lifetime time.Duration) {
	now := time.Now()
	for len(rs.waiting) > 0 && now.Sub(rs.waiting[0].submitted) > lifetime {
		req := rs.waiting[0]
		rs.waiting[0] = nil
		rs.waiting = rs.waiting[1:]
		rs.release(req, ErrClusterNotAccepted)
	}
	kept := rs.proposals[:0]
	for _, p := range rs.proposals {
		if !p.expired(now, lifetime) {
			kept = append(kept, p)
			continue
		}
		for _, req := range p.requests[p.claimed:] {
			rs.release(req, ErrClusterOutcomeUnknown)
		}
	}
	clear(rs.proposals[len(kept):])
	rs.proposals = kept
}

// expired reports whether a proposal is given up: one not known committed
// a lifetime after it was made (unless its apply started), one committed
// a lifetime before its apply here finished.
func (p *clusterProposal) expired(now time.Time, lifetime time.Duration) bool {
	if p.state == requestReplied {
		return now.Sub(p.replied) > lifetime
	}
	return p.claimed == 0 && now.Sub(p.created) > lifetime
}

// release ends one request with err.
func (rs *clusterRequests) release(req *ClusterRequest, err error) {
	rs.count--
	rs.bytes -= len(req.Message)
	if req.Failed != nil {
		req.Failed(req, err)
	}
}

// onReply stops resending a proposal the primary reports committed.
func (g *ClusterGroup) onReply(h *vsr.Header) {
	if h.Client != g.shard.client {
		return
	}
	for _, p := range g.requests.proposals {
		if p.number == h.Request {
			if p.state != requestReplied {
				p.state, p.replied = requestReplied, time.Now()
			}
			return
		}
	}
}

// Claim returns this node's request that entry commits, or nil when entry
// carries another node's (or an earlier incarnation's) request; the
// request is the caller's again. The application calls it once for each
// entry it applies, in order. Proposals of this client with lower numbers
// can never commit now: their requests are proposed again.
func (g *ClusterGroup) Claim(entry *vsr.Entry) *ClusterRequest {
	rs := &g.requests
	if entry.Client != g.shard.client {
		return nil
	}
	index := -1
	for i, p := range rs.proposals {
		if p.number >= entry.Request {
			if p.number == entry.Request {
				index = i
			}
			break
		}
	}
	if index < 0 {
		return nil
	}
	if index > 0 {
		g.overtake(index)
		index = 0
	}
	p := rs.proposals[0]
	invariant.Assert(p.claimed < len(p.requests), "an entry claims a request its proposal holds")
	req := p.requests[p.claimed]
	p.requests[p.claimed] = nil
	p.claimed++
	if p.claimed == len(p.requests) {
		rs.proposals[0] = nil
		rs.proposals = rs.proposals[1:]
	}
	rs.count--
	rs.bytes -= len(req.Message)
	return req
}

// overtake puts the requests of the proposals before index back at the
// head of the waiting list, in order, to be proposed again.
func (g *ClusterGroup) overtake(index int) {
	rs := &g.requests
	rs.overtaken = rs.overtaken[:0]
	for _, p := range rs.proposals[:index] {
		invariant.Assert(p.claimed == 0, "an overtaken proposal applied nothing")
		rs.overtaken = append(rs.overtaken, p.requests...)
	}
	rs.waiting = append(rs.overtaken, rs.waiting...)
	rs.overtaken = nil
	clear(rs.proposals[:index])
	rs.proposals = rs.proposals[index:]
	if !g.replica.IsPrimary() {
		g.armFlush()
	}
}

// fail ends every request with err.
func (rs *clusterRequests) fail(err error) {
	var failed []*ClusterRequest
	for _, p := range rs.proposals {
		failed = append(failed, p.requests[p.claimed:]...)
	}
	failed = append(failed, rs.waiting...)
	rs.proposals, rs.waiting = rs.proposals[:0], nil
	rs.count, rs.bytes = 0, 0
	for _, req := range failed {
		if req.Failed != nil {
			req.Failed(req, err)
		}
	}
}

// unpack returns entries with every batch entry replaced by its requests,
// each an entry of the same op; a batch that does not parse (every node
// holds the same bytes) yields none of its requests.
func (rs *clusterRequests) unpack(entries []vsr.Entry) []vsr.Entry {
	batched := false
	for i := range entries {
		batched = batched || entries[i].Operation == clusterBatchOperation
	}
	if !batched {
		return entries
	}
	out := rs.unpackedBuf[:0]
	for _, entry := range entries {
		if entry.Operation != clusterBatchOperation {
			out = append(out, entry)
			continue
		}
		start := len(out)
		for body := entry.Body; len(body) > 0; {
			if len(body) < clusterBatchRecordBytes {
				out = out[:start]
				break
			}
			size := int(binary.LittleEndian.Uint32(body[1:]))
			if size > len(body)-clusterBatchRecordBytes {
				out = out[:start]
				break
			}
			sub := entry
			sub.Operation = body[0]
			sub.Body = body[clusterBatchRecordBytes : clusterBatchRecordBytes+size]
			out = append(out, sub)
			body = body[clusterBatchRecordBytes+size:]
		}
	}
	rs.unpackedBuf = out
	return out
}
