package shard

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/vsr"
)

// The group host runs the vsr replication groups of one node. Every node is
// a replica of every group; a group lives on one shard (the metadata group,
// 0, on shard 0; a partition's group on the partition's owner), which
// executes its replica's Ready batches in vsr's order: persist, then send,
// then restore and apply. See cluster_host_group.go for one group and
// cluster_host_request.go for the requests this node proposes.

// ErrClusterNotAccepted: the group could not take a request (no primary
// known, a view change under way, or too many requests waiting); nothing
// was proposed, so the client may retry on any replica.
var ErrClusterNotAccepted = errors.New("shard: request not accepted by the replication group")

// ErrClusterStopped: the group closed before this node's request applied
// here; it may still commit.
var ErrClusterStopped = errors.New("shard: replication group stopped")

// ErrClusterOutcomeUnknown: this node installed a peer's state in place of
// applying the log, so whether (and where) its request committed is not
// known here.
var ErrClusterOutcomeUnknown = errors.New("shard: request outcome unknown after a state transfer")

// ClusterTransport carries vsr messages between nodes (ClusterNet).
type ClusterTransport interface {
	// Send queues message for node to, from a shard thread; it copies and
	// never blocks; false when the message was dropped.
	Send(sh *Shard, to int, message []byte) bool
	// Install chains the transport into the runtime's options.
	Install(options Options) Options
}

// ClusterOptions configure the group host of one node.
type ClusterOptions struct {
	// Cluster is the vsr cluster id (nonzero, the same on every node).
	Cluster uint64
	// Replica is this node's index in the roster of ReplicaCount nodes.
	Replica      int
	ReplicaCount int
	// Tick is how often every group's replica ticks; HeartbeatTimeout is
	// how long a silent primary is trusted. The vsr timeouts derive from
	// the two (clusterTimeouts).
	Tick             time.Duration
	HeartbeatTimeout time.Duration
	// Directory holds one directory per group (its journal).
	Directory string
	Logger    *slog.Logger

	// openJournal opens a group's durable state; nil takes the production
	// journal (engine/replicalog).
	openJournal groupJournalOpener
}

// Cluster is the group host of one node: one ClusterShard per shard.
type Cluster struct {
	options   ClusterOptions
	logger    *slog.Logger
	transport ClusterTransport
	timeouts  vsr.Timeouts
	// requestLifetime bounds how long this node proposes one request.
	requestLifetime time.Duration
	seed            uint64 // vsr's per-start randomness
	// incarnation tells this start's clients from earlier starts', whose
	// request numbers the groups' client tables still hold.
	incarnation uint64
	shards      []*ClusterShard
	data        *Data // the groups' storage and the partitions they replicate

	metadataPrimary atomic.Int64 // -1: none known (group 0 not normal)

	// intact: this node cannot have held a group its metadata creates now.
	// True when the metadata group's journal was found at start, or, when
	// it started empty (a new or wiped node), once its replica is normal
	// and applied the head it had then (caughtUpOp): every command this
	// node may have applied before it lost its state is below that head.
	// A group created while intact is new here (vsr.New); before, it may
	// be one this node held, so it recovers (vsr.Open of empty state).
	intact     atomic.Bool
	caughtUpOp uint64 // 0: not yet normal; shard 0 only
}

// ClusterShard is one shard's part of the host: the groups it hosts.
type ClusterShard struct {
	cluster *Cluster
	shard   *Shard
	groups  map[uint64]*ClusterGroup
	client  uint64 // this shard's vsr client id for its requests
	ticks   uint64 // cluster ticks so far
	// tickedAt is when the last tick ran; thawedAt when a tick found the
	// shard had not run for longer than a request's lifetime (the process
	// was stopped or stalled): see stalled.
	tickedAt time.Time
	thawedAt time.Time

	// deferred are messages the transport delivered, taken on the next
	// timer turn (drainFn) rather than inside its callback.
	deferred      []clusterInbound
	deferredSpare []clusterInbound
	deferredBytes int
	deferredArmed bool
	drainFn       func(time.Time)
	// dropped counts messages dropped on arrival: deferred list full, or a
	// header naming another replica than the authenticated sender.
	deferredDropped uint64
	strangerDropped uint64
}

