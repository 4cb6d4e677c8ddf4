package sim

import (
	"math/rand/v2"
	"strconv"

	"github.com/whippetio/whippet/vsr"
)

// Options configure one simulation. Options derived from a seed by
// OptionsFromSeed cover the fault space; scenario tests set them by hand.
type Options struct {
	Seed              uint64
	ClusterID         uint64
	Replicas          int
	Groups            int
	Clients           int
	RequestsPerClient int
	JournalSlots      int
	PipelineLen       int
	ClientsMax        int
	SnapshotPadding   int // filler bytes in each application snapshot
	StateChunkBytes   int
	ClientRetryTicks  uint64
	ThinkTicksMax     int // a client waits up to this long between requests
	Timeouts          vsr.Timeouts
	EagerCommit       bool
	Network           NetworkOptions

	// FaultTicks is how long faults are injected; then they heal and the
	// liveness bound HealTicksMax starts.
	FaultTicks   uint64
	HealTicksMax uint64

	// Per-tick fault probabilities while faults are on.
	CrashProbability   float64 // a running node crashes
	TornProbability    float64 // a crash tears the write in progress
	CorruptProbability float64 // a restart finds a corrupted sector
	WipeProbability    float64 // a restart finds its storage gone (data directory lost)
	// BootFresh starts every replica with Open on empty storage, so the
	// group forms by the fresh bootstrap rule; otherwise the cluster
	// starts formatted (vsr.New).
	BootFresh            bool
	RestartProbability   float64 // a crashed node restarts
	PartitionProbability float64 // the network splits
	HealProbability      float64 // a split heals
}

// OptionsFromSeed draws a whole configuration from the seed.
func OptionsFromSeed(seed uint64) Options {
	prng := rand.New(rand.NewPCG(seed, 0x5eed))
	replicas := []int{1, 2, 3, 3, 3, 4, 5, 5}[prng.IntN(8)]
	opts := Options{
		Seed:              seed,
		ClusterID:         0xc1,
		Replicas:          replicas,
		Groups:            1 + prng.IntN(3),
		Clients:           1 + prng.IntN(6),
		RequestsPerClient: 10 + prng.IntN(30),
		JournalSlots:      []int{16, 32, 64, 1024}[prng.IntN(4)],
		PipelineLen:       []int{2, 4, 8, 32}[prng.IntN(4)],
		ThinkTicksMax:     []int{0, 20, 100}[prng.IntN(3)],
		SnapshotPadding:   []int{0, 1000, 5000}[prng.IntN(3)],
		StateChunkBytes:   []int{64, 700, 1 << 18}[prng.IntN(3)],
		ClientsMax:        64,
		ClientRetryTicks:  uint64(40 + prng.IntN(80)),
		Network: NetworkOptions{
			DropProbability:      []float64{0, 0.01, 0.05, 0.2}[prng.IntN(4)],
			DuplicateProbability: []float64{0, 0.01, 0.05}[prng.IntN(3)],
			DelayTicksMax:        []int{1, 4, 8, 40}[prng.IntN(4)],
			OneWayProbability:    []float64{0, 0.3}[prng.IntN(2)],
		},
		Timeouts: vsr.Timeouts{
			PrepareTicks:    []uint32{5, 20}[prng.IntN(2)],
			CommitTicks:     []uint32{5, 20}[prng.IntN(2)],
			NormalTicks:     []uint32{40, 120}[prng.IntN(2)],
			ViewChangeTicks: []uint32{40, 120}[prng.IntN(2)],
			JitterTicks:     []uint32{1, 60}[prng.IntN(2)],
		},
		FaultTicks:           uint64(1000 + prng.IntN(3000)),
		HealTicksMax:         10000,
		CrashProbability:     []float64{0, 0.0005, 0.002}[prng.IntN(3)],
		TornProbability:      []float64{0, 0.3, 1}[prng.IntN(3)],
		CorruptProbability:   []float64{0, 0.2, 0.5}[prng.IntN(3)],
		RestartProbability:   0.01,
		PartitionProbability: []float64{0, 0.0005, 0.002}[prng.IntN(3)],
		HealProbability:      0.005,
	}
	// A backup must not give up on a primary whose heartbeat is merely
	// slow: the normal timeout covers a heartbeat interval and a delivery.
	slowest := 2*opts.Timeouts.CommitTicks + 2*uint32(opts.Network.DelayTicksMax)
	opts.Timeouts.NormalTicks = max(opts.Timeouts.NormalTicks, slowest)
	if opts.JournalSlots < 2*opts.PipelineLen {
		opts.JournalSlots = 2 * opts.PipelineLen
	}
	// A stream of its own, so that adding the draw moved no other.
	opts.EagerCommit = rand.New(rand.NewPCG(seed, 0xea9e)).IntN(2) == 1
	wipes := rand.New(rand.NewPCG(seed, 0x3199))
	opts.WipeProbability = []float64{0, 0.1, 0.3}[wipes.IntN(3)]
	opts.BootFresh = wipes.IntN(4) == 0
	return opts
}

