package vsr

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// testCluster delivers messages between replicas of one group in FIFO order
// with no faults; it checks protocol behaviour step by step. vsr/sim covers
// faults.
type testCluster struct {
	t        *testing.T
	replicas []*Replica
	queue    []queued
	replies  []Header
	applied  [][]Entry
	down     []bool
	hard     []HardState
	slots    [][][]byte
}

type queued struct {
	to      int
	message []byte
}

type memoryApp struct{ applied uint64 }

func (a *memoryApp) Snapshot(dst []byte) []byte { return appendU64(dst, a.applied) }

func appendU64(dst []byte, v uint64) []byte {
	for i := range 8 {
		dst = append(dst, byte(v>>(8*i)))
	}
	return dst
}

func testConfig(n, i int, group uint64) Config {
	return Config{Cluster: 9, Group: group, ReplicaCount: n, Replica: i, JournalSlotCount: 64,
		PipelineLen: 8, ClientsMax: 16, Rand: rand.New(rand.NewPCG(uint64(i), group)),
		Snapshotter: &memoryApp{}}
}

func newTestCluster(t *testing.T, n int, group uint64) *testCluster {
	c := &testCluster{t: t, applied: make([][]Entry, n), down: make([]bool, n),
		hard: make([]HardState, n), slots: make([][][]byte, n)}
	for i := range n {
		r, err := New(testConfig(n, i, group))
		if err != nil {
			t.Fatal(err)
		}
		c.replicas = append(c.replicas, r)
		c.slots[i] = make([][]byte, 64)
	}
	return c
}

func (c *testCluster) execute(from int, ready *Ready) {
	for _, w := range ready.Writes {
		c.slots[from][w.Slot] = slices.Clone(w.Message)
	}
	if ready.HardStateChanged {
		c.hard[from] = ready.HardState
		c.hard[from].Clients = slices.Clone(ready.HardState.Clients)
	}
	for _, e := range ready.Messages {
		if e.Client != 0 {
			var h Header
			if err := DecodeMessage(e.Message, &h); err != nil {
				c.t.Fatal(err)
			}
			c.replies = append(c.replies, h)
			continue
		}
		c.queue = append(c.queue, queued{e.Replica, slices.Clone(e.Message)})
	}
	for _, e := range ready.Committed {
		e.Body = slices.Clone(e.Body)
		c.applied[from] = append(c.applied[from], e)
	}
}

func (c *testCluster) step(to int, message []byte) {
	if c.down[to] {
		return
	}
	ready, err := c.replicas[to].Step(message)
	if err != nil {
		c.t.Fatalf("replica %d rejected a message: %v", to, err)
	}
	c.execute(to, ready)
}

// deliver drains the queue, including messages sent while draining.
func (c *testCluster) deliver() {
	for steps := 0; len(c.queue) > 0; steps++ {
		if steps > 100000 {
			c.t.Fatal("messages never stop")
		}
		q := c.queue[0]
		c.queue = c.queue[1:]
		c.step(q.to, q.message)
	}
}

func (c *testCluster) tick(n int) {
	for range n {
		for i, r := range c.replicas {
			if !c.down[i] {
				c.execute(i, r.Tick())
			}
		}
		c.deliver()
	}
}

func (c *testCluster) request(to int, client, request uint64, body string) {
	c.step(to, EncodeRequest(nil, 9, c.replicas[0].cfg.Group, client, request, 1, []byte(body)))
	c.deliver()
}

// TestNormalOperationChain checks that a request travels the chain, commits
// on every replica in order and is answered once.
func TestNormalOperationChain(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	for i := uint64(1); i <= 5; i++ {
		c.request(0, 7, i, "hello")
	}
	if len(c.replies) != 5 {
		t.Fatalf("replies = %d, want 5", len(c.replies))
	}
	c.tick(25) // a Commit heartbeat carries the commit point to backups
	for i, r := range c.replicas {
		if r.CommitMin() != 5 || len(c.applied[i]) != 5 {
			t.Fatalf("replica %d commit=%d applied=%d", i, r.CommitMin(), len(c.applied[i]))
		}
		for k, e := range c.applied[i] {
			if e.Op != uint64(k+1) || string(e.Body) != "hello" || e.Request != uint64(k+1) {
				t.Fatalf("replica %d entry %d = %+v", i, k, e)
			}
		}
	}
}

