package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"github.com/zeebo/xxh3"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
)

type storeStage uint8

const (
	stageIdle storeStage = iota
	stageMkdir
	stageOpenDirectory
	stageOpenSnapshot
	stageSizeSnapshot
	stageReadSnapshot
	stageCloseSnapshot
	stageOpenLog
	stageSyncDirectory
	stageSizeLog
	stageReadLog
	stageTruncateLog
	stageSyncLog
	stageAppendWrite
	stageAppendSync
	stageInstallTruncateLog
	stageInstallSyncLog
	stageSnapshotOpen
	stageSnapshotTruncate
	stageSnapshotWrite
	stageSnapshotSync
	stageSnapshotClose
	stageSnapshotRename
	stageSnapshotSyncDirectory
	stageSnapshotTruncateLog
	stageSnapshotSyncLog
)

// step issues the op of the current open stage.
func (s *Store) step() {
	op := &s.op
	op.Flags, op.Buffer, op.Path, op.Target, op.Position = 0, nil, "", "", 0
	switch s.stage {
	case stageMkdir:
		op.Code, op.Path = engine.OpMkdir, s.directory
	case stageOpenDirectory:
		op.Code, op.Path, op.Flags = engine.OpOpen, s.directory, engine.OpenDirectory
	case stageOpenSnapshot:
		op.Code, op.Path = engine.OpOpen, s.path(snapshotName)
	case stageSizeSnapshot:
		op.Code, op.File = engine.OpSize, s.snapshotFile
	case stageReadSnapshot:
		op.Code, op.File, op.Buffer = engine.OpRead, s.snapshotFile, s.buffer
	case stageCloseSnapshot:
		op.Code, op.File = engine.OpClose, s.snapshotFile
	case stageOpenLog:
		op.Code, op.Path, op.Flags = engine.OpOpen, s.path(logName), engine.OpenCreate
	case stageSyncDirectory:
		op.Code, op.File, op.Flags = engine.OpSync, s.directoryFile, engine.OpenDirectory
	case stageSizeLog:
		op.Code, op.File = engine.OpSize, s.logFile
	case stageReadLog:
		op.Code, op.File, op.Buffer = engine.OpRead, s.logFile, s.buffer
	case stageTruncateLog:
		op.Code, op.File, op.Position = engine.OpTruncate, s.logFile, s.logSize
	case stageSyncLog:
		op.Code, op.File = engine.OpSync, s.logFile
	default:
		invariant.Assert(false, "open stage issues an op")
	}
	s.storage.Submit(op)
}

func (s *Store) callback(op *engine.Op) {
	if op.Err != nil {
		s.failed(op)
		return
	}
	switch {
	case s.stage == stageAppendWrite:
		s.stage = stageAppendSync
		s.op.Code, s.op.Buffer = engine.OpSync, nil
		s.storage.Submit(&s.op)
	case s.stage == stageAppendSync:
		s.appendDone()
	case s.stage >= stageInstallTruncateLog:
		s.snapshotStep(op)
	default:
		if err := s.openStepDone(op); err != nil {
			s.finishOpen(err)
			return
		}
		if s.stage == stageIdle {
			s.finishOpen(nil)
			return
		}
		s.step()
	}
}

func (s *Store) failed(op *engine.Op) {
	if s.stage == stageOpenSnapshot && errors.Is(op.Err, syscall.ENOENT) {
		s.stage = stageOpenLog
		s.step()
		return
	}
	err := fmt.Errorf("metadata: %s: %w", s.directory, op.Err)
	if op.Code == engine.OpSync || s.stage >= stageAppendWrite {
		err = &engine.FatalError{Op: "metadata write", Path: s.directory, Err: op.Err}
	}
	if s.openDone != nil {
		s.finishOpen(err)
		return
	}
	s.fail(err)
}

// openStepDone records an open stage's result and picks the next stage.
func (s *Store) openStepDone(op *engine.Op) error {
	switch s.stage {
	case stageMkdir:
		s.stage = stageOpenDirectory
	case stageOpenDirectory:
		s.directoryFile, s.stage = engine.File(op.Result), stageOpenSnapshot
	case stageOpenSnapshot:
		s.snapshotFile, s.stage = engine.File(op.Result), stageSizeSnapshot
	case stageSizeSnapshot:
		if op.Result < snapshotHeaderBytes || op.Result > snapshotBytesMax {
			return &engine.CorruptError{Path: s.path(snapshotName), Reason: "snapshot size out of range"}
		}
		s.buffer, s.stage = make([]byte, op.Result), stageReadSnapshot
	case stageReadSnapshot:
		if err := s.loadSnapshot(s.buffer[:op.Result]); err != nil {
			return err
		}
		s.stage = stageCloseSnapshot
	case stageCloseSnapshot:
		s.stage = stageOpenLog
	case stageOpenLog:
		s.logFile, s.stage = engine.File(op.Result), stageSyncDirectory
	case stageSyncDirectory:
		s.stage = stageSizeLog
	case stageSizeLog:
		s.logSize = op.Result
		s.buffer, s.stage = make([]byte, op.Result), stageReadLog
	case stageReadLog:
		return s.replay(s.buffer[:op.Result])
	case stageTruncateLog:
		s.stage = stageSyncLog
	case stageSyncLog:
		s.stage = stageIdle
	}
	return nil
}

