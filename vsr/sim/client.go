package sim

import (
	"math/rand/v2"

	"github.com/whippetio/whippet/vsr"
)

// client is one producer bound to one group. It keeps one request in flight
// and retries it (to every replica) until a reply arrives.
type client struct {
	id       uint64
	group    int
	request  uint64 // in flight, or the last one acknowledged when done
	body     []byte
	sentAt   uint64
	waiting  bool
	primary  int // the replica it believes is primary
	acked    int
	startAt  uint64
	retries  int
	requests int // how many this client makes in all
	nextAt   uint64
	message  []byte
}

func (c *Cluster) newClients(prng *rand.Rand) {
	for i := range c.opts.Clients {
		group := i % c.opts.Groups
		c.clients = append(c.clients, client{
			id:       uint64(i + 1),
			group:    group,
			primary:  group % c.opts.Replicas,
			startAt:  uint64(prng.IntN(50)),
			requests: c.opts.RequestsPerClient,
		})
	}
}

func (c *Cluster) tickClients() {
	for i := range c.clients {
		cl := &c.clients[i]
		switch {
		case !cl.waiting && cl.acked < cl.requests && c.now >= cl.startAt && c.now >= cl.nextAt:
			cl.request++
			cl.body = cl.body[:0]
			for range 8 + c.workload.IntN(24) {
				cl.body = append(cl.body, byte(c.workload.Uint32()))
			}
			cl.message = vsr.EncodeRequest(cl.message, c.opts.ClusterID, uint64(cl.group), cl.id, cl.request, 1, cl.body)
			cl.waiting = true
			cl.sentAt = c.now
			c.net.send(-1, cl.primary, 0, cl.message)
		case cl.waiting && c.now-cl.sentAt >= c.opts.ClientRetryTicks:
			cl.sentAt = c.now
			cl.retries++
			for node := range c.opts.Replicas {
				c.net.send(-1, node, 0, cl.message)
			}
		}
	}
}

// onReply checks a reply against the committed log (invariant 4) and moves
// the client on.
func (c *Cluster) onReply(message []byte) {
	var h vsr.Header
	if err := vsr.DecodeMessage(message, &h); err != nil {
		c.fail("client received a corrupt reply: " + err.Error())
		return
	}
	cl := &c.clients[h.Client-1]
	if h.Op == 0 {
		c.fail("invariant 4: reply names op 0")
		return
	}
	// The primary may crash between sending a reply and applying the op, so
	// the oracle may learn of the op only later: the check waits for it.
	c.pendingReplies = append(c.pendingReplies, pendingReply{h.Group, h.Op, h.Client, h.Request})
	cl.primary = int((uint64(h.View) + h.Group) % uint64(c.opts.Replicas))
	if !cl.waiting || h.Request != cl.request {
		return
	}
	cl.waiting = false
	cl.acked++
	if c.opts.ThinkTicksMax > 0 && !c.healed {
		cl.nextAt = c.now + uint64(c.workload.IntN(c.opts.ThinkTicksMax))
	}
	c.replies++
	c.hashAdd(uint64(h.Client), h.Request, h.Op)
}

func (c *Cluster) clientsDone() bool {
	for i := range c.clients {
		if c.clients[i].acked < c.clients[i].requests {
			return false
		}
	}
	return true
}

// pendingReply is a reply whose op the oracle had not yet seen commit.
type pendingReply struct {
	group, op, client, request uint64
}

// checkReplies verifies every reply whose op the oracle now knows
// (invariant 4); settled requires none to be left.
func (c *Cluster) checkReplies() {
	kept := c.pendingReplies[:0]
	for _, p := range c.pendingReplies {
		oracle := &c.oracles[p.group]
		if p.op > uint64(len(oracle.ops)) {
			kept = append(kept, p)
			continue
		}
		committed := oracle.ops[p.op-1]
		if committed.client != p.client || committed.request != p.request {
			c.fail("invariant 4: a reply names an op that committed another request")
		}
	}
	c.pendingReplies = kept
}
