package sim

import "github.com/whippetio/whippet/vsr"

// applyEntry applies one committed op to a replica's application and checks
// it against the oracle (invariants 1, 2 and 3).
func (c *Cluster) applyEntry(nodeIndex, group int, h *host, e *vsr.Entry) {
	if e.Op != h.app.applied+1 {
		c.fail("invariant 2: a replica committed out of order")
		return
	}
	h.app.apply(e.Op, e.Checksum, e.Client, e.Request, e.Body)
	o := &c.oracles[group]
	if e.Op <= uint64(len(o.ops)) {
		known := o.ops[e.Op-1]
		if known.checksum != e.Checksum {
			c.fail("invariant 1: two replicas committed different ops at one op number")
		}
		if known.appHash != h.app.hash {
			c.fail("invariant 2: application states diverged")
		}
		return
	}
	if e.Op != uint64(len(o.ops))+1 {
		c.fail("invariant 2: an op committed before the op below it")
		return
	}
	if e.Client != 0 {
		key := [2]uint64{e.Client, e.Request}
		if _, seen := o.requests[key]; seen {
			c.fail("invariant 3: a client request committed twice")
		}
		o.requests[key] = e.Op
	}
	o.ops = append(o.ops, committedOp{checksum: e.Checksum, client: e.Client, request: e.Request, appHash: h.app.hash, view: h.replica.View()})
	c.hashAdd(uint64(group), e.Op, uint64(e.Checksum), uint64(nodeIndex))
}

func (c *Cluster) checkSnapshot(group int, h *host) {
	o := &c.oracles[group]
	op := h.app.applied
	if op == 0 || op > uint64(len(o.ops)) {
		c.fail("invariant 2: a state transfer installed an op never committed")
		return
	}
	if o.ops[op-1].appHash != h.app.hash {
		c.fail("invariant 2: a state transfer installed diverged state")
	}
}

// check runs the per-tick invariants. It reads replica state and the oracle
// and draws no randomness.
func (c *Cluster) check() {
	c.checkReplies()
	for i := range c.nodes {
		n := &c.nodes[i]
		if !n.up {
			continue
		}
		for g := range n.hosts {
			c.checkHost(i, g, &n.hosts[g])
		}
	}
}

func (c *Cluster) checkHost(nodeIndex, group int, h *host) {
	r := h.replica
	if r.CommitMin() < h.commitLast {
		c.fail("invariant 7: a commit point moved back")
	}
	h.commitLast = r.CommitMin()
	if h.app.applied != r.CommitMin() {
		c.fail("invariant 2: the application lags the replica's commit point")
	}
	if r.Status() != vsr.StatusNormal || !r.IsPrimary() {
		return
	}
	o := &c.oracles[group]
	if acting, ok := o.primaries[r.View()]; ok && acting != nodeIndex {
		c.fail("invariant 6: two replicas act as primary of one view")
	}
	o.primaries[r.View()] = nodeIndex
	// Ops committed in an earlier view must be in the log of every primary
	// that started a later one; a primary of a stale view may lack ops
	// committed in views after it.
	for op := r.CommitMin() + 1; op <= uint64(len(o.ops)); op++ {
		if o.ops[op-1].view >= r.View() {
			continue
		}
		if op > r.Op() {
			c.fail("invariant 5: a primary's log lost a committed op")
			return
		}
		if r.Checksum(op) != o.ops[op-1].checksum {
			c.fail("invariant 5: a primary's log holds another op where one committed")
			return
		}
	}
	if r.CommitMin() > 0 && r.Checksum(r.CommitMin()) != o.ops[r.CommitMin()-1].checksum {
		c.fail("invariant 1: a primary committed another op than the cluster")
	}
}

// converged reports whether every replica is normal and has committed
// everything any replica committed.
func (c *Cluster) converged() bool {
	if len(c.pendingReplies) > 0 {
		return false
	}
	for i := range c.nodes {
		if !c.nodes[i].up {
			return false
		}
		for g := range c.nodes[i].hosts {
			r := c.nodes[i].hosts[g].replica
			if r.Status() != vsr.StatusNormal || r.CommitMin() < uint64(len(c.oracles[g].ops)) {
				return false
			}
		}
	}
	return true
}
