package vsr

import (
	"errors"
	"math/rand/v2"
	"strconv"

	"github.com/whippetio/whippet/internal/invariant"
)

// Status is a replica's role-independent state (VR Revisited §4).
type Status uint8

// The statuses.
const (
	StatusNormal Status = iota
	StatusViewChange
	StatusRecovering
)

func (s Status) String() string {
	switch s {
	case StatusNormal:
		return "normal"
	case StatusViewChange:
		return "view_change"
	default:
		return "recovering"
	}
}

// Snapshotter is the application hook state transfer serves from. Snapshot
// appends the application state as of the last op the caller applied (every
// Ready.Committed entry of earlier batches) to dst and returns it. The
// replica owns nothing it returns past the call.
type Snapshotter interface {
	Snapshot(dst []byte) []byte
}

// Config configures one replica of one replication group. Zero timeouts and
// sizes take defaults. Rand is required: the caller seeds it, and must seed
// it differently at every start of the process, because recovery nonces and
// timeout jitter come from it. Every replica of a group must be configured
// with the same ReplicaCount, PipelineLen and JournalSlotCount; changing
// the membership of a group is not supported.
type Config struct {
	Cluster          uint64
	Group            uint64
	ReplicaCount     int
	Replica          int
	JournalSlotCount int
	PipelineLen      int
	ClientsMax       int
	Rand             *rand.Rand
	Snapshotter      Snapshotter
	StateChunkBytes  int // state transfer chunk; 0 takes stateChunkBytesDefault
	Timeouts         Timeouts

	// EagerCommit makes the primary send Commit to every backup as soon as
	// its commit point advances, not only every CommitTicks, so backups
	// apply (and answer their own clients) one message delay after the
	// primary instead of up to a heartbeat later.
	EagerCommit bool

	// AppliedOp is, for Open, the op the application's durable state
	// reflects. It may lag HardState.Commit (the caller crashed between
	// persisting a batch and applying it); Open then hands the ops between
	// to the application again in the first batch, or, when the journal no
	// longer holds them, recovers and repairs or transfers state from peers.
	AppliedOp uint64
}

// Ready is the output of one Step or Tick. The caller executes it in this
// order before the next Step or Tick:
//
//  1. Persist: write HardState (when HardStateChanged) and every Write to
//     the journal, and make them durable (fsync) — BEFORE any message is
//     sent, because a PrepareOK or a view-change vote promises the data is
//     durable.
//  2. Send every message in Messages (to replicas or clients). Delivery may
//     fail, repeat or reorder; the protocol retries.
//  3. Restore Snapshot (when not nil) into the application, then apply
//     Committed in order. A crash before this step is safe: at restart,
//     pass the op the application's durable state reflects as
//     Config.AppliedOp, and Open brings it up to HardState.Commit.
//
// Every slice in Ready, and the bytes they reference, belong to the replica
// and stay valid only until the next Step or Tick.
type Ready struct {
	HardState        HardState
	HardStateChanged bool
	Writes           []Write
	Messages         []Envelope
	Snapshot         []byte // application state as of SnapshotOp, or nil
	SnapshotOp       uint64
	Committed        []Entry
}

// Write is one journal slot write. An empty Message erases the slot (the
// caller writes zeros), which truncation after a view change needs.
type Write struct {
	Slot    int
	Op      uint64
	Message []byte
}

// Envelope is one outgoing message. A nonzero Client addresses a client
// (a Reply); otherwise Replica is the destination replica index.
type Envelope struct {
	Replica int
	Client  uint64
	Message []byte
}

// Entry is one committed op for the application to apply.
type Entry struct {
	Op        uint64
	Checksum  uint32 // the prepare's identity
	Client    uint64
	Request   uint64
	Operation uint8
	Body      []byte
}

// Errors for configuration.
var (
	ErrConfig = errors.New("vsr: invalid config")
	// ErrUnrecoverable: a one-replica group's application is behind
	// committed ops its journal no longer holds, and there is no peer to
	// fetch them from.
	ErrUnrecoverable = errors.New("vsr: a lone replica lost committed ops")
)

// dvcVote is one DoViewChange as the new primary records it.
type dvcVote struct {
	logView  uint32
	op       uint64
	checksum uint32
	commit   uint64
}

