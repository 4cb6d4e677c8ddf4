package shard

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/vsr"
)

// ClusterApplication is the state machine a group's committed log drives:
// the metadata store for group 0, a partition for a partition group. Every
// method runs on the group's shard; the group steps nothing while a call
// has not called its done.
type ClusterApplication interface {
	// Recover is called once when the group opens, with the application
	// record last persisted (ClusterGroup.Record; nil when none), and
	// returns the op the application's durable state reflects (vsr's
	// Config.AppliedOp).
	Recover(g *ClusterGroup, record []byte) (appliedOp uint64, err error)
	// Apply applies committed entries in order and then calls done,
	// possibly before it returns. The entries and their bodies stay valid
	// until done. ClusterGroup.Claim finds the requests this node made.
	Apply(g *ClusterGroup, entries []vsr.Entry, done func())
	// Snapshot appends the state as of the last entry applied to dst
	// (vsr.Snapshotter); state transfer serves it to lagging replicas.
	Snapshot(dst []byte) []byte
	// Restore replaces the state with snapshot, taken at op, then calls
	// done; an error stops the runtime (the state is unknown).
	Restore(g *ClusterGroup, snapshot []byte, op uint64, done func(error))
}

// clusterSnapshotGate is implemented by an application whose applies
// finish after Apply's done (a partition's appends are still being
// written): a snapshot must wait for them.
type clusterSnapshotGate interface {
	// SnapshotReady reports whether Snapshot now reflects every entry
	// applied. When it does not, the group steps nothing more until the
	// application calls ClusterGroup.Quiesced.
	SnapshotReady() bool
}

// GroupConfig opens one group on its shard.
type GroupConfig struct {
	Group       uint64
	Application ClusterApplication
	// Sync makes every journal write durable (fdatasync) before the group
	// acknowledges or votes: the metadata group and partitions of
	// persisted topics. Without it a write completes when the device took
	// it (replicated: a quorum holds it in memory); a change of view is
	// synced either way.
	Sync bool
	// Batch lets one entry carry several requests of this node: the
	// application then sees several entries with the same op.
	Batch bool
	// Created: the group is being created by a committed command this
	// node applies now. With the node's metadata state intact, an empty
	// journal then means the group is new here and it starts at once;
	// otherwise an empty journal may be lost state and the replica
	// recovers first (vsr doc.go, Fresh replicas).
	Created bool
}

// ClusterGroup is one group on its shard: a vsr replica, its journal, the
// inbox of messages that arrived while a batch was executing, and this
// node's requests.
type ClusterGroup struct {
	shard   *ClusterShard
	id      uint64
	app     ClusterApplication
	sync    bool
	state   vsrGroupState
	replica *vsr.Replica
	journal groupJournal
	// directory holds the journal; destroy removes it once closed.
	directory string
	destroy   bool
	created   bool // GroupConfig.Created

	busy bool // a Ready is executing: no Step or Tick
	// held is a RequestState waiting for the application's applies to
	// finish before the snapshot it asks for is taken; nothing is stepped
	// meanwhile.
	held       []byte
	snapshotOp uint64 // the commit point of the last snapshot taken
	draining   bool   // idle's loop is running
	tickOwed   bool   // a tick came while busy
	ready      *vsr.Ready

	inbox      [][]byte // oldest at inboxHead
	inboxHead  int
	inboxBytes int
	dropped    uint64 // messages dropped for a full inbox

	persist     groupPersist
	hardState   []byte
	viewDurable [3]uint32 // view, log view, vote view last persisted
	record      []byte    // application record waiting for the next persist
	recordDirty bool
	writing     []byte // the record being persisted
	closeDone   []func(error)

	persistedFn func(error)
	restoredFn  func(error)
	appliedFn   func()

	requests clusterRequests
}

type vsrGroupState uint8

const (
	vsrGroupOpening vsrGroupState = iota + 1
	vsrGroupOpen
	vsrGroupClosing
	vsrGroupClosed
)

