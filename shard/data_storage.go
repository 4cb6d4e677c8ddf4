package shard

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
)

// Storage is engine.Storage over one shard: reads, writes and fdatasyncs
// of data files go through the shard's backend (io_uring or epoll) as
// FileOps; the rare namespace ops (open, close, size, truncate, mkdir,
// list, rename, remove, directory syncs) run as blocking system calls on
// the shard's thread through engine.DirectStorage and complete at the next
// loop turn.
//
// Why namespace ops are synchronous: the runtime's backend offers no
// OPENAT, and these ops run at partition open, segment roll, retention and
// delete, never per message; on a local file system each takes
// microseconds. The data path (appends, their fdatasync, polls from disk)
// never blocks the shard.
//
// A read or write the backend moved only part of (a bounce buffer shorter
// than the request, when the engine's buffer is not ring memory) is
// resumed from where it stopped, so the engine sees whole transfers, short
// only at end of file. Bounce buffers move whole 4096-byte blocks, so a
// read that moved a partial block stopped at the end of the file. A shard at fileOpsInFlightMax holds further ops and
// starts them as slots free up. Only the shard's thread uses a Storage.
//
// Every op first passes the shard's engine.FileTable, so the files its
// partitions, metadata and replica logs hold open never exceed the
// shard's share of the open-files budget (DataOptions.OpenFilesMax): the
// Files the engine sees are the table's handles, and the descriptors
// behind them are opened, closed and reopened as the table decides.
type Storage struct {
	files  *engine.FileTable
	shard  *Shard
	direct *engine.DirectStorage
	// kicker is the shard's backend when it can submit before the turn's
	// Wait (io_uring), else nil.
	kicker  submitter
	free    []*storageOp
	waiting []*storageOp // refused with ErrFileOpsFull, in submission order
	failed  []*storageOp // refused by a closed backend, to complete next turn

	armed     bool // a deliver timer is pending
	deliverFn func(time.Time)
	inflight  int    // ops started on the backend and not yet completed
	resumed   uint64 // partial transfers resumed (tests, metrics)
}

var (
	_ engine.Storage = (*Storage)(nil)
	_ engine.Kicker  = (*Storage)(nil)
)

// storageOp pairs an engine op with the shard FileOp carrying it.
type storageOp struct {
	file    FileOp
	op      *engine.Op
	storage *Storage
	moved   int // bytes transferred so far
}

// NewStorage returns the Storage of sh holding at most openFilesMax files
// open; call it on sh's thread.
func NewStorage(sh *Shard, openFilesMax int) *Storage {
	s := &Storage{shard: sh, direct: engine.NewDirectStorage()}
	s.kicker, _ = sh.backend.(submitter)
	s.deliverFn = func(time.Time) { s.deliver() }
	s.files = engine.NewFileTable(descriptorStorage{s}, engine.FileTableOptions{
		OpenMax: openFilesMax, Wake: s.arm, Logger: sh.logger.With("shard", sh.id)})
	return s
}

// Submit starts op; its Callback runs on the shard's thread in a later
// loop turn (or later in this one, never inside Submit).
func (s *Storage) Submit(op *engine.Op) { s.files.Submit(op) }

// ReadAt reads a file synchronously (engine.BlockingReader, for
// partition snapshots) through the file table.
func (s *Storage) ReadAt(file engine.File, buffer []byte, position int64) (int, error) {
	return s.files.ReadAt(file, buffer, position)
}

// Files returns the shard's file table (its counters).
func (s *Storage) Files() *engine.FileTable { return s.files }

// descriptorStorage is the Storage under the file table: its Files are
// descriptors.
type descriptorStorage struct{ s *Storage }

func (d descriptorStorage) Submit(op *engine.Op) { d.s.submitDescriptor(op) }