// Limits of the messages a shard holds between the transport's callback
// and its next timer turn: beyond them a message is dropped (vsr resends).
// A turn normally drains them all; the bound keeps a peer that sends
// faster than the shard runs from growing the list without end.
const (
	clusterDeferredMessagesMax = 4096
	clusterDeferredBytesMax    = 256 << 20
)

// clusterInbound is a message for a group on another shard of this node.
type clusterInbound struct {
	from    int
	message []byte
}

// NewCluster validates options and returns a host to install in the
// runtime (Install) once its transport is set (SetTransport).
func NewCluster(options ClusterOptions) (*Cluster, error) {
	if options.Cluster == 0 {
		return nil, fmt.Errorf("shard: cluster id is zero")
	}
	if options.ReplicaCount < 1 || options.ReplicaCount > 16 || options.Replica < 0 || options.Replica >= options.ReplicaCount {
		return nil, fmt.Errorf("shard: replica %d of %d is outside the roster", options.Replica, options.ReplicaCount)
	}
	if options.Directory == "" {
		return nil, fmt.Errorf("shard: cluster directory is empty")
	}
	if options.Tick == 0 {
		options.Tick = clusterTickDefault
	}
	if options.HeartbeatTimeout == 0 {
		options.HeartbeatTimeout = clusterHeartbeatDefault
	}
	if options.Tick < 0 || options.HeartbeatTimeout < clusterHeartbeatTicksMin*options.Tick {
		return nil, fmt.Errorf("shard: cluster heartbeat timeout %v must span %d ticks of %v",
			options.HeartbeatTimeout, clusterHeartbeatTicksMin, options.Tick)
	}
	if options.Logger == nil {
		options.Logger = slog.Default()
	}
	if err := os.MkdirAll(options.Directory, 0o755); err != nil {
		return nil, fmt.Errorf("shard: cluster directory: %w", err)
	}
	if options.openJournal == nil {
		options.openJournal = openReplicaLog
	}
	var random [16]byte
	if _, err := rand.Read(random[:]); err != nil {
		return nil, fmt.Errorf("shard: cluster seed: %w", err)
	}
	c := &Cluster{options: options, logger: options.Logger, shards: make([]*ClusterShard, shardCountMax),
		timeouts:        clusterTimeouts(options.HeartbeatTimeout, options.Tick),
		requestLifetime: max(clusterRequestLifetimeHeartbeats*options.HeartbeatTimeout, clusterRequestLifetimeMin),
		seed:            binary.LittleEndian.Uint64(random[:8]),
		// 48 bits, never zero: the client id keeps 16 bits for node and shard.
		incarnation: binary.LittleEndian.Uint64(random[8:])&(1<<48-1) | 1,
	}
	c.metadataPrimary.Store(-1)
	return c, nil
}

// clusterTimeouts derives vsr's timeouts from the heartbeat timeout: a
// backup gives up on a silent primary after half of it (plus jitter), so a
// failover completes within about one heartbeat timeout; the primary
// heartbeats ten times per timeout.
func clusterTimeouts(heartbeat, tick time.Duration) vsr.Timeouts {
	ticks := uint32(heartbeat / tick)
	invariant.Assert(ticks >= clusterHeartbeatTicksMin, "a heartbeat spans enough ticks")
	return vsr.Timeouts{
		PrepareTicks:          max(ticks/10, 2),
		CommitTicks:           max(ticks/10, 2),
		NormalTicks:           ticks / 2,
		ViewChangeTicks:       ticks / 2,
		ViewChangeResendTicks: max(ticks/20, 1),
		RepairTicks:           max(ticks/20, 1),
		RecoveryTicks:         max(ticks/5, 2),
		JitterTicks:           max(ticks/10, 1),
	}
}

// SetTransport sets how messages reach other nodes; call it before the
// runtime starts.
func (c *Cluster) SetTransport(transport ClusterTransport) { c.transport = transport }

// Options returns the options the host runs with (defaults filled).
func (c *Cluster) Options() ClusterOptions { return c.options }