// Open opens (or creates) a group hosted on this shard and calls done with
// it once its journal is loaded and its replica restarted. The caller must
// be the group's shard (groupShard).
func (cs *ClusterShard) Open(config GroupConfig, done func(*ClusterGroup, error)) {
	invariant.Assert(groupShard(config.Group, len(cs.shard.runtime.shards)) == cs.shard.id, "a group opens on its shard")
	invariant.Assert(config.Application != nil, "a group has an application")
	if existing := cs.groups[config.Group]; existing != nil {
		if existing.state == vsrGroupClosing {
			// Deleted and created again: open once the old one is gone.
			existing.closeDone = append(existing.closeDone, func(error) { cs.Open(config, done) })
			return
		}
		done(nil, fmt.Errorf("shard: replication group %x is already open", config.Group))
		return
	}
	if len(cs.groups) >= clusterGroupsPerShardMax {
		done(nil, fmt.Errorf("shard: %d replication groups on one shard", len(cs.groups)))
		return
	}
	g := &ClusterGroup{shard: cs, id: config.Group, app: config.Application, sync: config.Sync, state: vsrGroupOpening,
		created: config.Created}
	g.persistedFn = g.persisted
	g.restoredFn = g.restored
	g.appliedFn = g.applied
	g.requests.init(g, config.Batch)
	cs.groups[g.id] = g
	c := cs.cluster
	g.directory = filepath.Join(c.options.Directory, strconv.FormatUint(g.id, 16))
	c.options.openJournal(cs.shard, c.data.Local(cs.shard).Storage(), g.directory, clusterJournalSlotCount,
		func(journal groupJournal, loaded groupLoaded, err error) {
			if err == nil && g.state == vsrGroupClosing {
				g.journal = journal // closed while it opened
				g.closeJournal()
				done(nil, ErrClusterStopped)
				return
			}
			if err == nil {
				g.journal = journal
				err = g.start(loaded)
			}
			if err != nil {
				delete(cs.groups, g.id)
				g.state = vsrGroupClosed
				done(nil, fmt.Errorf("shard: open replication group %x: %w", g.id, err))
				return
			}
			done(g, nil)
			g.kick()
		})
}

// start restarts the replica from the loaded journal.
func (g *ClusterGroup) start(loaded groupLoaded) error {
	applied, err := g.app.Recover(g, loaded.app)
	if err != nil {
		return err
	}
	var hard vsr.HardState
	if len(loaded.hardState) > 0 {
		if hard, err = vsr.DecodeHardState(loaded.hardState); err != nil {
			return err
		}
	}
	c := g.shard.cluster
	config := vsr.Config{Cluster: c.options.Cluster, Group: g.id, ReplicaCount: c.options.ReplicaCount,
		Replica: c.options.Replica, JournalSlotCount: clusterJournalSlotCount, PipelineLen: clusterPipelineLen,
		ClientsMax: clusterClientsMax, Rand: rand.New(rand.NewPCG(c.seed, g.id)), Snapshotter: g,
		Timeouts: c.timeouts, EagerCommit: true, AppliedOp: applied}
	fresh := loaded.empty()
	if g.id == MetaGroup {
		c.intact.Store(!fresh)
	}
	var replica *vsr.Replica
	if fresh && g.created && c.intact.Load() {
		replica, err = vsr.New(config)
	} else {
		replica, err = vsr.Open(config, hard, loaded.slots)
	}
	if err != nil {
		return err
	}
	if fresh {
		c.logger.Info("shard: replication group starts on an empty journal", "group", g.id,
			"status", replica.Status().String())
	}
	g.replica = replica
	g.viewDurable = [3]uint32{hard.View, hard.LogView, hard.VoteView}
	g.state = vsrGroupOpen
	g.tickOwed = true // Open's own decisions come out of the first tick
	return nil
}

// ID is the group id.
func (g *ClusterGroup) ID() uint64 { return g.id }

// Shard returns the host shard of the group.
func (g *ClusterGroup) Shard() *ClusterShard { return g.shard }

// Replica exposes the group's replica for status (IsPrimary, View...);
// the caller must not Step or Tick it.
func (g *ClusterGroup) Replica() *vsr.Replica { return g.replica }

// Record makes record (copied) the application record persisted with the
// group's next journal write.
func (g *ClusterGroup) Record(record []byte) {
	g.record = append(g.record[:0], record...)
	g.recordDirty = true
	g.kick()
}

// receive takes a message for the replica (its to keep): stepped at once
// when the group is idle, else held in the bounded inbox.
func (g *ClusterGroup) receive(message []byte) {
	if !g.busy && g.held == nil && g.inboxHead == len(g.inbox) && !g.draining {
		g.step(message)
		g.kick()
		return
	}
	held := len(g.inbox) - g.inboxHead
	if held > 0 && (held >= clusterInboxMessagesMax || g.inboxBytes+len(message) > clusterInboxBytesMax) {
		g.dropped++
		return
	}
	g.inbox = append(g.inbox, message)
	g.inboxBytes += len(message)
}

// tick runs the replica's tick, or owes it until the batch under way is
// done.
func (g *ClusterGroup) tick() {
	if g.state != vsrGroupOpen {
		return
	}
	g.requests.tick(g)
	g.tickOwed = true
	g.kick()
}