// Result summarises one run. Failure is empty when every invariant held.
type Result struct {
	Seed           uint64
	Hash           uint64
	Ticks          uint64
	Commits        uint64 // ops committed, summed over groups
	Replies        int
	Crashes        int
	Restarts       int
	TornWrites     int
	Corruptions    int
	Wipes          int
	Partitions     int
	ViewChanges    uint32 // highest view reached, summed over groups
	StateTransfers int
	// CrashesBeforeApply counts crashes between a batch's send and apply
	// steps, after which the replica replays committed ops at restart.
	CrashesBeforeApply int
	PacketsSent        int
	PacketsDropped     int
	Duplicated         int
	Failure            string
}

// Replay is the command that reruns a seed.
func Replay(seed uint64) string {
	return "make vopr SEED=" + strconv.FormatUint(seed, 10)
}

// committedOp is what the oracle knows of one committed op.
type committedOp struct {
	checksum uint32
	client   uint64
	request  uint64
	appHash  uint64
	view     uint32 // view of the first replica that committed it
}

// oracle is the simulator's record of one group's committed log, built from
// what replicas commit; it is what the invariants compare against.
type oracle struct {
	ops       []committedOp
	requests  map[[2]uint64]uint64 // (client, request) → op; lookups only
	primaries map[uint32]int       // view → replica acting as its primary; lookups only
}

// Cluster is a simulated cluster. It is driven tick by tick and is not safe
// for concurrent use.
type Cluster struct {
	opts     Options
	net      *network
	faults   *rand.Rand
	workload *rand.Rand
	nodes    []node
	clients  []client
	oracles  []oracle
	now      uint64
	hash     uint64

	pendingReplies []pendingReply
	failure        string
	healed         bool
	booting        bool // RunUntilFormed: no crash is drawn

	// Trace, when set, sees every packet delivered (to is -1 for a client).
	Trace func(now uint64, to int, message []byte)

	crashes, restarts, tornWrites, corruptions, partitions, stateTransfers int
	crashesBeforeApply, wipes                                              int
	replies                                                                int
}

// NewCluster starts a cluster of fresh replicas.
func NewCluster(opts Options) *Cluster {
	c := &Cluster{
		opts:     opts,
		faults:   rand.New(rand.NewPCG(opts.Seed, 2)),
		workload: rand.New(rand.NewPCG(opts.Seed, 3)),
		hash:     0xcbf29ce484222325,
	}
	c.net = newNetwork(opts.Network, rand.New(rand.NewPCG(opts.Seed, 1)), opts.Replicas)
	c.oracles = make([]oracle, opts.Groups)
	for g := range c.oracles {
		c.oracles[g] = oracle{requests: map[[2]uint64]uint64{}, primaries: map[uint32]int{}}
	}
	c.nodes = make([]node, opts.Replicas)
	for i := range c.nodes {
		c.nodes[i] = node{index: i, hosts: make([]host, opts.Groups)}
		for g := range c.nodes[i].hosts {
			c.nodes[i].hosts[g].storage.slots = make([][]byte, opts.JournalSlots)
			c.nodes[i].hosts[g].app.padding = opts.SnapshotPadding
		}
		c.startNode(i)
	}
	c.newClients(rand.New(rand.NewPCG(opts.Seed, 4)))
	return c
}

// Failure returns the first invariant broken, or "".
func (c *Cluster) Failure() string { return c.failure }

// Now returns the current tick.
func (c *Cluster) Now() uint64 { return c.now }

func (c *Cluster) fail(what string) {
	if c.failure == "" {
		c.failure = "tick " + strconv.FormatUint(c.now, 10) + ": " + what
	}
}

func (c *Cluster) hashAdd(values ...uint64) {
	for _, v := range values {
		c.hash = mix(c.hash ^ v)
	}
}

