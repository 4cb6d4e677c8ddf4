package metadata

import (
	"encoding/binary"

	"github.com/zeebo/xxh3"

	"github.com/whippetio/whippet/engine"
)

// startSnapshot writes the whole state to snapshot.tmp, syncs it, renames
// it over snapshot, syncs the directory, then empties the log. A crash at
// any point leaves either the old snapshot with the full log, or the new
// snapshot with a log whose records it already holds (replay skips them).
func (s *Store) startSnapshot() {
	payload := encodeSnapshot(s.builder, s.state)
	s.buffer = append(s.buffer[:0], make([]byte, snapshotHeaderBytes)...)
	binary.LittleEndian.PutUint32(s.buffer[0:], snapshotMagic)
	binary.LittleEndian.PutUint64(s.buffer[4:], uint64(len(payload)))
	binary.LittleEndian.PutUint64(s.buffer[12:], xxh3.Hash(payload))
	s.buffer = append(s.buffer, payload...)
	s.stage = stageSnapshotOpen
	s.snapshotIssue()
}

func (s *Store) snapshotIssue() {
	op := &s.op
	op.Flags, op.Buffer, op.Path, op.Target, op.Position = 0, nil, "", "", 0
	switch s.stage {
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
		s.logger.Info("metadata snapshot written", "index", s.state.Index)
		s.kick()
		return
	}
	s.stage++
	s.snapshotIssue()
}