// kick runs what waits (an owed tick, held messages, this node's queued
// requests) unless a batch is executing; each completion kicks again.
func (g *ClusterGroup) kick() {
	if g.busy || g.draining || g.held != nil || g.state != vsrGroupOpen {
		return
	}
	g.draining = true
	for !g.busy && g.held == nil && g.state == vsrGroupOpen && g.next() {
	}
	g.draining = false
}

// next starts one piece of waiting work; false when none waits.
func (g *ClusterGroup) next() bool {
	switch {
	case g.tickOwed:
		g.tickOwed = false
		g.execute(g.replica.Tick())
	case g.inboxHead < len(g.inbox):
		message := g.inbox[g.inboxHead]
		g.inbox[g.inboxHead] = nil
		g.inboxHead++
		g.inboxBytes -= len(message)
		if g.inboxHead == len(g.inbox) {
			g.inbox, g.inboxHead = g.inbox[:0], 0
		}
		g.step(message)
	case g.requests.proposable(g):
		g.step(g.requests.next(g))
	case g.recordDirty:
		g.execute(g.replica.Tick()) // a tick's batch carries the record
	default:
		return false
	}
	return true
}

func (g *ClusterGroup) step(message []byte) {
	if g.holdForSnapshot(message) {
		return
	}
	ready, err := g.replica.Step(message)
	if err != nil {
		return // not for this replica: dropped
	}
	g.execute(ready)
}

// holdForSnapshot holds a RequestState that would take a fresh snapshot
// while the application's applies are still finishing.
func (g *ClusterGroup) holdForSnapshot(message []byte) bool {
	gate, ok := g.app.(clusterSnapshotGate)
	if !ok || len(message) < vsr.HeaderBytes || vsr.Command(message[32]) != vsr.CommandRequestState {
		return false
	}
	var h vsr.Header
	if vsr.DecodeMessage(message, &h) != nil || h.Commit != 0 && h.Commit == g.snapshotOp || gate.SnapshotReady() {
		return false
	}
	g.held = append([]byte(nil), message...)
	return true
}

// Quiesced steps a RequestState held for the application's applies to
// finish (clusterSnapshotGate).
func (g *ClusterGroup) Quiesced() {
	held := g.held
	if held == nil || g.busy || g.state != vsrGroupOpen {
		return
	}
	g.held = nil
	g.step(held)
	g.kick()
}

// Snapshot is the group's vsr.Snapshotter: the application's snapshot,
// remembering the commit point it was taken at.
func (g *ClusterGroup) Snapshot(dst []byte) []byte {
	g.snapshotOp = g.replica.CommitMin()
	return g.app.Snapshot(dst)
}

// execute runs one Ready: persist, then (persisted) send, restore, apply.
func (g *ClusterGroup) execute(ready *vsr.Ready) {
	invariant.Assert(!g.busy, "one batch at a time")
	invariant.Assert(g.ready == nil, "the previous batch is done")
	g.busy, g.ready = true, ready
	if g.id == 0 {
		g.publishMetadataPrimary()
	}
	if !ready.HardStateChanged && len(ready.Writes) == 0 && !g.recordDirty {
		g.persisted(nil)
		return
	}
	p := &g.persist
	// Journal writes are what a PrepareOK promises; a commit point needs no
	// fdatasync (a replica that loses it learns it again, and the
	// application record travels in the same superblock copy, never
	// ahead of it).
	*p = groupPersist{writes: ready.Writes, sync: g.sync && len(ready.Writes) > 0, done: g.persistedFn}
	if ready.HardStateChanged {
		hard := ready.HardState
		var err error
		g.hardState, err = hard.AppendBinary(g.hardState[:0])
		invariant.Assert(err == nil, "a replica's hard state encodes")
		p.hardState = g.hardState
		if views := [3]uint32{hard.View, hard.LogView, hard.VoteView}; views != g.viewDurable {
			p.sync = true // a vote or a view is a promise, whatever the topic's durability
			g.viewDurable = views
		}
	}
	if g.recordDirty {
		g.writing, g.record = g.record, g.writing[:0]
		g.recordDirty = false
		p.app = g.writing
	}
	g.journal.persist(p)
}

// persisted sends the batch's messages, then restores and applies.
func (g *ClusterGroup) persisted(err error) {
	if err != nil {
		g.fail(fmt.Errorf("shard: replication group %x journal: %w", g.id, err))
		return
	}
	ready := g.ready
	for i := range ready.Messages {
		envelope := &ready.Messages[i]
		if envelope.Client != 0 {
			g.routeReply(envelope.Client, envelope.Message)
			continue
		}
		g.shard.send(envelope.Replica, envelope.Message)
	}
	if ready.Snapshot != nil {
		g.app.Restore(g, ready.Snapshot, ready.SnapshotOp, g.restoredFn)
		return
	}
	g.restored(nil)
}