// Replica is one member of one replication group. It is a pure state machine
// and is not safe for concurrent use: feed it Step and Tick from one thread.
type Replica struct {
	cfg     Config
	replica uint8
	count   uint8
	quorum  int
	prng    *rand.Rand

	status  Status
	view    uint32
	logView uint32
	// voteView is the highest view this replica sent a DoViewChange for: a
	// recovering replica never joins a view below it.
	voteView uint32

	// The log: a trusted head (op, opChecksum) and the journal below it.
	// [chainLow, op] is present and hash-linked down from the head.
	op         uint64
	opChecksum uint32
	chainLow   uint64

	commitMin      uint64 // applied here
	commitChecksum uint32 // checksum of op commitMin (0 for the genesis op 0)
	// commitUnknown: the application restarted behind a commit point the
	// journal cannot bridge, so commitChecksum is unknown until recovery
	// repairs down to it; until then the durable hard state stays as found.
	commitUnknown bool
	durable       HardState
	commitMax     uint64 // known committed in the cluster

	journal  journal
	pipeline [pipelineLenMax]uint32 // ack bitsets at index op % PipelineLen
	ackedOp  uint64                 // highest op this backup acknowledged in view
	clients  clientTable

	svcFrom    uint32
	dvcFrom    uint32
	dvcVotes   [replicaCountMax]dvcVote
	dvcSent    bool
	dvcDecided bool
	repairPeer int
	attempts   uint32 // view changes or recovery rounds since the last normal status
	recovery   recoveryState
	// fresh: the replica started from empty durable state (New, or Open
	// of nothing); see isFresh.
	fresh bool
	// damagedSlots are journal slots Open found torn or corrupt.
	damagedSlots []int
	// carry keeps the batch Open built for the first Step or Tick.
	carry       bool
	timeouts    [timeoutCount]timeout
	hardChanged bool

	appliedOp uint64 // commitMin as of the start of this Step or Tick
	ready     Ready
	arena     []byte
	arenaUsed int
	stateBuf  []byte
	served    stateServed
	fetched   stateFetched
	dropped   uint64 // messages not emitted because a batch was full
}

// New returns a replica its caller knows never held state for this group
// (the group is new to it): view 0, empty journal, normal at once. A
// replica whose state may have been lost (a wiped or replaced data
// directory looks new) must start with Open instead.
func New(cfg Config) (*Replica, error) {
	r, err := open(cfg, HardState{}, nil, true)
	if err != nil {
		return nil, err
	}
	r.ready.Messages = r.ready.Messages[:0] // nobody needs view 0 announced
	return r, nil
}

func (cfg *Config) normalize() error {
	if cfg.ReplicaCount < 1 || cfg.ReplicaCount > replicaCountMax {
		return ErrConfig
	}
	if cfg.Replica < 0 || cfg.Replica >= cfg.ReplicaCount || cfg.Rand == nil {
		return ErrConfig
	}
	if cfg.JournalSlotCount == 0 {
		cfg.JournalSlotCount = journalSlotCountDefault
	}
	if cfg.PipelineLen == 0 {
		cfg.PipelineLen = pipelineLenMax
	}
	if cfg.ClientsMax == 0 {
		cfg.ClientsMax = clientsMax
	}
	if cfg.StateChunkBytes == 0 {
		cfg.StateChunkBytes = stateChunkBytesDefault
	}
	if cfg.StateChunkBytes < 0 || cfg.StateChunkBytes > stateChunkBytesMax {
		return ErrConfig
	}
	if cfg.PipelineLen > pipelineLenMax || cfg.ClientsMax > clientsMax {
		return ErrConfig
	}
	if cfg.JournalSlotCount > journalSlotCountMax || cfg.JournalSlotCount < 2*cfg.PipelineLen {
		return ErrConfig
	}
	cfg.Timeouts.normalize()
	return nil
}