// loadSnapshot verifies and decodes the snapshot: written whole and
// renamed into place, a bad one is damage, never a torn write.
func (s *Store) loadSnapshot(raw []byte) error {
	payload, reason := snapshotPayload(raw)
	if reason != "" {
		return &engine.CorruptError{Path: s.path(snapshotName), Reason: reason}
	}
	s.state = decodeSnapshot(payload)
	return nil
}

// snapshotPayload checks a framed snapshot and returns its payload, or why
// it is bad.
func snapshotPayload(raw []byte) ([]byte, string) {
	if len(raw) < snapshotHeaderBytes || binary.LittleEndian.Uint32(raw) != snapshotMagic {
		return nil, "bad snapshot magic"
	}
	length := binary.LittleEndian.Uint64(raw[4:])
	if length != uint64(len(raw)-snapshotHeaderBytes) {
		return nil, "snapshot length mismatch"
	}
	payload := raw[snapshotHeaderBytes:]
	if xxh3.Hash(payload) != binary.LittleEndian.Uint64(raw[12:]) {
		return nil, "snapshot checksum mismatch"
	}
	if !verifySnapshot(payload) {
		return nil, "snapshot layout out of bounds"
	}
	if !snapshotIDsInRange(payload) {
		return nil, "snapshot id out of range"
	}
	return payload, ""
}

// replay applies the log's records after the snapshot. A bad record at the
// end is a torn append (truncated); a bad record followed by a good one is
// damage to an acknowledged record (ErrCorrupt).
func (s *Store) replay(raw []byte) error {
	position := int64(0)
	for position < int64(len(raw)) {
		payload, reason := recordAt(raw, position)
		if reason != "" {
			if goodRecordAfter(raw, position) {
				return &engine.CorruptError{Path: s.path(logName), Position: position, Reason: reason}
			}
			s.logger.Warn("truncating torn metadata log tail", "position", position, "bytes", int64(len(raw))-position, "reason", reason)
			s.TornBytes = int64(len(raw)) - position
			s.logSize = position
			s.stage = stageTruncateLog
			return nil
		}
		if err := s.replayRecord(payload, position); err != nil {
			return err
		}
		position += recordHeaderBytes + int64(len(payload))
	}
	s.stage = stageIdle
	return nil
}

// goodRecordAfter reports whether a valid record follows the bad one at
// position: then the bad one was acknowledged once, and is damage.
func goodRecordAfter(raw []byte, position int64) bool {
	if int64(len(raw))-position < recordHeaderBytes {
		return false
	}
	next := position + recordHeaderBytes + int64(binary.LittleEndian.Uint32(raw[position:]))
	if next >= int64(len(raw)) {
		return false
	}
	_, reason := recordAt(raw, next)
	return reason == ""
}

func recordAt(raw []byte, position int64) ([]byte, string) {
	if int64(len(raw))-position < recordHeaderBytes {
		return nil, "partial record header"
	}
	length := int64(binary.LittleEndian.Uint32(raw[position:]))
	if length == 0 || length > recordBytesMax || position+recordHeaderBytes+length > int64(len(raw)) {
		return nil, "record length out of range"
	}
	payload := raw[position+recordHeaderBytes : position+recordHeaderBytes+length]
	if xxh3.Hash(payload) != binary.LittleEndian.Uint64(raw[position+4:]) {
		return nil, "record checksum mismatch"
	}
	return payload, ""
}

func (s *Store) replayRecord(payload []byte, position int64) error {
	index, command := decodeRecord(payload)
	s.logRecords++
	if index <= s.state.Index {
		return nil // already in the snapshot: a crash came between snapshot and log reset
	}
	if index != s.state.Index+1 {
		return &engine.CorruptError{Path: s.path(logName), Position: position, Reason: "record index out of sequence"}
	}
	resolved := command
	if err := s.state.Prepare(&resolved); err != nil || !sameIDs(&resolved, &command) {
		return &engine.CorruptError{Path: s.path(logName), Position: position, Reason: "record does not replay"}
	}
	s.state.Apply(index, &command)
	return nil
}

func sameIDs(a, b *Command) bool {
	return a.StreamID == b.StreamID && a.TopicID == b.TopicID && a.GroupID == b.GroupID && a.UserID == b.UserID
}

func (s *Store) finishOpen(err error) {
	done := s.openDone
	s.openDone = nil
	s.buffer = nil
	if err != nil {
		s.stage = stageIdle
		s.logger.Error("metadata refused", "error", err)
		done(nil, err)
		return
	}
	s.stage = stageIdle
	s.logger.Info("metadata open", "index", s.state.Index, "log_records", s.logRecords)
	done(s, nil)
}