func (g *ClusterGroup) restored(err error) {
	if err != nil {
		g.fail(fmt.Errorf("shard: replication group %x restore: %w", g.id, err))
		return
	}
	if g.ready.Snapshot != nil {
		g.requests.fail(ErrClusterOutcomeUnknown)
	}
	if len(g.ready.Committed) == 0 {
		g.applied()
		return
	}
	g.app.Apply(g, g.requests.unpack(g.ready.Committed), g.appliedFn)
}

// applied ends the batch; what waited runs next.
func (g *ClusterGroup) applied() {
	invariant.Assert(g.busy, "a batch ends once")
	g.busy, g.ready = false, nil
	if g.id == MetaGroup {
		g.noteCaughtUp()
	}
	if g.state == vsrGroupClosing {
		g.closeJournal()
		return
	}
	g.kick()
}

// noteCaughtUp makes the node intact once its metadata replica, started
// on an empty journal, is normal and applied the head it had when it
// first was: groups created by later commands are new to this node.
func (g *ClusterGroup) noteCaughtUp() {
	c := g.shard.cluster
	if c.intact.Load() || g.replica.Status() != vsr.StatusNormal {
		return
	}
	if c.caughtUpOp == 0 {
		c.caughtUpOp = max(g.replica.Op(), 1)
	}
	if g.replica.CommitMin() >= c.caughtUpOp || g.replica.Op() == 0 {
		c.intact.Store(true)
		c.logger.Info("shard: metadata caught up; groups created from now on are new here",
			"op", g.replica.CommitMin())
	}
}

// routeReply passes vsr's answer to a request to the node that made it
// (bits 56..63 of the client id are its replica index plus one).
func (g *ClusterGroup) routeReply(client uint64, message []byte) {
	origin := int(client>>56) - 1
	c := g.shard.cluster
	switch {
	case origin == c.options.Replica:
		var h vsr.Header
		if vsr.DecodeMessage(message, &h) == nil {
			g.onReply(&h)
		}
	case origin >= 0 && origin < c.options.ReplicaCount:
		g.shard.send(origin, message)
	}
}

// fail stops the runtime: the group's durable state is in doubt.
func (g *ClusterGroup) fail(err error) {
	c := g.shard.cluster
	c.logger.Error("shard: replication group failed, stopping", "group", g.id, "err", err.Error())
	g.shard.shard.runtime.failWith(err)
}

func (g *ClusterGroup) publishMetadataPrimary() {
	primary := int64(-1)
	if g.replica.Status() == vsr.StatusNormal {
		primary = int64(g.replica.PrimaryIndex())
	}
	g.shard.cluster.metadataPrimary.Store(primary)
}

// describe names what the group waits for, for a log line.
func (g *ClusterGroup) describe() string {
	text := fmt.Sprintf("state=%d busy=%v held=%v inbox=%d requests=%d", g.state, g.busy, g.held != nil,
		len(g.inbox)-g.inboxHead, g.requests.count)
	if g.replica != nil {
		text += " " + g.replica.Summary()
	}
	if describer, ok := g.app.(interface{ describe() string }); ok {
		text += " " + describer.describe()
	}
	return text
}

// Close stops the group: this node's waiting requests fail with
// ErrClusterStopped, the batch under way finishes, the journal closes,
// then done runs.
func (g *ClusterGroup) Close(done func(error)) {
	switch g.state {
	case vsrGroupClosed:
		done(nil)
		return
	case vsrGroupClosing:
		g.closeDone = append(g.closeDone, done)
		return
	}
	g.closeDone = append(g.closeDone, done)
	wasOpen := g.state == vsrGroupOpen
	g.state = vsrGroupClosing
	g.requests.fail(ErrClusterStopped)
	if wasOpen && !g.busy {
		g.closeJournal()
	}
}

// Destroy closes the group like Close, then removes its journal: the
// group is gone for good (its partition was deleted).
func (g *ClusterGroup) Destroy(done func(error)) {
	g.destroy = true
	g.Close(done)
}

func (g *ClusterGroup) closeJournal() {
	g.journal.close(func(err error) {
		if g.destroy && err == nil {
			g.journal.remove(g.closed)
			return
		}
		g.closed(err)
	})
}

// closed ends a close: the group leaves the shard and the waiters run.
func (g *ClusterGroup) closed(err error) {
	g.state = vsrGroupClosed
	if g.shard.groups[g.id] == g {
		delete(g.shard.groups, g.id)
	}
	if g.id == 0 {
		g.shard.cluster.metadataPrimary.Store(-1)
	}
	waiting := g.closeDone
	g.closeDone = nil
	for _, done := range waiting {
		done(err)
	}
}