func newReplica(cfg Config) *Replica {
	r := &Replica{
		cfg:     cfg,
		replica: uint8(cfg.Replica),
		count:   uint8(cfg.ReplicaCount),
		quorum:  cfg.ReplicaCount/2 + 1,
		prng:    cfg.Rand,
		journal: newJournal(cfg.JournalSlotCount),
		clients: newClientTable(cfg.ClientsMax),
		arena:   make([]byte, messagesPerStepMax*headerBytes),
	}
	r.ready.Messages = make([]Envelope, 0, messagesPerStepMax)
	r.ready.Writes = make([]Write, 0, repairPreparesMax+pipelineLenMax+2)
	r.ready.Committed = make([]Entry, 0, cfg.JournalSlotCount)
	r.repairPeer = int(r.replica)
	return r
}

// Status, View, Op, CommitMin, CommitMax, LogView and Primary expose state
// for tests, the simulator's invariant checks and metrics.
func (r *Replica) Status() Status     { return r.status }
func (r *Replica) View() uint32       { return r.view }
func (r *Replica) LogView() uint32    { return r.logView }
func (r *Replica) Op() uint64         { return r.op }
func (r *Replica) CommitMin() uint64  { return r.commitMin }
func (r *Replica) CommitMax() uint64  { return r.commitMax }
func (r *Replica) Index() int         { return int(r.replica) }
func (r *Replica) Dropped() uint64    { return r.dropped }
func (r *Replica) IsPrimary() bool    { return r.primaryIndex(r.view) == r.replica }
func (r *Replica) Complete() bool     { return r.complete() }
func (r *Replica) PrimaryIndex() int  { return int(r.primaryIndex(r.view)) }
func (r *Replica) Group() uint64      { return r.cfg.Group }
func (r *Replica) OpChecksum() uint32 { return r.opChecksum }

// Checksum returns the checksum of op in the local journal, or 0.
func (r *Replica) Checksum(op uint64) uint32 {
	if op == r.commitMin {
		return r.commitChecksum
	}
	if s := r.journal.entry(op); s != nil {
		return s.checksum
	}
	return 0
}

// primaryIndex spreads groups' primaries: group g's view-0 primary is g mod n.
func (r *Replica) primaryIndex(view uint32) uint8 {
	return uint8((uint64(view) + r.cfg.Group) % uint64(r.count))
}

func (r *Replica) isPrimaryOf(view uint32) bool { return r.primaryIndex(view) == r.replica }

func (r *Replica) complete() bool { return r.chainLow <= r.commitMin+1 }

// Step feeds one message (header and body; the caller keeps ownership) and
// returns the batch to execute. A message that fails validation returns an
// error and changes nothing.
func (r *Replica) Step(message []byte) (*Ready, error) {
	var h Header
	if err := DecodeMessage(message, &h); err != nil {
		return nil, err
	}
	if h.Cluster != r.cfg.Cluster {
		return nil, ErrCluster
	}
	if h.Group != r.cfg.Group {
		return nil, ErrGroup
	}
	if h.Command != CommandRequest && int(h.Replica) >= int(r.count) {
		return nil, ErrReplica
	}
	r.begin()
	r.onMessage(&h, message)
	r.finish()
	return &r.ready, nil
}

// Tick advances logical time by one tick and returns the batch to execute.
func (r *Replica) Tick() *Ready {
	r.begin()
	r.tickTimeouts()
	r.finish()
	return &r.ready
}

func (r *Replica) begin() {
	if r.carry {
		r.carry = false
		return
	}
	r.ready.Writes = r.ready.Writes[:0]
	r.ready.Messages = r.ready.Messages[:0]
	r.ready.Committed = r.ready.Committed[:0]
	r.ready.Snapshot = nil
	r.ready.SnapshotOp = 0
	r.ready.HardStateChanged = false
	r.arenaUsed = 0
	r.hardChanged = false
	r.appliedOp = r.commitMin
}

func (r *Replica) finish() {
	r.advance()
	if r.cfg.EagerCommit && r.commitMin > r.appliedOp && r.status == StatusNormal && r.IsPrimary() {
		r.sendCommit()
	}
	if r.hardChanged {
		r.ready.HardState = r.hardState()
		r.ready.HardStateChanged = true
	}
	r.checkInvariants()
}