func (s *Storage) submitDescriptor(op *engine.Op) {
	invariant.Assert(op.Callback != nil, "storage op has a callback")
	if !s.onBackend(op) {
		s.direct.Submit(op)
		s.arm()
		return
	}
	so := s.get()
	so.op, so.moved = op, 0
	op.Result, op.Err = 0, nil
	if len(s.waiting) > 0 {
		s.waiting = append(s.waiting, so) // behind the held ones
		s.arm()
		return
	}
	s.start(so)
}

// submitter is a backend that can hand queued ops to the kernel before
// the turn's Wait (io_uring); epoll runs file ops inside their start.
type submitter interface{ Submit() error }

// Kicks reports whether Kick starts file ops before the turn ends
// (engine.Kicker).
func (s *Storage) Kicks() bool { return s.kicker != nil }

// Kick submits the file ops started so far without waiting, so a
// partition's write runs while the turn goes on (engine.Kicker).
func (s *Storage) Kick() {
	if s.kicker != nil {
		// A refused submit (a full completion queue) leaves the ops
		// queued: the turn's Wait submits them, as without Kick.
		_ = s.kicker.Submit()
	}
}

// Pending reports the ops not yet completed; any count above zero keeps
// a stopping shard pumping.
func (s *Storage) Pending() int {
	return s.inflight + len(s.waiting) + len(s.failed) + s.direct.Pending() + s.files.Pending()
}

// onBackend tells data-path ops (the backend's) from namespace ops.
func (s *Storage) onBackend(op *engine.Op) bool {
	switch op.Code {
	case engine.OpRead, engine.OpWrite, engine.OpAllocate:
		return true
	case engine.OpSync:
		return op.Flags&engine.OpenDirectory == 0
	}
	return false
}

func (s *Storage) get() *storageOp {
	if last := len(s.free) - 1; last >= 0 {
		so := s.free[last]
		s.free[last] = nil
		s.free = s.free[:last]
		return so
	}
	so := &storageOp{storage: s}
	so.file.Done = so.fileDone
	return so
}

func (s *Storage) put(so *storageOp) {
	so.op = nil
	if len(s.free) < fileOpsInFlightMax {
		s.free = append(s.free, so)
	}
}

// start hands so to the backend, or holds it when the shard has no
// file-op slot, or queues its failure for the next turn.
func (s *Storage) start(so *storageOp) {
	switch err := s.begin(so); err {
	case nil:
	case ErrFileOpsFull:
		s.waiting = append(s.waiting, so)
		s.arm()
	default:
		so.op.Err = err
		s.failed = append(s.failed, so)
		s.arm()
	}
}

func (s *Storage) begin(so *storageOp) error {
	op := so.op
	fd := int(op.File)
	var err error
	switch op.Code {
	case engine.OpRead:
		err = s.shard.ReadAt(fd, op.Buffer[so.moved:], op.Position+int64(so.moved), &so.file)
	case engine.OpWrite:
		err = s.shard.WriteAt(fd, op.Buffer[so.moved:], op.Position+int64(so.moved), op.InPlace, &so.file)
	case engine.OpSync:
		err = s.shard.Fdatasync(fd, &so.file)
	case engine.OpAllocate:
		err = s.shard.Fallocate(fd, op.Position, &so.file)
	default:
		invariant.Assert(false, "backend op is a read, write, sync or allocate")
	}
	if err == nil {
		s.inflight++
	}
	return err
}

