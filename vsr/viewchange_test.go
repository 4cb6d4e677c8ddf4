package vsr

import "testing"

func (c *testCluster) craft(h Header) []byte {
	h.Cluster = 9
	h.Group = c.replicas[0].cfg.Group
	return encodeMessage(make([]byte, headerBytes), &h, nil)
}

// TestDoViewChangePrefersLogViewOverLength checks the VR rule: the new
// primary takes the log of the highest log view, even when a log of an
// older view is longer (its extra ops were never committed in the newer
// view). Reference: VR Revisited §4.2, step 3.
func TestDoViewChangePrefersLogViewOverLength(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	for i := uint64(1); i <= 3; i++ {
		c.request(0, 5, i, "x")
	}
	r := c.replicas[1] // primary of view 4 (4 mod 3)
	if r.Op() != 3 || r.LogView() != 0 {
		t.Fatalf("setup: %s", r.Summary())
	}
	sum2 := r.Checksum(2)
	c.step(1, c.craft(Header{Command: CommandStartViewChange, View: 4, Replica: 0}))
	if r.Status() != StatusViewChange || r.View() != 4 {
		t.Fatalf("not in view change 4: %s", r.Summary())
	}
	c.step(1, c.craft(Header{Command: CommandDoViewChange, View: 4, Replica: 2,
		LogView: 3, Op: 2, Context: sum2, Commit: 2}))
	if r.Status() != StatusNormal || !r.IsPrimary() {
		t.Fatalf("did not start view 4: %s", r.Summary())
	}
	if r.Op() != 2 {
		t.Fatalf("op = %d: the longer log of an older view won over log view 3", r.Op())
	}
	if r.Checksum(3) != 0 {
		t.Fatal("op 3 of the discarded suffix is still in the journal")
	}
}

// TestNoVoteWhileRecovering checks that a recovering replica neither
// starts nor joins a view change.
func TestNoVoteWhileRecovering(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	c.request(0, 5, 1, "x")
	c.slots[2][1][headerBytes] ^= 1
	cfg := testConfig(3, 2, 0)
	cfg.AppliedOp = c.hard[2].Commit
	r, err := Open(cfg, c.hard[2], c.slots[2])
	if err != nil || r.Status() != StatusRecovering {
		t.Fatalf("open: %v %s", err, r.Summary())
	}
	if first := r.Tick(); len(first.Messages) != 2 {
		t.Fatalf("the first batch must carry the Recovery broadcast, has %d messages", len(first.Messages))
	}
	ready, _ := r.Step(c.craft(Header{Command: CommandStartViewChange, View: 1, Replica: 1}))
	if r.Status() != StatusRecovering || len(ready.Messages) != 0 {
		t.Fatalf("recovering replica reacted to a view change: %s, %d messages", r.Summary(), len(ready.Messages))
	}
}

// TestRepairTakesOnlyTheWantedOp checks that a replica fills a gap only
// with the prepare its verified chain asks for next: an unasked prepare,
// even a genuine one, could come from a stale primary of an older view, and
// the prefix a DoViewChange names must not contain it.
func TestRepairTakesOnlyTheWantedOp(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	c.request(0, 5, 1, "x")
	c.down[2] = true
	for i := uint64(2); i <= 6; i++ {
		c.request(0, 5, i, "x")
	}
	c.down[2] = false
	primary, r := c.replicas[0], c.replicas[2]
	prepare := func(op uint64) []byte { return primary.journal.entry(op).message }
	c.step(2, c.craft(Header{Command: CommandCommit, View: 0, Replica: 0, Op: 6,
		Context: primary.Checksum(6), Commit: 5}))
	c.queue = nil
	if r.Op() != 6 || r.Complete() {
		t.Fatalf("head not adopted: %s", r.Summary())
	}
	c.step(2, prepare(4))
	if r.Checksum(4) != 0 {
		t.Fatal("a prepare the chain did not ask for was journaled")
	}
	for _, op := range []uint64{6, 5, 4, 3, 2} {
		c.step(2, prepare(op))
		if r.Checksum(op) != primary.Checksum(op) {
			t.Fatalf("wanted op %d not taken: %s", op, r.Summary())
		}
	}
	if !r.Complete() || r.CommitMin() != 5 {
		t.Fatalf("log not complete after repair: %s", r.Summary())
	}
}