// Tick advances the cluster by one tick: deliver due packets, tick every
// replica, run clients, then check every invariant.
func (c *Cluster) Tick() {
	c.now++
	c.net.now = c.now
	for _, p := range c.net.takeDue() {
		c.deliver(p)
	}
	for i := range c.nodes {
		for g := range c.nodes[i].hosts {
			if !c.nodes[i].up {
				break
			}
			ready := c.nodes[i].hosts[g].replica.Tick()
			c.execute(i, g, ready, crashNone)
		}
	}
	c.tickClients()
	c.check()
}

func (c *Cluster) deliver(p packet) {
	if c.Trace != nil {
		c.Trace(c.now, p.to, p.message)
	}
	if p.to < 0 {
		c.onReply(p.message)
		return
	}
	if !c.net.connected(p.from, p.to) || !c.nodes[p.to].up {
		return
	}
	var h vsr.Header
	if err := vsr.DecodeMessage(p.message, &h); err != nil {
		c.fail("network delivered a corrupt message: " + err.Error())
		return
	}
	if h.Group >= uint64(c.opts.Groups) {
		c.fail("message for an unknown group")
		return
	}
	ready, err := c.nodes[p.to].hosts[h.Group].replica.Step(p.message)
	if err != nil {
		c.fail("replica rejected a valid message: " + err.Error())
		return
	}
	c.execute(p.to, int(h.Group), ready, c.crashPoint(p.to))
}

// crashPoint draws whether the node crashes inside this batch, and where.
func (c *Cluster) crashPoint(nodeIndex int) crashPoint {
	if c.healed || c.booting || c.opts.CrashProbability == 0 || !c.crashAllowed(nodeIndex) {
		return crashNone
	}
	if c.faults.Float64() < c.opts.CrashProbability*4 {
		return crashBeforeApply
	}
	if c.opts.TornProbability == 0 || c.faults.Float64() >= c.opts.CrashProbability*c.opts.TornProbability*4 {
		return crashNone
	}
	// A lone replica commits in the batch that persists, so a torn write
	// there loses nothing acknowledged and needs no budget.
	if c.opts.Replicas > 1 && !c.damageAllowed() {
		return crashNone
	}
	return crashTorn
}

// crashAllowed reports whether a node may crash now: one with a group it
// has persisted nothing for comes back recovering that group (empty
// storage looks lost), which the fault budget must allow.
func (c *Cluster) crashAllowed(nodeIndex int) bool {
	n := &c.nodes[nodeIndex]
	return c.opts.Replicas == 1 || n.damaged || !n.holdsNothing() || c.damageAllowed()
}

// damageAllowed keeps journal damage within what the cluster tolerates:
// at most f = (n-1)/2 replicas may have lost acknowledged prepares at once.
func (c *Cluster) damageAllowed() bool {
	damaged := 0
	for i := range c.nodes {
		if c.nodes[i].damaged {
			damaged++
		}
	}
	return damaged+1 <= (c.opts.Replicas-1)/2
}

// Result returns the summary so far.
func (c *Cluster) Result() Result {
	res := Result{Seed: c.opts.Seed, Hash: c.hash, Ticks: c.now, Replies: c.replies,
		Crashes: c.crashes, Restarts: c.restarts, TornWrites: c.tornWrites,
		Corruptions: c.corruptions, Wipes: c.wipes, Partitions: c.partitions, StateTransfers: c.stateTransfers,
		CrashesBeforeApply: c.crashesBeforeApply,
		PacketsSent:        c.net.sent, PacketsDropped: c.net.dropped, Duplicated: c.net.duplicate,
		Failure: c.failure}
	for g := range c.oracles {
		res.Commits += uint64(len(c.oracles[g].ops))
		view := uint32(0)
		for i := range c.nodes {
			if c.nodes[i].up {
				view = max(view, c.nodes[i].hosts[g].replica.View())
			}
		}
		res.ViewChanges += view
	}
	return res
}

// Replica returns the replica of group on node, or nil while the node is
// down. Tests read it; they must not step it.
func (c *Cluster) Replica(nodeIndex, group int) *vsr.Replica {
	if !c.nodes[nodeIndex].up {
		return nil
	}
	return c.nodes[nodeIndex].hosts[group].replica
}

// Committed returns how many ops of group committed so far.
func (c *Cluster) Committed(group int) uint64 { return uint64(len(c.oracles[group].ops)) }