// TestChainForwarding checks that the primary sends a prepare to its
// successor only, and a backup forwards it unless the next is the primary.
func TestChainForwarding(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	ready, err := c.replicas[0].Step(EncodeRequest(nil, 9, 0, 1, 1, 0, []byte("x")))
	if err != nil {
		t.Fatal(err)
	}
	if len(ready.Messages) != 1 || ready.Messages[0].Replica != 1 || len(ready.Writes) != 1 {
		t.Fatalf("primary batch: %d messages, %d writes", len(ready.Messages), len(ready.Writes))
	}
	prepare := slices.Clone(ready.Messages[0].Message)
	ready, _ = c.replicas[1].Step(prepare)
	targets := []int{}
	for _, m := range ready.Messages {
		targets = append(targets, m.Replica)
	}
	slices.Sort(targets)
	if !slices.Equal(targets, []int{0, 2}) {
		t.Fatalf("backup 1 sent to %v, want PrepareOK to 0 and forward to 2", targets)
	}
	ready, _ = c.replicas[2].Step(prepare)
	if len(ready.Messages) != 1 || ready.Messages[0].Replica != 0 {
		t.Fatalf("backup 2 must only acknowledge to the primary, sent %d", len(ready.Messages))
	}
}

// TestRetriedRequestAnsweredNotApplied checks the client table: a retry of
// a committed request gets the same reply and adds no op.
func TestRetriedRequestAnsweredNotApplied(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	c.request(0, 42, 1, "once")
	c.request(0, 42, 1, "once")
	c.request(0, 42, 1, "once")
	if c.replicas[0].Op() != 1 {
		t.Fatalf("op = %d after retries, want 1", c.replicas[0].Op())
	}
	if len(c.replies) != 3 || c.replies[1].Op != 1 || c.replies[2].Op != 1 {
		t.Fatalf("replies %+v", c.replies)
	}
	c.request(0, 42, 2, "twice")
	if c.replicas[0].Op() != 2 {
		t.Fatal("a new request number must prepare a new op")
	}
}

// TestGroupsSpreadPrimaries checks that view 0's primary of group g is
// replica g mod n, and that a replica rejects another group's messages.
func TestGroupsSpreadPrimaries(t *testing.T) {
	for g := uint64(0); g < 6; g++ {
		c := newTestCluster(t, 3, g)
		for i, r := range c.replicas {
			if r.IsPrimary() != (uint64(i) == g%3) {
				t.Fatalf("group %d replica %d primary=%v", g, i, r.IsPrimary())
			}
		}
		c.request(int(g%3), 1, 1, "x")
		if len(c.replies) != 1 {
			t.Fatalf("group %d: no reply", g)
		}
	}
	r, _ := New(testConfig(3, 0, 1))
	if _, err := r.Step(EncodeRequest(nil, 9, 2, 1, 1, 0, nil)); err != ErrGroup {
		t.Fatalf("err = %v, want ErrGroup", err)
	}
	if _, err := r.Step(EncodeRequest(nil, 8, 1, 1, 1, 0, nil)); err != ErrCluster {
		t.Fatalf("err = %v, want ErrCluster", err)
	}
}

// TestViewChangeKeepsCommitted stops the primary and checks that the
// backups elect view 1's primary, keep every committed op and go on.
func TestViewChangeKeepsCommitted(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	for i := uint64(1); i <= 3; i++ {
		c.request(0, 5, i, "v0")
	}
	c.down[0] = true
	c.tick(400)
	r1 := c.replicas[1]
	if r1.View() == 0 || r1.Status() != StatusNormal {
		t.Fatalf("no view change: %s", r1.Summary())
	}
	primary := r1.PrimaryIndex()
	c.request(primary, 5, 4, "v1")
	c.tick(30)
	for _, i := range []int{1, 2} {
		if got := c.replicas[i].CommitMin(); got != 4 {
			t.Fatalf("replica %d commit %d, want 4: %s", i, got, c.replicas[i].Summary())
		}
	}
}

// TestRestartIntactJournalRejoins restarts a backup from its persisted hard
// state and journal and checks it rejoins without recovery and catches up.
func TestRestartIntactJournalRejoins(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	for i := uint64(1); i <= 4; i++ {
		c.request(0, 5, i, "x")
	}
	c.tick(25)
	c.down[2] = true
	c.request(0, 5, 5, "y")
	cfg := testConfig(3, 2, 0)
	cfg.AppliedOp = c.hard[2].Commit
	r, err := Open(cfg, c.hard[2], c.slots[2])
	if err != nil {
		t.Fatal(err)
	}
	if r.Status() != StatusNormal || r.Op() != 4 {
		t.Fatalf("restarted: %s", r.Summary())
	}
	c.replicas[2] = r
	c.down[2] = false
	c.tick(60)
	if r.CommitMin() != 5 {
		t.Fatalf("restarted replica did not catch up: %s", r.Summary())
	}
}

