// Package metadata is the metadata state machine owned by shard 0:
// streams, topics, partitions, consumer groups, users and personal access
// tokens (State), persisted by Store as a log of flatbuffers records plus
// periodic snapshots, replayed at open.
//
// Membership (not logged: sessions end with the process) tracks which
// session is a member of which group and which partitions it may poll,
// with Iggy's cooperative rebalance on join and eager one on leave.
//
// It imports engine (Storage, errors) and internal/ only.
//
// # Files
//
//	metadata/log       records back to back:
//	                   [length u32][xxh3-64 of payload u64][payload: fbs.Record]
//	metadata/snapshot  [magic u32 "WMSN"][length u64][xxh3-64 u64][payload: fbs.Snapshot]
//
// Schemas are in metadata.fbs; the generated Go code in fbs/ is committed
// and rebuilt by `make generate` (flatc 2.0.8, Debian flatbuffers-compiler).
//
// # Invariants
//
//  1. A command is prepared (validated, ids resolved) before it is logged,
//     logged and fdatasynced before it is applied, and applied before it is
//     acknowledged: the log holds exactly the acknowledged commands, in
//     order, plus at most one torn record at its end.
//  2. Ids: streams, topics and users take the lowest free slot (0-based);
//     partitions are 0..n-1, created at the end and deleted from the end;
//     consumer group ids are monotonic per topic and never reused.
//  3. Replay is deterministic: each record's index is the previous + 1
//     and re-preparing it resolves the same ids, else ErrCorrupt.
//  4. A snapshot is written to a temp file, synced and renamed into place,
//     then the directory is synced, then the log is emptied; a record
//     whose index the snapshot covers is skipped at replay.
//  5. State never iterates a map: slices indexed by id keep output order
//     deterministic.
//  6. Apply depends on the state and the command alone: whatever is not
//     deterministic (timestamps, password hashes and their salts, token
//     hashes) is stamped into the command before it is proposed, so
//     replicas applying the same commands (EncodeCommand/DecodeCommand
//     carry them through a replication group) export byte-identical
//     snapshots (ExportSnapshot).
//  7. State.AppliedOp is the replication op the state reflects: logged
//     with each applied command, advanced in memory by a rejected one
//     (which a restart re-rejects alike), and set by an installed
//     snapshot, whose install empties the log before it writes the
//     snapshot.
package metadata

//go:generate flatc --go -o . metadata.fbs