// fileDone runs when the backend completes so's current transfer.
func (so *storageOp) fileDone(file *FileOp) {
	s := so.storage
	op := so.op
	s.inflight--
	invariant.Assert(s.inflight >= 0, "storage in-flight count is not negative")
	if file.Err == nil && op.Code != engine.OpSync && op.Code != engine.OpAllocate {
		invariant.Assert(file.Result >= 0, "a transfer moves a non-negative count")
		so.moved += file.Result
		// A read that stopped short is at end of file, unless it moved
		// whole blocks (a bounce buffer shorter than the request moves
		// whole blocks; the end of a file need not be on one).
		partial := file.Result > 0 && (op.Code == engine.OpWrite || file.Result%4096 == 0)
		if so.moved < len(op.Buffer) {
			if partial {
				s.resumed++
				s.start(so) // resume a partial transfer
				s.startWaiting()
				return
			}
			if op.Code == engine.OpWrite {
				file.Err = unix.EIO // a write that moves nothing cannot finish
			}
		}
	}
	op.Result, op.Err = int64(so.moved), file.Err
	if file.Err != nil {
		op.Result = 0
	}
	s.put(so)
	s.startWaiting()
	op.Callback(op)
}

// startWaiting starts held ops, oldest first, while the shard has
// file-op slots.
func (s *Storage) startWaiting() {
	started := 0
	for ; started < len(s.waiting); started++ {
		so := s.waiting[started]
		err := s.begin(so)
		if err == ErrFileOpsFull {
			break
		}
		if err != nil {
			so.op.Err = err
			s.failed = append(s.failed, so)
			s.arm()
		}
	}
	if started == 0 {
		return
	}
	rest := copy(s.waiting, s.waiting[started:])
	clear(s.waiting[rest:])
	s.waiting = s.waiting[:rest]
}

// arm schedules a delivery at the next loop turn.
func (s *Storage) arm() {
	if s.armed {
		return
	}
	if _, err := s.shard.After(0, s.deliverFn); err != nil {
		s.shard.fail(err) // a full timer table leaves completions undelivered
		return
	}
	s.armed = true
}

// deliver completes the namespace ops, retries held ops and fails those
// the backend refused. Bounded: each pass delivers what is queued now.
func (s *Storage) deliver() {
	s.armed = false
	s.direct.Poll(storageDeliverMax)
	s.files.Poll(storageDeliverMax)
	s.startWaiting()
	failed := s.failed
	s.failed = nil
	for _, so := range failed {
		op := so.op
		op.Result = 0
		s.put(so)
		op.Callback(op)
	}
	if s.direct.Pending() > 0 || len(s.failed) > 0 || len(s.waiting) > 0 || s.files.Pending() > s.files.Waiting() {
		s.arm()
	}
}

// deriveOpenFiles raises the soft open-file limit to the hard one and,
// when OpenFilesMax is 0, sets it to what the limit leaves after
// OpenFilesReserve; it logs the budget once.
func (o *DataOptions) deriveOpenFiles() error {
	if o.OpenFilesMax < 0 || o.OpenFilesReserve < 0 {
		return fmt.Errorf("shard: open files max %d and reserve %d must not be negative", o.OpenFilesMax, o.OpenFilesReserve)
	}
	limit, err := engine.RaiseOpenFilesLimit()
	if err != nil {
		o.Logger.Warn("shard: open files limit", "error", err.Error())
	}
	if o.OpenFilesReserve == 0 {
		o.OpenFilesReserve = dataOpenFilesReserveDefault
	}
	derived := o.OpenFilesMax == 0
	if derived {
		o.OpenFilesMax = engine.OpenFilesBudget(limit, o.OpenFilesReserve)
	}
	if limit > 0 && uint64(o.OpenFilesMax) > limit {
		o.Logger.Warn("shard: open_files_max is above the process's open-file limit; opens past the limit close idle files and retry",
			"open_files_max", o.OpenFilesMax, "rlimit_nofile", limit)
	}
	o.Logger.Info("shard: open files budget", "open_files_max", o.OpenFilesMax, "derived", derived,
		"rlimit_nofile", limit, "reserve", o.OpenFilesReserve)
	return nil
}

// openFilesReserve is the room a derived open-files budget leaves for
// connectionsMax connections plus the rest of the process (0: the data
// plane's default).
func openFilesReserve(connectionsMax int) int {
	if connectionsMax <= 0 {
		return 0
	}
	return connectionsMax + dataOpenFilesProcessReserve
}