// Install chains the host (and its transport) into options, outside the
// data plane data (whose storage the journals use): OnStart sets up the
// shard's part before the inner OnStart runs, OnMessage takes the host's
// messages, OnStop closes the shard's groups before the inner OnStop.
func (c *Cluster) Install(options Options, data *Data) Options {
	invariant.Assert(c.transport != nil, "a cluster has a transport before it starts")
	c.data = data
	options = c.transport.Install(options)
	onStart, onMessage, onStop := options.OnStart, options.OnMessage, options.OnStop
	options.OnStart = func(sh *Shard) {
		c.onStart(sh)
		if onStart != nil {
			onStart(sh)
		}
	}
	options.OnMessage = func(sh *Shard, from int, message Message) {
		if message.Kind > clusterMessageBase && message.Kind <= clusterMessageLast {
			inbound := message.Data.(*clusterInbound)
			c.shards[sh.ID()].deliver(inbound.from, inbound.message)
			return
		}
		if onMessage != nil {
			onMessage(sh, from, message)
		}
	}
	options.OnStop = func(sh *Shard) {
		c.onStop(sh) // before the partitions close: no apply outlives them
		if onStop != nil {
			onStop(sh)
		}
	}
	return options
}

// Local returns sh's part of the host; call it on sh's thread after the
// host's OnStart ran there.
func (c *Cluster) Local(sh *Shard) *ClusterShard {
	cs := c.shards[sh.ID()]
	invariant.Assert(cs != nil && cs.shard == sh, "the cluster started on the shard")
	return cs
}

// MetadataPrimary returns the node this node believes is the primary of
// the metadata group, and false during a view change; any thread.
func (c *Cluster) MetadataPrimary() (int, bool) {
	primary := c.metadataPrimary.Load()
	return int(primary), primary >= 0
}

func (c *Cluster) onStart(sh *Shard) {
	cs := &ClusterShard{cluster: c, shard: sh, groups: make(map[uint64]*ClusterGroup),
		client: uint64(c.options.Replica+1)<<56 | uint64(sh.ID())<<48 | c.incarnation}
	cs.drainFn = func(time.Time) { cs.drain() }
	c.shards[sh.ID()] = cs
	if _, err := sh.Every(c.options.Tick, func(time.Time) { cs.tick() }); err != nil {
		sh.fail(err)
	}
}

// onStop closes the shard's groups, driving the shard's completions until
// their journals closed.
func (c *Cluster) onStop(sh *Shard) {
	cs := c.shards[sh.ID()]
	if cs == nil {
		return
	}
	left := 0
	for _, g := range cs.groups {
		left++
		g.Close(func(err error) {
			left--
			if err != nil {
				c.logger.Error("shard: close a replication group", "group", g.id, "err", err.Error())
			}
		})
	}
	if left > 0 && !c.data.Local(sh).Drive(func() bool { return left == 0 }, dataStopTimeout) {
		c.logger.Error("shard: replication groups not closed at stop", "shard", sh.id, "left", left)
		for _, g := range cs.groups {
			c.logger.Error("shard: replication group still open", "group", g.id, "state", g.describe())
		}
	}
}

// Deliver takes a message ClusterNet received from node from, on any shard
// thread: it goes to its group's shard. The message is the receiver's
// (ClusterNetOptions.Deliver), so the host keeps it without a copy.
func (c *Cluster) Deliver(sh *Shard, from int, message []byte) {
	if len(message) < vsr.HeaderBytes || from < 0 || from >= c.options.ReplicaCount {
		return
	}
	group := binary.LittleEndian.Uint64(message[16:24])
	target := groupShard(group, len(sh.runtime.shards))
	if target == sh.ID() {
		// Stepped on the shard's next timer turn, not inside the
		// transport's callback.
		c.shards[target].deferDeliver(from, message)
		return
	}
	inbound := &clusterInbound{from: from, message: message}
	_ = sh.Send(target, Message{Kind: clusterMessageDeliver, Data: inbound}) // a full queue drops: vsr retries
}

// groupShard is the shard that hosts a group: the metadata group on shard
// 0, a partition's group on the partition's owner.
func groupShard(group uint64, shardCount int) int {
	if group&clusterPartitionGroupBit == 0 || shardCount == 1 {
		return 0
	}
	return int((murmur3Uint64(group&^clusterPartitionGroupBit) >> 16) % uint32(shardCount))
}