func (r *Replica) onMessage(h *Header, message []byte) {
	switch h.Command {
	case CommandRequest:
		r.onRequest(h, message)
	case CommandPrepare:
		r.onPrepare(h, message)
	case CommandPrepareOK:
		r.onPrepareOK(h)
	case CommandCommit:
		r.onCommit(h)
	case CommandStartViewChange:
		r.onStartViewChange(h)
	case CommandDoViewChange:
		r.onDoViewChange(h)
	case CommandStartView:
		r.onStartView(h)
	case CommandRequestStartView:
		r.onRequestStartView(h)
	case CommandRecovery:
		r.onRecovery(h)
	case CommandRecoveryResponse:
		r.onRecoveryResponse(h)
	case CommandRequestPrepares:
		r.onRequestPrepares(h)
	case CommandPreparesEvicted:
		r.onPreparesEvicted(h)
	case CommandRequestState:
		r.onRequestState(h)
	case CommandState:
		r.onState(h, message)
	case CommandReply, CommandReserved:
		// Replies are for clients; a replica ignores one sent to it.
	}
}

// advance runs after every input: it turns a completed log into the
// status it was waiting for and commits what may be committed.
func (r *Replica) advance() {
	if !r.complete() {
		return
	}
	switch r.status {
	case StatusNormal:
		if r.logView != r.view {
			r.logView = r.view
			r.hardChanged = true
		}
		if !r.IsPrimary() {
			r.commitTo(r.commitMax)
			if r.op > r.ackedOp {
				r.sendPrepareOK()
			}
		}
	case StatusViewChange:
		if r.dvcDecided && r.IsPrimary() {
			r.becomePrimary()
		}
	case StatusRecovering:
		if r.recovery.adopted {
			r.finishRecovery()
		}
	}
}

// header returns a header for a message from this replica in its view.
func (r *Replica) header(command Command) Header {
	return Header{Cluster: r.cfg.Cluster, Group: r.cfg.Group, View: r.view,
		Command: command, Replica: r.replica}
}

// sendHeader seals a header-only message in the batch arena and queues it.
func (r *Replica) sendHeader(to uint8, client uint64, h *Header) {
	if r.arenaUsed+headerBytes > len(r.arena) || len(r.ready.Messages) == cap(r.ready.Messages) {
		r.dropped++
		return
	}
	buf := r.arena[r.arenaUsed : r.arenaUsed+headerBytes]
	r.arenaUsed += headerBytes
	message := encodeMessage(buf, h, nil)
	r.ready.Messages = append(r.ready.Messages, Envelope{Replica: int(to), Client: client, Message: message})
}

// sendMessage queues a message whose bytes the replica owns until the next
// Step or Tick (a journaled prepare or the state buffer).
func (r *Replica) sendMessage(to uint8, message []byte) {
	invariant.Assert(to != r.replica, "a replica never sends to itself")
	if len(r.ready.Messages) == cap(r.ready.Messages) {
		r.dropped++
		return
	}
	r.ready.Messages = append(r.ready.Messages, Envelope{Replica: int(to), Message: message})
}

func (r *Replica) broadcast(h *Header) {
	for i := uint8(0); i < r.count; i++ {
		if i != r.replica {
			r.sendHeader(i, 0, h)
		}
	}
}

func (r *Replica) writeSlot(s *slot) {
	r.ready.Writes = append(r.ready.Writes, Write{Slot: r.journal.index(s.op), Op: s.op, Message: s.message})
}

func (r *Replica) eraseSlot(op uint64) {
	if r.journal.erase(op) {
		r.ready.Writes = append(r.ready.Writes, Write{Slot: r.journal.index(op), Op: op})
	}
}

// Summary describes the replica's protocol state in one line, for logs and
// simulator failure reports.
func (r *Replica) Summary() string {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	return "replica=" + u(uint64(r.replica)) + " group=" + u(r.cfg.Group) + " status=" + r.status.String() +
		" view=" + u(uint64(r.view)) + " log_view=" + u(uint64(r.logView)) + " op=" + u(r.op) +
		" chain_low=" + u(r.chainLow) + " commit_min=" + u(r.commitMin) + " commit_max=" + u(r.commitMax) +
		" dvc_decided=" + strconv.FormatBool(r.dvcDecided) + " adopted=" + strconv.FormatBool(r.recovery.adopted)
}
