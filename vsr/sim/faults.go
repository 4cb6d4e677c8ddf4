package sim

import (
	"slices"

	"github.com/whippetio/whippet/vsr"
)

// injectFaults draws this tick's crashes, restarts and partitions from the
// fault stream.
func (c *Cluster) injectFaults() {
	for i := range c.nodes {
		n := &c.nodes[i]
		if n.up {
			if c.faults.Float64() < c.opts.CrashProbability && c.crashAllowed(i) {
				c.Crash(i)
			}
			continue
		}
		n.downFor++
		if c.faults.Float64() < c.opts.RestartProbability {
			corrupt := c.faults.Float64() < c.opts.CorruptProbability
			if c.faults.Float64() < c.opts.WipeProbability {
				c.Wipe(i)
			}
			c.Restart(i, corrupt)
		}
	}
	if c.net.partitioned() {
		if c.faults.Float64() < c.opts.HealProbability {
			c.net.heal()
		}
	} else if c.opts.Replicas > 1 && c.faults.Float64() < c.opts.PartitionProbability {
		c.randomPartition()
	}
}

func (c *Cluster) randomPartition() {
	sides := make([]int, c.opts.Replicas)
	for i := range sides {
		sides[i] = c.faults.IntN(2)
	}
	if c.faults.IntN(3) == 0 {
		// Isolate one replica, often the primary of group 0.
		clear(sides)
		sides[c.faults.IntN(c.opts.Replicas)] = 1
	}
	c.net.partition(sides, c.faults.Float64() < c.opts.Network.OneWayProbability)
	c.partitions++
}

// Crash stops a node now; its storage keeps what it persisted.
func (c *Cluster) Crash(nodeIndex int) {
	if c.nodes[nodeIndex].up {
		c.crash(nodeIndex)
	}
}

// Restart brings a crashed node back from its storage. With corrupt set, one
// written journal slot of one group is damaged first if the fault budget
// allows (a latent sector error found on restart).
func (c *Cluster) Restart(nodeIndex int, corrupt bool) {
	n := &c.nodes[nodeIndex]
	if n.up {
		return
	}
	if corrupt && (n.damaged || c.damageAllowed()) {
		group := c.faults.IntN(len(n.hosts))
		if c.corruptSlot(&n.hosts[group]) {
			n.damaged = true
		}
	}
	c.restarts++
	c.startNode(nodeIndex)
}

// Wipe replaces a crashed node's storage with nothing, as a lost or
// replaced data directory, when the fault budget allows: the node comes
// back with no journal, superblock or application state.
func (c *Cluster) Wipe(nodeIndex int) {
	n := &c.nodes[nodeIndex]
	if n.up || c.opts.Replicas == 1 || !(n.damaged || c.damageAllowed()) {
		return
	}
	for g := range n.hosts {
		h := &n.hosts[g]
		h.storage = storage{slots: make([][]byte, c.opts.JournalSlots)}
		h.app = app{padding: c.opts.SnapshotPadding}
		h.commitDurable, h.commitLast = 0, 0
	}
	n.damaged = true
	c.wipes++
}

// holdsNothing reports whether some group of a node has no durable state.
func (n *node) holdsNothing() bool {
	for g := range n.hosts {
		s := &n.hosts[g].storage
		if s.superblock == nil && !slices.ContainsFunc(s.slots, func(b []byte) bool { return len(b) > 0 }) {
			return true
		}
	}
	return false
}

// CrashTorn crashes a node inside its next persist step that has writes.
func (c *Cluster) CrashTorn(nodeIndex int) {
	c.nodes[nodeIndex].tearNext = true
}

// Partition splits the network: nodes talk only to nodes of the same side.
func (c *Cluster) Partition(sides []int) {
	c.net.partition(sides, false)
	c.partitions++
}

// Heal ends every fault: partitions close, packets stop being lost or
// duplicated, crashed nodes restart, and no new fault is drawn.
func (c *Cluster) Heal() {
	c.healed = true
	c.net.heal()
	c.net.opts.DropProbability = 0
	c.net.opts.DuplicateProbability = 0
	for i := range c.nodes {
		if !c.nodes[i].up {
			c.Restart(i, false)
		}
	}
	// The liveness bound is about requests pending when faults heal; the
	// clients issue no new ones after them.
	for i := range c.clients {
		cl := &c.clients[i]
		cl.requests = min(cl.requests, cl.acked+boolInt(cl.waiting))
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// updateDamage clears a node's damage mark once all its replicas recovered.
func (c *Cluster) updateDamage() {
	for i := range c.nodes {
		n := &c.nodes[i]
		if !n.up || !n.damaged {
			continue
		}
		recovered := true
		for g := range n.hosts {
			if n.hosts[g].replica.Status() == vsr.StatusRecovering {
				recovered = false
			}
		}
		if recovered {
			n.damaged = false
		}
	}
}