// deferDeliver keeps message (the receiver's) for the next timer turn.
func (cs *ClusterShard) deferDeliver(from int, message []byte) {
	if len(cs.deferred) >= clusterDeferredMessagesMax || cs.deferredBytes+len(message) > clusterDeferredBytesMax {
		cs.deferredDropped++
		return
	}
	cs.deferredBytes += len(message)
	cs.deferred = append(cs.deferred, clusterInbound{from: from, message: message})
	if cs.deferredArmed {
		return
	}
	if _, err := cs.shard.After(0, cs.drainFn); err != nil {
		cs.shard.fail(err)
		return
	}
	cs.deferredArmed = true
}

// drain delivers the deferred messages in arrival order.
func (cs *ClusterShard) drain() {
	cs.deferredArmed = false
	batch := cs.deferred
	cs.deferred, cs.deferredBytes = cs.deferredSpare[:0], 0
	for i := range batch {
		cs.deliver(batch[i].from, batch[i].message)
		batch[i] = clusterInbound{}
	}
	cs.deferredSpare = batch[:0]
}

// deliver hands a message (the host's to keep) to its group on this shard.
func (cs *ClusterShard) deliver(from int, message []byte) {
	var h vsr.Header
	if err := vsr.DecodeMessage(message, &h); err != nil || h.Cluster != cs.cluster.options.Cluster {
		return
	}
	if !senderMatches(&h, from) {
		cs.strangerDropped++
		cs.cluster.logger.Debug("shard: a message names another replica than its sender", "from", from,
			"replica", h.Replica, "command", h.Command)
		return
	}
	g := cs.groups[h.Group]
	if g == nil || g.state != vsrGroupOpen {
		return // not (yet) here: the sender retries
	}
	if h.Command == vsr.CommandReply {
		g.onReply(&h)
		return
	}
	g.receive(message)
}

// senderMatches reports whether a message's header names the replica it
// came from (the link's authenticated peer). A request (a client's,
// forwarded), a reply and a prepare (relayed along the chain, or a stored
// one answering a repair) carry another replica's header by design.
func senderMatches(h *vsr.Header, from int) bool {
	switch h.Command {
	case vsr.CommandRequest, vsr.CommandReply, vsr.CommandPrepare:
		return true
	}
	return int(h.Replica) == from
}

// tick runs every group's replica tick.
func (cs *ClusterShard) tick() {
	cs.ticks++
	now := time.Now()
	if lifetime := cs.cluster.requestLifetime; !cs.tickedAt.IsZero() && now.Sub(cs.tickedAt) > lifetime {
		cs.thawedAt = now
		cs.cluster.logger.Warn("shard: this node did not run for longer than a request's lifetime; "+
			"refusing new requests for one lifetime", "shard", cs.shard.ID(), "stalled", now.Sub(cs.tickedAt).String())
	}
	cs.tickedAt = now
	for _, g := range cs.groups {
		g.tick()
	}
}

// stalled reports whether requests arriving now may have waited out a
// stall of this node: the shard has not ticked for longer than a request's
// lifetime (stopped, SIGSTOP, and not yet noticed), or a tick noticed that
// less than a lifetime ago. What the node reads from its sockets then was
// sent during the stall, by clients that have given up on it (their
// connections time out, the outcome is unknown to them) and moved on:
// proposed now, it would land long after, out of order with what those
// clients sent since. Such a request is refused (nothing proposed); a
// client still waiting retries.
func (cs *ClusterShard) stalled(now time.Time) bool {
	lifetime := cs.cluster.requestLifetime
	if cs.tickedAt.IsZero() {
		return false
	}
	return now.Sub(cs.tickedAt) > lifetime || !cs.thawedAt.IsZero() && now.Sub(cs.thawedAt) < lifetime
}

// Shard returns the shard this part runs on.
func (cs *ClusterShard) Shard() *Shard { return cs.shard }

// Group returns the open group with this id, or nil.
func (cs *ClusterShard) Group(id uint64) *ClusterGroup {
	if g := cs.groups[id]; g != nil && g.state == vsrGroupOpen {
		return g
	}
	return nil
}

// send passes a message to node to through the transport.
func (cs *ClusterShard) send(to int, message []byte) bool {
	invariant.Assert(to != cs.cluster.options.Replica, "a node never sends to itself")
	return cs.cluster.transport.Send(cs.shard, to, message)
}
