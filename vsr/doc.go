// Package vsr is Viewstamped Replication (Liskov & Cowling, "Viewstamped
// Replication Revisited", 2012) with chain replication in normal operation,
// written as a pure state machine.
//
// # The room
//
// vsr owns the consensus protocol of one replication group: normal
// operation, view change, recovery, journal repair, state transfer and the
// client table. It performs no I/O and keeps no clock: inputs are
// Replica.Step(message) and Replica.Tick(), and each returns one Ready batch
// that the caller executes in the order documented on Ready (persist, then
// send, then restore snapshot and apply). It must not import any package of
// this module except internal/invariant; it uses no goroutines, timers,
// time.Now, sync or global randomness (a seeded *rand.Rand is injected), and
// map iteration never reaches an output. vsr/sim is the deterministic
// simulator that drives replicas with faults; cmd/vopr runs it.
//
// # Groups
//
// Several groups run side by side (one per partition, plus metadata): every
// message names its group, the caller keeps one Replica per group and routes
// by the group field. The primary of view v in group g is (v + g) mod n, so
// view 0 spreads the groups' primaries over the replicas.
//
// # Normal operation: chain replication
//
// The primary numbers a request as op = op+1, journals it and sends the
// Prepare to replica primary+1 only. Each backup journals it, forwards it to
// its successor unless that is the primary (the chain ends), and sends
// PrepareOK straight to the primary. A PrepareOK for op acknowledges every op
// up to it: a backup acknowledges only a complete log. An op commits once a
// quorum (a majority, the primary included) holds it and every earlier op
// committed. The primary's Commit message, every CommitTicks, carries its
// commit point and head and is the heartbeat; backups commit up to it. The
// primary resends unacknowledged prepares straight to each lagging backup.
//
// # The log is a hash chain
//
// A Prepare's header checksum is its identity, and its parent field is the
// checksum of the prepare one op below (0 below op 1). Two logs that hold the
// same checksum at op hold the same ops up to op. A replica keeps a trusted
// head (op, checksum) learned from the primary of its view, and the verified
// chain [chainLow, op] of journal entries linked down from it. Repair asks a
// peer for the op just below the chain with the checksum the chain expects;
// the peer answers with that prepare and the ones below it while they link.
// The log is complete when the chain reaches the commit point.
//
// # View change
//
// A backup that hears nothing from the primary for NormalTicks (plus seeded
// jitter) starts view v+1: it persists the view and broadcasts
// StartViewChange. After StartViewChange from a quorum it sends
// DoViewChange to the new primary naming its log: log view (the last view in
// which its log was complete), the longest linked prefix it holds from its
// commit point, that prefix's head checksum, and its commit point. The new
// primary, with a quorum of DoViewChange (its own included), takes the log of
// the highest (log view, op), repairs its journal to that head from the
// replica that named it, and broadcasts StartView. Backups truncate whatever
// lies above the new head, repair up to it, and acknowledge.
//
// # Recovery and restart
//
// Open restarts a replica from its HardState, the raw journal slots and the
// op the application last applied (Config.AppliedOp). An intact journal
// holds everything the replica acknowledged (it persisted before it sent),
// so it rejoins in its durable view, and committed ops the application has
// not applied are handed to it again in the first batch. A damaged slot
// (torn write, corrupted sector) may have held an acknowledged prepare, and
// an application further behind than the journal reaches has lost state:
// the replica then runs the recovery protocol (a nonce per incarnation),
// adopts the view and head the primary reports once answers from
// n-quorum+1 replicas arrived (never a view below one it voted in,
// HardState.VoteView), repairs or transfers state, and only then votes and
// acknowledges again. Open's own decisions become the first batch.
// A replica that persisted its adopted view mid-recovery writes
// HardState.Recovering, so a restart recovers again instead of trusting a
// log it never completed.
//
// # Fresh replicas
//
// Empty durable state (no hard state ever written, no journal slot) looks
// the same whether the replica never ran or its data directory was wiped
// or replaced, and a wiped replica may have acknowledged prepares that
// committed. So Open of empty state recovers; only New, for a replica its
// caller knows never held state for the group, starts at once. A peer
// answers Recovery with flags in the RecoveryResponse request field: bit 0
// "fresh" (it holds nothing: op 0, log view 0, never voted, no known
// commit; a recovering replica only if it too started empty), bit 1 "not
// normal" (it recovers or changes view: its answer names no view or head),
// bit 2 "view zero" (it never voted and its log view is 0; op, context
// and commit are then its own head and commit point). With n replicas,
// quorum q and f = (n-1)/2, a recovering empty replica:
//
//   - starts fresh at view 0 once n-q+1+max(f-1, 0) peers answered fresh
//     (for n = 3 both others, for n = 5 all four). Why: an op commits with
//     q acknowledgements. If k fresh answers are true, at most n-k
//     replicas (itself included) ever acknowledged, fewer than q when
//     k ≥ n-q+1. But a fresh answer may come from another wiped replica;
//     with this one wiped, at most f-1 others can be within the fault
//     model, hence the f-1 extra answers. Being possibly the view-0
//     primary that sealed prepares still in flight, it never seals in view
//     0 again: as view-0 primary it starts view 1 instead.
//   - adopts the primary's view and head as any recovering replica, with
//     n-q+1 normal answers, or n-q+1+max(f-1, 0) normal or fresh ones (a
//     replica that never voted is in no view-change quorum, so the
//     normal ones still meet every such quorum).
//   - adopts view 0's longest log once every other replica answered "view
//     zero": no view change ever completed (it needs q votes, and only this
//     replica may have voted before it lost its state), so view 0's log is
//     the group's, and each committed op is held by some other replica.
//
// Consequences for the caller. The first boot of a group whose replicas
// all start empty needs every replica up for n = 3 (both others must
// answer): until then no replica votes. A group created at run time on a
// node whose own state is intact (the command creating it committed after
// this node's state was last found, so the node cannot have held the
// group before) is opened with New: it serves at once even with a replica
// down, and a replica that never held it catches up by repair. A wiped
// node learns the metadata log first and then recovers every group it
// recreates while replaying, through the rules above.
//
// # State transfer
//
// A replica whose gap is wider than its journal, or whose peer reports the
// range evicted, pulls State: the peer's client table and an application
// snapshot (the Snapshotter hook) at its commit point, the "payload". The
// peer takes the payload once and serves it in chunks of StateChunkBytes by
// offset; chunks name the snapshot by its op and the payload's CRC-32C, so
// chunks of two snapshots never mix, and the whole payload is verified
// before it is installed. A transfer that stalls starts over, possibly from
// another peer. The caller restores Ready.Snapshot before it applies later
// commits. Both sides hold the payload in memory (at most stateBytesMax).
//
// # Message layout
//
// Every message is a 128-byte header and a body (little endian):
//
//	 0      4      8             16            24     28     32  33  34  35  36
//	 +------+------+-------------+-------------+------+------+---+---+---+---+
//	 |cksum |cksum |  cluster    |   group     | size | view |cmd|rep|opn| 0 |
//	 |      | body |             |             |      |      |   |   |   |   |
//	 +------+------+-------------+-------------+------+------+---+---+---+---+
//	36      40            48            56            64            72
//	 +------+-------------+-------------+-------------+-------------+
//	 |parent|     op      |   commit    |   client    |   request   |
//	 +------+-------------+-------------+-------------+-------------+
//	72      76     80            88                               128
//	 +------+------+-------------+-----------------------------------+
//	 |contxt|logvw |   nonce     |        reserved (zero)            |
//	 +------+------+-------------+-----------------------------------+
//
// cksum is CRC-32C of header bytes [4, 128) and so covers cksum body, the
// CRC-32C of the body. Fields per command:
//
//	Request          client, request, operation; body = request
//	Reply            client, request, op (where it committed), commit
//	Prepare          op, commit, parent, client, request, operation; body;
//	                 view and replica are those of the primary that sealed it
//	PrepareOK        op, context = checksum of the prepare at op
//	Commit           commit, op = primary head, context = head checksum
//	StartViewChange  view
//	DoViewChange     logview, op, context = checksum at op, commit
//	StartView        op, context = head checksum, commit
//	RequestStartView view
//	Recovery         nonce
//	RecoveryResponse nonce; request = flags (bit 0 fresh, bit 1 not
//	                 normal, bit 2 view zero: see Fresh replicas); from
//	                 the primary, or with view zero, also op, context,
//	                 commit
//	RequestPrepares  op, context = wanted checksum, commit = lowest op wanted
//	PreparesEvicted  op
//	RequestState     op = requester's commit point, commit = snapshot op
//	                 being fetched (0: any), nonce = byte offset wanted
//	State            op = snapshot op, context = checksum at op, commit,
//	                 parent = CRC-32C of the whole payload, request = payload
//	                 bytes, nonce = offset of this chunk; body = the chunk.
//	                 The payload is the client table (u32 count, then
//	                 client, request, op as u64 each) and the snapshot.
//
// A journal entry is the Prepare message exactly as the primary sealed it;
// slot = op mod JournalSlotCount. An erased slot is zeros. The encoded
// HardState (superblock) is: u32 CRC-32C of the rest, u32 view, u32 log
// view, u32 vote view, u64 commit, u32 commit checksum, u32 flags (bit 0
// recovering), then the client table as in State.
//
// # Invariants (checked after every Step and Tick)
//
//  1. commitMin ≤ op: the commit point is inside the log.
//  2. commitMin ≤ commitMax: nothing is applied before it is known committed.
//  3. commitMin < chainLow ≤ op+1, and [chainLow, op] is present and
//     hash-linked down from the trusted head (walked in -tags invariants).
//  4. logView ≤ view.
//  5. A normal primary has a complete log whose uncommitted suffix fits the
//     pipeline (PipelineLen).
//  6. A normal replica with a complete log has logView = view.
//  7. A committed op links to the op committed before it.
//  8. A replica sends PrepareOK only for a complete log, and only after the
//     entries it covers were handed to the caller for persistence.
//  9. The journal holds no entry above the head (walked in -tags
//     invariants): truncation erases them durably, and repair takes only
//     the op the verified chain asks for, so the prefix a DoViewChange
//     names never links through an entry of an abandoned log.
package vsr
