package sim

import (
	"testing"

	"github.com/whippetio/whippet/vsr"
)

// quietOptions is a cluster with a steady workload and no random faults;
// scenarios inject the fault they are about by hand.
func quietOptions(replicas int) Options {
	return Options{
		Seed: 99, ClusterID: 0xc1, Replicas: replicas, Groups: 1, Clients: 3,
		RequestsPerClient: 60, JournalSlots: 64, PipelineLen: 8, ClientsMax: 64,
		ClientRetryTicks: 60, ThinkTicksMax: 10,
		Network:      NetworkOptions{DelayTicksMax: 3},
		HealTicksMax: 6000,
	}
}

func settle(t *testing.T, c *Cluster) {
	t.Helper()
	c.Heal()
	c.RunUntilSettled(c.opts.HealTicksMax)
	if c.Failure() != "" {
		t.Fatal(c.Failure())
	}
}

// runUntil ticks until cond holds, failing after limit ticks.
func runUntil(t *testing.T, c *Cluster, limit int, what string, cond func() bool) {
	t.Helper()
	for range limit {
		if cond() {
			return
		}
		c.Tick()
		if c.Failure() != "" {
			t.Fatal(c.Failure())
		}
	}
	t.Fatalf("%s: not reached in %d ticks\n%s", what, limit, c.Describe())
}

// Primary crash mid-chain: the primary dies with prepares in flight along
// the chain. The backups must elect a new primary that keeps every op a
// quorum acknowledged, and the clients' retries must commit exactly once.
func TestScenarioPrimaryCrashMidChain(t *testing.T) {
	c := NewCluster(quietOptions(3))
	primary := c.Replica(0, 0)
	runUntil(t, c, 2000, "pipeline in flight", func() bool {
		return primary.CommitMin() > 10 && primary.Op() > primary.CommitMin()
	})
	c.Crash(0)
	runUntil(t, c, 3000, "new primary", func() bool {
		r := c.Replica(1, 0)
		return r.Status() == vsr.StatusNormal && r.View() > 0
	})
	settle(t, c)
	if c.Replica(0, 0).View() == 0 {
		t.Fatal("the restarted old primary never joined the new view")
	}
}

// Partitioned primary: the primary is cut off from both backups. It must
// stop committing (no quorum) while the majority elects a new primary and
// goes on; once healed the old primary follows the new view.
func TestScenarioPartitionedPrimary(t *testing.T) {
	c := NewCluster(quietOptions(3))
	runUntil(t, c, 2000, "traffic", func() bool { return c.Committed(0) > 10 })
	old := c.Replica(0, 0)
	c.Partition([]int{1, 0, 0})
	commitIsolated := old.CommitMin()
	runUntil(t, c, 3000, "majority view change", func() bool {
		r := c.Replica(1, 0)
		return r.Status() == vsr.StatusNormal && r.View() > 0 && c.Committed(0) > commitIsolated+5
	})
	if old.CommitMin() > commitIsolated {
		t.Fatalf("the isolated primary committed alone: %d > %d", old.CommitMin(), commitIsolated)
	}
	settle(t, c)
	if old.View() == 0 || old.IsPrimary() {
		t.Fatalf("old primary did not follow: %s", old.Summary())
	}
}

// A view change during a view change: the primary dies, and the replica
// that would lead the next view dies while that view change runs. The
// survivors (5 replicas, quorum 3) must move on to the view after.
func TestScenarioViewChangeDuringViewChange(t *testing.T) {
	c := NewCluster(quietOptions(5))
	runUntil(t, c, 2000, "traffic", func() bool { return c.Committed(0) > 10 })
	c.Crash(0)
	runUntil(t, c, 3000, "view change to 1 started", func() bool {
		return c.Replica(2, 0).Status() == vsr.StatusViewChange
	})
	c.Crash(1) // the primary of view 1
	runUntil(t, c, 6000, "a view led by a live replica", func() bool {
		r := c.Replica(2, 0)
		return r.Status() == vsr.StatusNormal && r.View() >= 2
	})
	settle(t, c)
}

// A backup lags into state transfer: it is down while the group commits
// more ops than its journal holds, so repair alone cannot bring it back.
func TestScenarioLaggingBackupStateTransfer(t *testing.T) {
	opts := quietOptions(3)
	opts.JournalSlots = 16
	opts.PipelineLen = 4
	c := NewCluster(opts)
	runUntil(t, c, 1000, "traffic", func() bool { return c.Committed(0) > 3 })
	c.Crash(2)
	runUntil(t, c, 6000, "a journal's worth of commits", func() bool { return c.Committed(0) > 60 })
	c.Restart(2, false)
	settle(t, c)
	if c.Result().StateTransfers == 0 {
		t.Fatal("the lagging backup caught up without a state transfer")
	}
	if got := c.Replica(2, 0).CommitMin(); got != c.Committed(0) {
		t.Fatalf("lagging backup at %d, cluster at %d", got, c.Committed(0))
	}
}

// The same lag with a snapshot of many chunks over a lossy, reordering
// network: chunks arrive out of order, get lost and are pulled again, and
// the payload must still install whole and verified.
func TestScenarioStateTransferInChunks(t *testing.T) {
	opts := quietOptions(3)
	opts.JournalSlots = 16
	opts.PipelineLen = 4
	opts.SnapshotPadding = 20000
	opts.StateChunkBytes = 100
	opts.Network = NetworkOptions{DelayTicksMax: 6, DropProbability: 0.05, DuplicateProbability: 0.05}
	c := NewCluster(opts)
	runUntil(t, c, 2000, "traffic", func() bool { return c.Committed(0) > 3 })
	c.Crash(2)
	runUntil(t, c, 8000, "a journal's worth of commits", func() bool { return c.Committed(0) > 60 })
	c.Restart(2, false)
	settle(t, c)
	res := c.Result()
	t.Logf("ticks %d, state transfers %d, packets %d", res.Ticks, res.StateTransfers, res.PacketsSent)
	if res.StateTransfers == 0 {
		t.Fatal("the lagging backup caught up without a state transfer")
	}
}

