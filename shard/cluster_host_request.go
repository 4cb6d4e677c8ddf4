package shard

import (
	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/vsr"
)

// A request this node proposes to a group is numbered per (client, group):
// the client is the group's shard on this node in this incarnation. The
// primary steps it into its replica; a backup forwards it to the primary
// and resends it until it applies here, because any hop may drop it (vsr's
// client table turns a resend of a request it holds into nothing, or into
// a Reply once committed). The request completes when this node applies
// the entry that carries its number: every replica applies the same log,
// so what it did here (the offsets an append got) is what it did
// everywhere. A request whose number a later committed request of the
// same client overtook can never commit (the client table refuses older
// numbers), so it is renumbered and proposed again.

// ClusterRequest is one request this node proposes to a group.
type ClusterRequest struct {
	// Operation is the application's operation code.
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

	number   uint64
	state    requestState
	sentTick uint64
	sentView uint32
}

type requestState uint8

const (
	requestWaiting requestState = iota + 1 // to be proposed (stepped or sent)
	requestSent                            // stepped or sent at sentTick
	requestReplied                         // committed: wait for the apply
)

// clusterRequests are a group's requests from this node, by increasing
// number.
type clusterRequests struct {
	pending []*ClusterRequest
	bytes   int
	number  uint64 // the last number assigned
	// overtaken is Claim's scratch list of requests to renumber.
	overtaken []*ClusterRequest
}

func (rs *clusterRequests) init() {
	rs.pending = make([]*ClusterRequest, 0, 64)
}

// Submit proposes req. ErrClusterNotAccepted means nothing was proposed
// (no primary known, a view change under way, too many requests waiting,
// or the link to the primary dropped it). Once Submit returns nil the
// request is the group's until ClusterGroup.Claim returns it (the entry
// applied here) or Failed runs; it is never given up while it might still
// commit.
func (g *ClusterGroup) Submit(req *ClusterRequest) error {
	invariant.Assert(len(req.Message) >= vsr.HeaderBytes, "a request has room for its header")
	rs := &g.requests
	if g.state != vsrGroupOpen || g.replica.Status() != vsr.StatusNormal {
		return ErrClusterNotAccepted
	}
	if len(rs.pending) >= clusterRequestsPerGroupMax || rs.bytes+len(req.Message) > clusterRequestBytesMax {
		return ErrClusterNotAccepted
	}
	g.seal(req)
	req.state = requestWaiting
	if !g.replica.IsPrimary() {
		if !g.shard.send(g.replica.PrimaryIndex(), req.Message) {
			return ErrClusterNotAccepted // nothing left this node
		}
		g.markSent(req)
	}
	rs.pending = append(rs.pending, req)
	rs.bytes += len(req.Message)
	g.kick()
	return nil
}

// seal numbers req and writes its header.
func (g *ClusterGroup) seal(req *ClusterRequest) {
	rs := &g.requests
	rs.number++
	req.number = rs.number
	body := req.Message[vsr.HeaderBytes:]
	sealed := vsr.EncodeRequest(req.Message, g.shard.cluster.options.Cluster, g.id, g.shard.client, req.number,
		req.Operation, body)
	invariant.Assert(len(sealed) == len(req.Message), "a request is sealed in place")
}

func (g *ClusterGroup) markSent(req *ClusterRequest) {
	req.state = requestSent
	req.sentTick = g.shard.ticks
	req.sentView = g.replica.View()
}

// proposable reports whether a waiting request can be stepped here: this
// replica is a normal primary with room in its pipeline.
func (rs *clusterRequests) proposable(g *ClusterGroup) bool {
	r := g.replica
	if r.Status() != vsr.StatusNormal || !r.IsPrimary() || r.Op()-r.CommitMin() >= clusterPipelineLen {
		return false
	}
	return rs.firstWaiting() >= 0
}

func (rs *clusterRequests) firstWaiting() int {
	for i, req := range rs.pending {
		if req.state == requestWaiting {
			return i
		}
	}
	return -1
}

// propose marks the first waiting request sent and returns its message to
// step.
func (rs *clusterRequests) propose(g *ClusterGroup) []byte {
	req := rs.pending[rs.firstWaiting()]
	g.markSent(req)
	return req.Message
}

// tick resends what has waited for too long, or was sent in an earlier
// view: to the primary, or back to the waiting list when this replica is
// the primary now.
func (rs *clusterRequests) tick(g *ClusterGroup) {
	r := g.replica
	if len(rs.pending) == 0 || r.Status() != vsr.StatusNormal {
		return
	}
	resendTicks := uint64(g.shard.cluster.timeouts.NormalTicks / 2)
	for _, req := range rs.pending {
		stale := req.state == requestSent && (req.sentView != r.View() || g.shard.ticks-req.sentTick >= resendTicks)
		if req.state == requestReplied || req.state == requestSent && !stale {
			continue
		}
		if r.IsPrimary() {
			req.state = requestWaiting
			continue
		}
		if g.shard.send(r.PrimaryIndex(), req.Message) {
			g.markSent(req)
		}
	}
}

// onReply stops resending a request the primary reports committed.
func (g *ClusterGroup) onReply(h *vsr.Header) {
	if h.Client != g.shard.client {
		return
	}
	for _, req := range g.requests.pending {
		if req.number == h.Request {
			req.state = requestReplied
			return
		}
	}
}

// Claim returns this node's request that entry commits, or nil when entry
// carries another node's (or an earlier incarnation's) request; the
// request is the caller's again. The application calls it for each entry
// it applies. Requests of this client with lower numbers still waiting
// can never commit now: they are renumbered and proposed again.
func (g *ClusterGroup) Claim(entry *vsr.Entry) *ClusterRequest {
	rs := &g.requests
	if entry.Client != g.shard.client || len(rs.pending) == 0 {
		return nil
	}
	index := -1
	for i, req := range rs.pending {
		if req.number == entry.Request {
			index = i
			break
		}
		if req.number > entry.Request {
			break
		}
	}
	if index < 0 {
		return nil
	}
	req := rs.pending[index]
	rs.bytes -= len(req.Message)
	rs.overtaken = append(rs.overtaken[:0], rs.pending[:index]...)
	total := len(rs.pending)
	kept := copy(rs.pending, rs.pending[index+1:])
	clear(rs.pending[kept:total])
	rs.pending = rs.pending[:kept]
	for _, old := range rs.overtaken {
		g.seal(old) // a fresh number, above every other: the order holds
		old.state = requestWaiting
		rs.pending = append(rs.pending, old)
	}
	clear(rs.overtaken)
	return req
}

// fail ends every request with err.
func (rs *clusterRequests) fail(err error) {
	pending := rs.pending
	rs.pending, rs.bytes = rs.pending[len(pending):], 0
	for i, req := range pending {
		pending[i] = nil
		if req.Failed != nil {
			req.Failed(req, err)
		}
	}
	rs.pending = pending[:0]
}