// TestRestartDamagedJournalRecovers corrupts a journal slot and checks that
// the restarted replica neither votes nor acknowledges until recovery
// rebuilt its log from the others.
func TestRestartDamagedJournalRecovers(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	for i := uint64(1); i <= 4; i++ {
		c.request(0, 5, i, "x")
	}
	c.tick(25)
	c.request(0, 5, 5, "uncommitted at backups")
	c.down[1] = true
	for _, slot := range []int{3, 5} {
		c.slots[1][slot] = slices.Clone(c.slots[1][slot])
		c.slots[1][slot][headerBytes] ^= 0xff
	}
	cfg := testConfig(3, 1, 0)
	cfg.AppliedOp = c.hard[1].Commit
	r, err := Open(cfg, c.hard[1], c.slots[1])
	if err != nil {
		t.Fatal(err)
	}
	if r.Status() != StatusRecovering {
		t.Fatalf("damaged journal must recover: %s", r.Summary())
	}
	c.replicas[1] = r
	c.down[1] = false
	c.tick(100)
	if r.Status() != StatusNormal || r.CommitMin() != 5 {
		t.Fatalf("recovery did not finish: %s", r.Summary())
	}
	// Op 5 was above the durable commit point: repaired from a peer. Op 3
	// was applied already: its damaged slot is erased, not left to look
	// like new damage at the next restart.
	var h Header
	if err := DecodeMessage(c.slots[1][5], &h); err != nil || h.Op != 5 {
		t.Fatalf("damaged slot 5 not repaired: %v op=%d", err, h.Op)
	}
	if !empty(c.slots[1][3]) {
		t.Fatal("damaged slot 3 not erased")
	}
}

// TestRestartReplaysUnappliedCommits restarts a replica whose application
// lags its durable commit point and checks that the first batch hands the
// missing ops to the application again, in order, and nothing else.
func TestRestartReplaysUnappliedCommits(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	for i := uint64(1); i <= 5; i++ {
		c.request(0, 5, i, "x")
	}
	c.tick(25)
	if c.hard[2].Commit != 5 {
		t.Fatalf("setup: durable commit %d", c.hard[2].Commit)
	}
	cfg := testConfig(3, 2, 0)
	cfg.AppliedOp = 2
	r, err := Open(cfg, c.hard[2], c.slots[2])
	if err != nil {
		t.Fatal(err)
	}
	first := r.Tick()
	var ops []uint64
	for _, e := range first.Committed {
		ops = append(ops, e.Op)
	}
	if !slices.Equal(ops, []uint64{3, 4, 5}) || r.CommitMin() != 5 {
		t.Fatalf("replayed %v, commit %d", ops, r.CommitMin())
	}
	// Without op 3 in the journal the application (at op 1) cannot be
	// brought up locally: the replica recovers and repairs from its peers.
	cfg.AppliedOp = 1
	c.slots[2][3] = nil
	r, err = Open(cfg, c.hard[2], c.slots[2])
	if err != nil || r.Status() != StatusRecovering {
		t.Fatalf("open: %v, status %s", err, r.Status())
	}
	// It cannot serve state it cannot name by checksum.
	r.Tick()
	if ready, _ := r.Step(c.craft(Header{Command: CommandRequestState, Replica: 1})); len(ready.Messages) != 0 {
		t.Fatal("a replica with an unknown commit checksum served state")
	}
	c.replicas[2] = r
	c.applied[2] = nil
	c.tick(100)
	if r.Status() != StatusNormal || r.CommitMin() != 5 || len(c.applied[2]) != 4 {
		t.Fatalf("did not recover: %s, applied %d", r.Summary(), len(c.applied[2]))
	}
	if c.hard[2].Commit != 5 || c.hard[2].CommitChecksum != c.replicas[0].Checksum(5) {
		t.Fatalf("hard state after recovery: %+v", c.hard[2])
	}
	cfg.AppliedOp = 6
	if _, err := Open(cfg, c.hard[2], c.slots[2]); err != ErrConfig {
		t.Fatalf("err = %v, want ErrConfig for an application ahead of the commit point", err)
	}
}

// TestSteadyPathAllocs checks that a request's whole journey through the
// chain (primary Step(Request), backups Step(Prepare), primary
// Step(PrepareOK)) allocates nothing once the journal buffers are warm.
func TestSteadyPathAllocs(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	for i := uint64(1); i <= 200; i++ {
		c.request(0, 1, i, "0123456789abcdef")
	}
	primary, b1, b2 := c.replicas[0], c.replicas[1], c.replicas[2]
	request := uint64(200)
	message := make([]byte, 0, 256)
	body := []byte("0123456789abcdef")
	allocs := testing.AllocsPerRun(200, func() {
		request++
		message = EncodeRequest(message, 9, 0, 1, request, 1, body)
		ready, _ := primary.Step(message)
		prepare := ready.Messages[0].Message
		ready, _ = b1.Step(prepare)
		var ok1, forward []byte
		for _, m := range ready.Messages {
			if m.Replica == 0 {
				ok1 = m.Message
			} else {
				forward = m.Message
			}
		}
		ready, _ = b2.Step(forward)
		ok2 := ready.Messages[0].Message
		primary.Step(ok1)
		primary.Step(ok2)
	})
	if allocs != 0 {
		t.Fatalf("steady path allocates %.1f times per request", allocs)
	}
	if primary.CommitMin() != request {
		t.Fatalf("commit = %d, want %d", primary.CommitMin(), request)
	}
}