// A restarted replica with a torn journal tail: it crashes inside a journal
// write. The torn slot may have held a prepare it acknowledged, so it must
// recover through the protocol before it votes, then catch up.
func TestScenarioTornJournalTail(t *testing.T) {
	c := NewCluster(quietOptions(3))
	runUntil(t, c, 2000, "traffic", func() bool { return c.Committed(0) > 10 })
	c.CrashTorn(1)
	runUntil(t, c, 2000, "torn crash", func() bool { return c.Replica(1, 0) == nil })
	if c.Result().TornWrites != 1 {
		t.Fatalf("torn writes = %d, want 1", c.Result().TornWrites)
	}
	c.Restart(1, false)
	if got := c.Replica(1, 0).Status(); got != vsr.StatusRecovering {
		t.Fatalf("a torn journal must recover, status %s", got)
	}
	settle(t, c)
}

// A corrupted journal entry repaired from peers: a latent sector error in
// a backup's journal is found at restart; the entry is fetched again from
// the other replicas by its checksum.
func TestScenarioCorruptedEntryRepaired(t *testing.T) {
	c := NewCluster(quietOptions(3))
	runUntil(t, c, 2000, "traffic", func() bool { return c.Committed(0) > 20 })
	c.Crash(2)
	host := &c.nodes[2].hosts[0]
	if !c.corruptSlot(host) {
		t.Fatal("no journal slot to corrupt")
	}
	c.nodes[2].damaged = true
	c.Restart(2, false)
	if got := c.Replica(2, 0).Status(); got != vsr.StatusRecovering {
		t.Fatalf("a corrupt journal must recover, status %s", got)
	}
	settle(t, c)
	for slot, raw := range host.storage.slots {
		var h vsr.Header
		if len(raw) > 0 && vsr.DecodeMessage(raw, &h) != nil {
			t.Fatalf("slot %d still damaged after recovery", slot)
		}
	}
}

// Several groups side by side: view 0's primaries are spread over the
// replicas, and every group commits independently through a crash.
func TestScenarioGroupsSpreadPrimaries(t *testing.T) {
	opts := quietOptions(3)
	opts.Groups = 3
	opts.Clients = 6
	c := NewCluster(opts)
	for g := range 3 {
		if !c.Replica(g, g).IsPrimary() {
			t.Fatalf("group %d's view-0 primary is not replica %d", g, g)
		}
	}
	runUntil(t, c, 2000, "traffic", func() bool { return c.Committed(2) > 5 })
	c.Crash(1)
	settle(t, c)
	for g := range 3 {
		if c.Committed(g) == 0 {
			t.Fatalf("group %d committed nothing", g)
		}
	}
}

// Wiped backup: the primary and one backup commit ops while the other
// backup is down; the primary dies and the acknowledging backup comes back
// with its storage wiped. The wiped replica and the lagging one must not
// form a view without the primary (the ops they would lose were replied
// to): the group waits, and once the primary returns every op survives.
func TestScenarioWipedBackupKeepsAcknowledged(t *testing.T) {
	c := NewCluster(quietOptions(3))
	runUntil(t, c, 2000, "traffic", func() bool { return c.Committed(0) > 5 })
	c.Crash(2)
	before := c.Committed(0)
	runUntil(t, c, 3000, "commits without the lagging backup", func() bool { return c.Committed(0) > before+5 })
	acknowledged := c.Committed(0)
	c.Crash(0)
	c.Crash(1)
	c.Wipe(1)
	c.Restart(1, false)
	c.Restart(2, false)
	c.RunFor(3000)
	if c.Failure() != "" {
		t.Fatal(c.Failure())
	}
	for _, node := range []int{1, 2} {
		r := c.Replica(node, 0)
		if r.Status() == vsr.StatusNormal && r.CommitMin() > 0 && r.CommitMin() < acknowledged && r.IsPrimary() {
			t.Fatalf("node %d leads a view without the acknowledged ops: %s", node, r.Summary())
		}
	}
	if got := c.Replica(1, 0).Status(); got != vsr.StatusRecovering {
		t.Fatalf("the wiped replica is %v without the primary, want recovering", got)
	}
	c.Restart(0, false)
	settle(t, c)
	if c.Committed(0) < acknowledged {
		t.Fatalf("committed %d, acknowledged %d", c.Committed(0), acknowledged)
	}
}

// Fresh boot: every replica starts on empty storage (Open, not New). The
// group forms only by the fresh bootstrap rule, and not while a replica is
// missing (n = 3 needs both others to answer fresh).
func TestScenarioFreshBootNeedsEveryReplica(t *testing.T) {
	opts := quietOptions(3)
	opts.BootFresh = true
	c := NewCluster(opts)
	c.Crash(2)
	c.RunFor(2000)
	for _, node := range []int{0, 1} {
		if got := c.Replica(node, 0).Status(); got != vsr.StatusRecovering {
			t.Fatalf("node %d is %v with a replica missing at boot, want recovering", node, got)
		}
	}
	if c.Committed(0) != 0 {
		t.Fatal("ops committed before the group formed")
	}
	c.Restart(2, false)
	c.RunUntilFormed(5000)
	settle(t, c)
	if c.Committed(0) == 0 {
		t.Fatal("nothing committed after the group formed")
	}
}
