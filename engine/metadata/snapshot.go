package metadata

import (
	"encoding/binary"

	"github.com/zeebo/xxh3"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
)

// startSnapshot writes the whole state to snapshot.tmp, syncs it, renames
// it over snapshot, syncs the directory, then empties the log. A crash at
// any point leaves either the old snapshot with the full log, or the new
// snapshot with a log whose records it already holds (replay skips them).
func (s *Store) startSnapshot() {
	s.buffer = s.ExportSnapshot(s.buffer[:0])
	s.stage = stageSnapshotOpen
	s.snapshotIssue()
}

// ExportSnapshot appends the applied state to dst, framed as the snapshot
// file is ([magic][length][xxh3][fbs.Snapshot]), for state transfer: an
// Execution with Snapshot set installs it on another replica. Two stores
// that applied the same commands export the same bytes.
func (s *Store) ExportSnapshot(dst []byte) []byte {
	payload := encodeSnapshot(s.builder, s.state)
	start := len(dst)
	dst = append(dst, make([]byte, snapshotHeaderBytes)...)
	binary.LittleEndian.PutUint32(dst[start:], snapshotMagic)
	binary.LittleEndian.PutUint64(dst[start+4:], uint64(len(payload)))
	binary.LittleEndian.PutUint64(dst[start+12:], xxh3.Hash(payload))
	return append(dst, payload...)
}

// install replaces the state with a peer's snapshot: the log is emptied
// and synced first, then the snapshot is written as startSnapshot does. A
// crash in between leaves the old snapshot (an older state with its own
// AppliedOp, which the replica catches up from), never the old log's
// records over the new state.
func (s *Store) install(e *Execution) {
	payload, reason := snapshotPayload(e.Snapshot)
	if reason != "" || len(e.Snapshot) > snapshotBytesMax {
		e.Err = &engine.CorruptError{Path: "state transfer", Reason: reason}
		e.Done(e)
		return
	}
	state := decodeSnapshot(payload)
	if state.AppliedOp > e.Command.Op {
		e.Err = &engine.CorruptError{Path: "state transfer", Reason: "snapshot ahead of the op it is installed as of"}
		e.Done(e)
		return
	}
	invariant.Assert(len(s.buffer) == 0 || s.stage == stageIdle, "install starts idle")
	state.AppliedOp = e.Command.Op
	s.state = state
	s.current = e
	s.buffer = s.ExportSnapshot(s.buffer[:0])
	s.stage = stageInstallTruncateLog
	s.snapshotIssue()
}

func (s *Store) snapshotIssue() {
	op := &s.op
	op.Flags, op.Buffer, op.Path, op.Target, op.Position = 0, nil, "", "", 0
	switch s.stage {
	case stageInstallTruncateLog:
		op.Code, op.File = engine.OpTruncate, s.logFile
	case stageInstallSyncLog:
		op.Code, op.File = engine.OpSync, s.logFile
	case stageSnapshotOpen:
		op.Code, op.Path, op.Flags = engine.OpOpen, s.path(snapshotTmpName), engine.OpenCreate
	case stageSnapshotTruncate:
		op.Code, op.File = engine.OpTruncate, s.snapshotFile
	case stageSnapshotWrite:
		op.Code, op.File, op.Buffer = engine.OpWrite, s.snapshotFile, s.buffer
	case stageSnapshotSync:
		op.Code, op.File = engine.OpSync, s.snapshotFile
	case stageSnapshotClose:
		op.Code, op.File = engine.OpClose, s.snapshotFile
	case stageSnapshotRename:
		op.Code, op.Path, op.Target = engine.OpRename, s.path(snapshotTmpName), s.path(snapshotName)
	case stageSnapshotSyncDirectory:
		op.Code, op.File, op.Flags = engine.OpSync, s.directoryFile, engine.OpenDirectory
	case stageSnapshotTruncateLog:
		op.Code, op.File = engine.OpTruncate, s.logFile
	case stageSnapshotSyncLog:
		op.Code, op.File = engine.OpSync, s.logFile
	}
	s.storage.Submit(op)
}

func (s *Store) snapshotStep(op *engine.Op) {
	if s.stage == stageSnapshotOpen {
		s.snapshotFile = engine.File(op.Result)
	}
	if s.stage == stageSnapshotSyncLog {
		s.logSize, s.logRecords = 0, 0
		s.stage = stageIdle
		s.logger.Info("metadata snapshot written", "index", s.state.Index, "applied_op", s.state.AppliedOp)
		if e := s.current; e != nil {
			s.current = nil
			e.Done(e)
		}
		s.kick()
		return
	}
	s.stage++
	s.snapshotIssue()
}