func BenchmarkSteadyPath(b *testing.B) {
	c := newTestCluster(&testing.T{}, 3, 0)
	for i := uint64(1); i <= 100; i++ {
		c.request(0, 1, i, "warm")
	}
	primary, b1, b2 := c.replicas[0], c.replicas[1], c.replicas[2]
	request := uint64(100)
	message := make([]byte, 0, 4096)
	body := make([]byte, 1024)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		request++
		message = EncodeRequest(message, 9, 0, 1, request, 1, body)
		ready, _ := primary.Step(message)
		ready, _ = b1.Step(ready.Messages[0].Message)
		ok1, forward := ready.Messages[0].Message, ready.Messages[1].Message
		if ready.Messages[0].Replica != 0 {
			ok1, forward = forward, ok1
		}
		ready, _ = b2.Step(forward)
		ok2 := ready.Messages[0].Message
		primary.Step(ok1)
		primary.Step(ok2)
	}
}

// TestLoneReplicaDropsTornTail: a one-replica group commits in the batch
// that persists, so a torn slot above the durable commit point was never
// acknowledged; Open drops it and serves again at once.
func TestLoneReplicaDropsTornTail(t *testing.T) {
	c := newTestCluster(t, 1, 0)
	c.request(0, 5, 1, "x")
	c.request(0, 5, 2, "y")
	c.slots[0][3] = append(EncodeRequest(nil, 9, 0, 5, 3, 0, []byte("half")), 0xff)[:100]
	cfg := testConfig(1, 0, 0)
	cfg.AppliedOp = c.hard[0].Commit
	r, err := Open(cfg, c.hard[0], c.slots[0])
	if err != nil || r.Status() != StatusNormal || r.Op() != 2 {
		t.Fatalf("open: %v %s", err, r.Summary())
	}
	first := r.Tick()
	if len(first.Writes) != 1 || first.Writes[0].Slot != 3 || len(first.Writes[0].Message) != 0 {
		t.Fatalf("torn slot not erased: %+v", first.Writes)
	}
	c.replicas[0] = r
	c.request(0, 5, 3, "z")
	if r.CommitMin() != 3 {
		t.Fatalf("lone replica did not serve after restart: %s", r.Summary())
	}
	c.slots[0][2] = nil
	cfg.AppliedOp = 1
	if _, err := Open(cfg, c.hard[0], c.slots[0]); err != ErrUnrecoverable {
		t.Fatalf("err = %v, want ErrUnrecoverable", err)
	}
}

// TestEagerCommit checks Config.EagerCommit: once a request commits, the
// primary tells the backups at once, so they apply it without a single
// tick; without it they wait for the heartbeat.
func TestEagerCommit(t *testing.T) {
	for _, eager := range []bool{false, true} {
		c := newTestCluster(t, 3, 0)
		for i := range c.replicas {
			cfg := testConfig(3, i, 0)
			cfg.EagerCommit = eager
			r, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c.replicas[i] = r
		}
		c.request(0, 7, 1, "now")
		if c.replicas[0].CommitMin() != 1 {
			t.Fatalf("eager=%v: the primary did not commit", eager)
		}
		for i := 1; i < 3; i++ {
			applied := len(c.applied[i]) == 1
			if applied != eager {
				t.Fatalf("eager=%v: backup %d applied=%v before any tick", eager, i, applied)
			}
		}
	}
}

// TestForwardOwnsItsBytes: the prepare a backup forwards down the chain is
// the journal's copy, so a caller that reuses its receive buffer after Step
// (before it sends the batch) still sends the prepare intact.
func TestForwardOwnsItsBytes(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	ready, err := c.replicas[0].Step(EncodeRequest(nil, 9, 0, 1, 1, 0, []byte("payload")))
	if err != nil {
		t.Fatal(err)
	}
	received := slices.Clone(ready.Messages[0].Message)
	want := slices.Clone(received)
	ready, err = c.replicas[1].Step(received)
	if err != nil {
		t.Fatal(err)
	}
	clear(received) // the caller's next receive lands in the same buffer
	forwarded := 0
	for _, m := range ready.Messages {
		if m.Replica == 2 {
			forwarded++
			if !slices.Equal(m.Message, want) {
				t.Fatal("the forwarded prepare changed with the caller's buffer")
			}
		}
	}
	if forwarded != 1 {
		t.Fatalf("forwarded %d prepares to replica 2, want 1", forwarded)
	}
}
