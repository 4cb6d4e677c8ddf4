package sim

import (
	"strconv"
	"strings"

	"github.com/whippetio/whippet/vsr"
)

// Run simulates one seed's options to the end: faults for FaultTicks, then
// heal, then up to HealTicksMax ticks for every client request to commit and
// every replica to catch up (invariant 8). It stops at the first failure.
func Run(opts Options) Result {
	c := NewCluster(opts)
	if opts.BootFresh {
		// A group whose replicas all start empty forms only once every
		// replica answers (the fresh bootstrap rule): faults start after.
		c.RunUntilFormed(opts.HealTicksMax)
	}
	for c.now < opts.FaultTicks && c.failure == "" {
		c.injectFaults()
		c.Tick()
		c.updateDamage()
	}
	c.Heal()
	c.RunUntilSettled(opts.HealTicksMax)
	return c.Result()
}

// RunUntilSettled ticks until every client is done and every replica caught
// up, or fails invariant 8 after limit ticks.
func (c *Cluster) RunUntilSettled(limit uint64) {
	deadline := c.now + limit
	for c.failure == "" {
		if c.clientsDone() && c.converged() {
			return
		}
		if c.now >= deadline {
			c.fail("invariant 8: no progress within the liveness bound after faults healed\n" + c.Describe())
			return
		}
		c.Tick()
		c.updateDamage()
	}
}

// RunUntilFormed ticks until every replica of every group is normal, or
// fails invariant 8 after limit ticks.
func (c *Cluster) RunUntilFormed(limit uint64) {
	deadline := c.now + limit
	c.booting = true
	defer func() { c.booting = false }()
	for c.failure == "" && !c.formed() {
		if c.now >= deadline {
			c.fail("invariant 8: fresh replicas formed no group within the liveness bound\n" + c.Describe())
			return
		}
		c.Tick()
	}
}

func (c *Cluster) formed() bool {
	for i := range c.nodes {
		for g := range c.nodes[i].hosts {
			if r := c.nodes[i].hosts[g].replica; r == nil || r.Status() != vsr.StatusNormal {
				return false
			}
		}
	}
	return true
}

// RunFor ticks n times (scenario tests), stopping at a failure.
func (c *Cluster) RunFor(n uint64) {
	for range n {
		if c.failure != "" {
			return
		}
		c.Tick()
		c.updateDamage()
	}
}

// Describe lists every replica's state and the clients still waiting.
func (c *Cluster) Describe() string {
	var b strings.Builder
	for i := range c.nodes {
		n := &c.nodes[i]
		for g := range n.hosts {
			if !n.up {
				b.WriteString("node " + strconv.Itoa(i) + " down\n")
				break
			}
			b.WriteString("  " + n.hosts[g].replica.Summary() + " applied=" + strconv.FormatUint(n.hosts[g].app.applied, 10) + "\n")
		}
	}
	for g := range c.oracles {
		b.WriteString("  group " + strconv.Itoa(g) + " committed=" + strconv.Itoa(len(c.oracles[g].ops)) + "\n")
	}
	for i := range c.clients {
		cl := &c.clients[i]
		if cl.acked < cl.requests {
			b.WriteString("  client " + strconv.FormatUint(cl.id, 10) + " group=" + strconv.Itoa(cl.group) +
				" request=" + strconv.FormatUint(cl.request, 10) + " acked=" + strconv.Itoa(cl.acked) +
				" waiting=" + strconv.FormatBool(cl.waiting) + "\n")
		}
	}
	return b.String()
}
