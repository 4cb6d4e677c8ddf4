package replicalog

import (
	"errors"
	"log/slog"
	"path/filepath"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
)

// Files of a log's directory.
const (
	journalName = "journal"
	compactName = "journal.compact"
)

// ErrClosed rejects a Persist after Close.
var ErrClosed = errors.New("replicalog: closed")

// Loaded is what Open found. The slices belong to the caller.
type Loaded struct {
	// HardState and App are the last persisted values, nil when never set.
	HardState []byte
	App       []byte
	// Slots has one entry per journal slot: the latest message written to
	// it, nil when never written or erased.
	Slots [][]byte
	// TornBytes counts journal bytes truncated at open: writes of a Persist
	// that never completed.
	TornBytes int64
}

// Write is one journal slot write; an empty Message erases the slot.
type Write struct {
	Slot    int
	Op      uint64
	Message []byte
}

// Persist is one batch of durable changes. The caller owns it, and every
// buffer it references, until Done runs; none may be modified before.
type Persist struct {
	// HardState replaces the hard state; nil leaves it unchanged.
	HardState []byte
	// App replaces the application record; nil leaves it unchanged.
	App    []byte
	Writes []Write
	// Sync makes Done wait for fdatasync of everything written so far.
	Sync bool
	// Done runs once every write completed (and was fdatasynced when
	// Sync), with nil, ErrClosed, or a *engine.FatalError after which the
	// log accepts nothing more.
	Done func(error)
	next *Persist
}

// Log is one replication group's durable journal, hard state and
// application record in one directory. It is a state machine driven by
// Storage completions on the caller's thread; not safe for concurrent use.
type Log struct {
	storage   engine.Storage
	directory string
	slotCount int
	logger    *slog.Logger

	directoryFile engine.File
	journalFile   engine.File

	// generation is the journal file's; journalBytes its written length;
	// syncedBytes the length its last completed fdatasync covered.
	generation   uint64
	journalBytes int64
	syncedBytes  int64
	// slots locates each slot's latest record in the journal file.
	slots []slotRecord
	// liveBytes is the file header plus every non-erased slot's record:
	// what a compaction would keep.
	liveBytes int64

	// sequence is the last superblock copy written; hardState and app the
	// current values (owned copies).
	sequence  uint64
	hardState []byte
	app       []byte
	hardSet   bool
	appSet    bool

	persist persister
	fatal   error
	closed  bool
}

type slotRecord struct {
	position int64
	bytes    int64
	op       uint64
	erased   bool
}

// Open loads (or creates) the log in directory and calls done once, with
// the log and what it holds, or with the error that refused it
// (errors.Is(err, engine.ErrCorrupt) for damage before the last durable
// point, naming file and position).
func Open(storage engine.Storage, directory string, slotCount int, done func(*Log, Loaded, error)) {
	invariant.Assert(slotCount > 0, "replicalog: slot count positive")
	invariant.Assert(slotCount <= SlotCountMax, "replicalog: slot count within SlotCountMax")
	l := &Log{
		storage: storage, directory: directory, slotCount: slotCount,
		logger: slog.Default().With("replicalog", directory),
		slots:  make([]slotRecord, slotCount), liveBytes: recordsAt,
	}
	l.persist.init(l)
	opener := &opener{l: l, done: done}
	opener.start()
}

// Persist queues p; p.Done runs once it is complete. One Persist runs at a
// time, in submission order; at most PersistQueueMax wait behind it (more
// is a caller bug). Done runs before Persist returns when there is
// nothing to write or sync, and, with the error, after a fatal error or
// Close.
func (l *Log) Persist(p *Persist) {
	invariant.Assert(p.Done != nil, "replicalog: persist has a callback")
	invariant.Assert(p.HardState == nil || len(p.HardState) <= HardStateBytesMax, "replicalog: hard state within limit")
	invariant.Assert(p.App == nil || len(p.App) <= AppBytesMax, "replicalog: app record within limit")
	for i := range p.Writes {
		invariant.Assert(p.Writes[i].Slot >= 0 && p.Writes[i].Slot < l.slotCount, "replicalog: write slot in range")
		invariant.Assert(len(p.Writes[i].Message) <= MessageBytesMax, "replicalog: message within limit")
	}
	switch {
	case l.fatal != nil:
		p.Done(l.fatal)
		return
	case l.closed:
		p.Done(ErrClosed)
		return
	}
	l.persist.enqueue(p)
}

// Err is the fatal error that stopped the log, or nil.
func (l *Log) Err() error { return l.fatal }

// JournalBytes is the journal file's length; LiveBytes what compaction
// would keep of it.
func (l *Log) JournalBytes() int64 { return l.journalBytes }

// LiveBytes is the journal header plus every live slot's record.
func (l *Log) LiveBytes() int64 { return l.liveBytes }

// Close waits for queued Persists to finish, closes the files and calls
// done once. Persists after Close fail with ErrClosed.
func (l *Log) Close(done func(error)) {
	invariant.Assert(!l.closed, "replicalog: closed twice")
	l.closed = true
	l.persist.whenIdle(func() { l.closeFiles(done) })
}

func (l *Log) closeFiles(done func(error)) {
	remaining := 2
	var first error
	closed := func(op *engine.Op) {
		remaining--
		if first == nil {
			first = op.Err
		}
		if remaining == 0 {
			done(first)
		}
	}
	for _, file := range [2]engine.File{l.journalFile, l.directoryFile} {
		l.storage.Submit(&engine.Op{Code: engine.OpClose, File: file, Callback: closed})
	}
}

// Remove deletes a closed (or never opened) log's directory and its files,
// then syncs the parent directory, and calls done once.
func Remove(storage engine.Storage, directory string, done func(error)) {
	c := &chain{storage: storage}
	c.op.Callback = c.callback
	names := []string{journalName, compactName}
	var step func(op *engine.Op)
	index := 0
	step = func(op *engine.Op) {
		if op != nil && op.Err != nil {
			done(op.Err)
			return
		}
		switch {
		case index < len(names):
			c.op.Code, c.op.Path = engine.OpRemove, filepath.Join(directory, names[index])
		case index == len(names):
			c.op.Code, c.op.Path = engine.OpRemove, directory
		case index == len(names)+1:
			c.op.Code, c.op.Path, c.op.Flags = engine.OpOpen, filepath.Dir(directory), engine.OpenDirectory
		case index == len(names)+2:
			c.op.Code, c.op.File, c.op.Path, c.op.Flags = engine.OpSync, engine.File(op.Result), "", engine.OpenDirectory
		case index == len(names)+3:
			c.op.Code = engine.OpClose
		default:
			done(nil)
			return
		}
		index++
		c.run(step)
	}
	step(nil)
}

func (l *Log) path(name string) string { return filepath.Join(l.directory, name) }

// fail stops the log: a failed write or sync leaves the durable content
// unknown, and a failed fdatasync must never be retried.
func (l *Log) fail(op *engine.Op, what, path string) {
	if l.fatal != nil {
		return
	}
	l.fatal = &engine.FatalError{Op: "replicalog " + what, Path: path, Err: op.Err}
	l.logger.Error("replication log stopped", "error", l.fatal)
}

// chain runs one op at a time, each completion calling the next step; it
// serves the rare paths (open, compaction, removal).
type chain struct {
	storage engine.Storage
	op      engine.Op
	then    func(*engine.Op)
}

func (c *chain) run(then func(*engine.Op)) {
	c.then = then
	c.storage.Submit(&c.op)
}

func (c *chain) callback(op *engine.Op) { c.then(op) }
