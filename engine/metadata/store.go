package metadata

import (
	"encoding/binary"
	"log/slog"
	"path/filepath"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/zeebo/xxh3"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
)

// Files of the metadata directory.
const (
	logName         = "log"
	snapshotName    = "snapshot"
	snapshotTmpName = "snapshot.tmp"
	// recordHeaderBytes frames each log record: [length u32][xxh3 u64].
	recordHeaderBytes = 12
	// snapshotHeaderBytes frames the snapshot: [magic u32][length u64][xxh3 u64].
	snapshotHeaderBytes = 20
	snapshotMagic       = 0x4e534d57 // "WMSN"
)

// Execution runs one command through the store. The caller owns it until
// Done runs.
type Execution struct {
	Command Command
	Done    func(*Execution)
	// Result and Err are set before Done: Err is a validation error (the
	// command was not logged), or a *engine.FatalError.
	Result Result
	Err    error
	// Snapshot, when not nil, makes the execution install a state that
	// ExportSnapshot wrote (state transfer) instead of running Command;
	// Command.Op is then the replication op that state is as of.
	Snapshot []byte
	next     *Execution
}

// Store persists the State: every command is appended to the metadata
// log and fdatasynced before it is applied and acknowledged; every
// snapshotRecords commands a snapshot (temp file, fdatasync, rename,
// directory fsync) replaces the log. Open loads the snapshot and replays
// the log. Commands run one at a time in submission order. Like a
// partition it is a state machine on the engine.Storage completions.
type Store struct {
	storage   engine.Storage
	directory string
	logger    *slog.Logger
	state     *State
	builder   *flatbuffers.Builder
	op        engine.Op
	stage     storeStage
	fatal     error

	directoryFile engine.File
	logFile       engine.File
	snapshotFile  engine.File
	logSize       int64
	logRecords    int
	buffer        []byte

	first, last *Execution
	current     *Execution
	openDone    func(*Store, error)
	// TornBytes counts log bytes truncated at open.
	TornBytes int64
}

// State is the current state; callers must not modify it.
func (s *Store) State() *State { return s.state }

// Err is the fatal error that stopped the store, or nil.
func (s *Store) Err() error { return s.fatal }

// OpenStore loads directory's snapshot and log and calls done once.
func OpenStore(storage engine.Storage, directory string, logger *slog.Logger, done func(*Store, error)) {
	if logger == nil {
		logger = slog.Default()
	}
	s := &Store{
		storage: storage, directory: directory, logger: logger.With("metadata", directory),
		state: &State{}, builder: flatbuffers.NewBuilder(4096), openDone: done,
	}
	s.op.Callback = s.callback
	s.stage = stageMkdir
	s.step()
}

// Execute queues e; e.Done runs once the command is durable and applied,
// or rejected.
func (s *Store) Execute(e *Execution) {
	e.next = nil
	if s.last == nil {
		s.first = e
	} else {
		s.last.next = e
	}
	s.last = e
	s.kick()
}

func (s *Store) kick() {
	for s.current == nil && s.first != nil && s.stage == stageIdle {
		e := s.first
		s.first = e.next
		if s.first == nil {
			s.last = nil
		}
		if s.fatal != nil {
			e.Err = s.fatal
			e.Done(e)
			continue
		}
		if e.Snapshot != nil {
			s.install(e)
			continue
		}
		err := s.state.Prepare(&e.Command)
		if err == nil {
			err = s.writeRecord(e)
		}
		if err != nil {
			s.state.Rejected(&e.Command)
			e.Err = err
			e.Done(e)
			continue
		}
	}
}

// writeRecord starts appending e's record, or refuses one past the
// record limit (a client can ask for that much, with a large permissions
// set): nothing is written then.
func (s *Store) writeRecord(e *Execution) error {
	payload := encodeRecord(s.builder, s.state.Index+1, &e.Command)
	if len(payload) > recordBytesMax {
		return ErrCommandTooLarge
	}
	s.current = e
	s.buffer = append(s.buffer[:0], make([]byte, recordHeaderBytes)...)
	binary.LittleEndian.PutUint32(s.buffer[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint64(s.buffer[4:], xxh3.Hash(payload))
	s.buffer = append(s.buffer, payload...)
	s.stage = stageAppendWrite
	s.op.Code, s.op.File, s.op.Buffer, s.op.Position = engine.OpWrite, s.logFile, s.buffer, s.logSize
	s.storage.Submit(&s.op)
	return nil
}

// appendDone applies the durable record and acknowledges it.
func (s *Store) appendDone() {
	e := s.current
	s.current = nil
	s.logSize += int64(len(s.buffer))
	s.logRecords++
	e.Result = s.state.Apply(s.state.Index+1, &e.Command)
	s.stage = stageIdle
	if s.logRecords >= snapshotRecords {
		s.startSnapshot()
	}
	e.Done(e)
	s.kick()
}

// fail stops the store: a failed write or sync of the log leaves its
// durable content unknown.
func (s *Store) fail(err error) {
	s.fatal = err
	s.stage = stageIdle
	s.logger.Error("metadata store stopped", "error", err)
	if e := s.current; e != nil {
		s.current = nil
		e.Err = err
		e.Done(e)
	}
	s.kick()
}

func (s *Store) path(name string) string { return filepath.Join(s.directory, name) }

// Close closes the log and directory files once the queue is empty; done
// runs once.
func (s *Store) Close(done func(error)) {
	invariant.Assert(s.current == nil && s.first == nil && s.stage == stageIdle, "metadata closes when idle")
	remaining := 2
	closed := func(op *engine.Op) {
		remaining--
		if remaining == 0 {
			done(op.Err)
		}
	}
	s.storage.Submit(&engine.Op{Code: engine.OpClose, File: s.logFile, Callback: closed})
	s.storage.Submit(&engine.Op{Code: engine.OpClose, File: s.directoryFile, Callback: closed})
}
