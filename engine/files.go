package engine

import (
	"errors"
	"fmt"
	"log/slog"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// FileTable is a Storage that keeps at most OpenMax files of its inner
// storage open, however many files its callers hold open. A File it
// returns is a handle of the table: the inner file behind it is opened at
// OpOpen, closed least recently used when another file needs the room,
// and reopened by path (without OpenCreate) by the next op on the handle.
// A partition holds a handle per segment file, its offsets file and its
// directory, so a shard with thousands of partitions keeps open only the
// files in use.
//
// Rules the table keeps (doc.go invariant 10):
//   - the inner storage never holds more than OpenMax files open, counting
//     opens and closes in flight;
//   - a file with an op in flight is never closed, and ops on one handle
//     start in submission order;
//   - an op that needs a descriptor while all are busy waits, first come
//     first served, for the next op in flight to complete (no op holds one
//     descriptor while waiting for another, so the wait ends); it never
//     fails for want of room;
//   - the process running out of descriptors (EMFILE, ENFILE: connections
//     took them) closes an idle file and retries; with none of its own
//     left to close the op fails with ErrTooManyOpenFiles.
//
// fdatasync on a reopened descriptor makes durable what earlier
// descriptors of the file wrote: on Linux dirty data and metadata belong
// to the inode, and a writeback error nobody saw is reported to the next
// fsync whichever descriptor issues it. A file system that reports such
// an error at close instead (NFS) has it kept: the handle's next
// fdatasync fails with it.
//
// A path removed or replaced (OpRemove, OpRename onto it) while a handle
// to it is live cannot be reopened: its descriptor then stays open until
// the handle closes, and a handle whose descriptor was already closed
// fails its ops with ErrFileRemoved. Callers close before removing.
//
// Completions of ops the table answers itself (closing a handle with no
// descriptor, refusing a bad handle) are delivered by Poll; Wake asks the
// owner for a Poll. Only the owning shard's thread uses a FileTable.
type FileTable struct {
	inner   Storage
	options FileTableOptions
	logger  *slog.Logger
	// slots[0] is unused: File 0 is no handle.
	slots []fileSlot
	free  []int32
	// paths maps a path to the first live slot opened on it.
	paths map[string]int32
	// lruHead is the most recently used idle open slot, lruTail the least.
	lruHead int32
	lruTail int32
	// held counts inner files open, opening or closing: at most OpenMax.
	held int
	// closing counts evictions in flight.
	closing int
	// starved are shut slots with waiters, waiting for a descriptor.
	starved     []int32
	starvedNext int
	// exhausted is set by an open the process refused (EMFILE): starved
	// slots then wait for a close instead of retrying at once.
	exhausted  bool
	waiting    int
	ready      []*Op
	delivering []*Op
	pool       []*fileOp
	stats      FileTableStats
	// warnedBudget and warnedExhausted: each reason to close is logged once.
	warnedBudget    bool
	warnedExhausted bool
}

// FileTableOptions configure a FileTable.
type FileTableOptions struct {
	// OpenMax bounds the inner storage's open files (at least 1).
	OpenMax int
	// Wake is called when a completion waits for Poll (the shard arms a
	// delivery at its next loop turn); nil when the owner polls anyway.
	Wake   func()
	Logger *slog.Logger
}

// FileTableStats counts what the table did, for metrics and tests.
type FileTableStats struct {
	// Open is the inner files open, opening or closing; Handles the live
	// handles.
	Open    int
	Handles int
	// OpenPeak is the most inner files ever held at once.
	OpenPeak int
	// Evictions counts files closed to make room; Reopens the opens of a
	// handle after its first; Waits the ops that waited for a descriptor.
	Evictions uint64
	Reopens   uint64
	Waits     uint64
	// Exhausted counts opens the process refused with EMFILE or ENFILE.
	Exhausted uint64
}

// Errors of the FileTable.
var (
	// ErrTooManyOpenFiles: the process has no descriptor left (EMFILE,
	// ENFILE) and the table holds none it could close; errors.Is also
	// matches the errno.
	ErrTooManyOpenFiles = errors.New("engine: too many open files")
	// ErrFileRemoved: the handle's path was removed or replaced while its
	// descriptor was closed, so the file cannot be reopened.
	ErrFileRemoved = errors.New("engine: file removed while its handle was open")
	// ErrTooManyHandles: the table holds fileHandlesMax handles.
	ErrTooManyHandles = errors.New("engine: too many file handles")
)

type slotState uint8

const (
	slotFree slotState = iota
	// slotShut: a live handle without an inner file.
	slotShut
	slotOpening
	slotOpen
	slotClosing
)

// fileSlot is one handle's state.
type fileSlot struct {
	path  string
	flags OpenFlags
	inner File
	state slotState
	// generation tells a reused slot's handles apart (fileGenerationBits).
	generation uint8
	// detached: the path was removed or replaced; the file is kept open
	// until the handle closes (never evicted) or, if shut, is lost.
	detached bool
	inLRU    bool
	starved  bool
	// opened is set once the first open succeeded (later ones reopen).
	opened bool
	pins   int32
	// lost is the error of an eviction's close (a writeback the file
	// system reported there, and may not report again): the handle's next
	// fdatasync fails with it.
	lost error
	prev int32
	next int32
	// samePath links the live slots opened on one path.
	samePath int32
	waitHead *fileOp
	waitTail *fileOp
}

// fileOp carries one op to the inner storage: a caller's (outer set) or
// the table's own open or close of a slot.
type fileOp struct {
	table *FileTable
	inner Op
	outer *Op
	slot  int32
	next  *fileOp
}

// NewFileTable returns a table over inner holding at most options.OpenMax
// of its files open.
func NewFileTable(inner Storage, options FileTableOptions) *FileTable {
	invariant.Assert(options.OpenMax >= 1, "a file table holds at least one file")
	logger := options.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &FileTable{
		inner: inner, options: options, logger: logger,
		slots: make([]fileSlot, 1, 64),
		paths: make(map[string]int32),
		ready: make([]*Op, 0, 64), delivering: make([]*Op, 0, 64),
	}
}

// OpenMax is the table's budget of inner files.
func (t *FileTable) OpenMax() int { return t.options.OpenMax }

// Stats returns the table's counters.
func (t *FileTable) Stats() FileTableStats {
	stats := t.stats
	stats.Open = t.held
	stats.Handles = len(t.slots) - 1 - len(t.free)
	return stats
}

// Pending counts the ops not completed that no inner op carries: those
// waiting for a descriptor and the completions waiting for Poll.
func (t *FileTable) Pending() int { return t.waiting + len(t.ready) }

// Waiting counts the ops waiting for a descriptor (they start when an op
// in flight completes, not at Poll).
func (t *FileTable) Waiting() int { return t.waiting }

// Poll delivers up to countMax completions the table answered itself,
// including those their callbacks cause, and returns how many ran.
func (t *FileTable) Poll(countMax int) int {
	delivered := 0
	for delivered < countMax && len(t.ready) > 0 {
		t.delivering = append(t.delivering[:0], t.ready...)
		clear(t.ready)
		t.ready = t.ready[:0]
		for index, op := range t.delivering {
			if delivered == countMax {
				t.ready = append(t.ready, t.delivering[index:]...)
				break
			}
			delivered++
			op.Callback(op)
		}
		clear(t.delivering)
	}
	return delivered
}

// Submit starts op; its Callback runs later, exactly once.
func (t *FileTable) Submit(op *Op) {
	invariant.Assert(op.Callback != nil, "file table op has a callback")
	op.Result, op.Err = 0, nil
	switch op.Code {
	case OpOpen:
		t.open(op)
	case OpClose, OpRead, OpWrite, OpSync, OpSize, OpTruncate, OpAllocate:
		t.onFile(op)
	case OpRemove, OpRename:
		w := t.get(op, 0)
		t.inner.Submit(&w.inner)
	default:
		t.inner.Submit(op) // mkdir and list touch no handle
	}
}

// complete answers op at the next Poll.
func (t *FileTable) complete(op *Op, err error) {
	op.Err = err
	if len(t.ready) == 0 && t.options.Wake != nil {
		t.options.Wake()
	}
	t.ready = append(t.ready, op)
}

func (t *FileTable) open(op *Op) {
	slot, err := t.allocate(op.Path, op.Flags)
	if err != nil {
		t.complete(op, err)
		return
	}
	t.enqueue(slot, t.get(op, slot))
	t.wantDescriptor(slot)
}

// onFile runs or queues an op on a handle.
func (t *FileTable) onFile(op *Op) {
	slot, ok := t.lookup(op.File)
	if !ok {
		t.complete(op, fmt.Errorf("engine: file handle %d: %w", op.File, unix.EBADF))
		return
	}
	s := &t.slots[slot]
	if op.Code == OpClose && s.state == slotShut && s.waitHead == nil {
		t.release(slot)
		t.complete(op, nil)
		return
	}
	if s.detached && s.state == slotShut && op.Code != OpClose {
		t.complete(op, fmt.Errorf("%w: %s", ErrFileRemoved, s.path))
		return
	}
	w := t.get(op, slot)
	// A file with ops in flight while others wait for a descriptor takes
	// no new op: it drains, is closed, and reopens after them (unpin).
	yields := s.pins > 0 && t.roomShort()
	if s.state == slotOpen && s.waitHead == nil && op.Code != OpClose && !yields {
		t.pin(slot)
		w.inner.File = s.inner
		t.inner.Submit(&w.inner)
		return
	}
	t.enqueue(slot, w)
	switch s.state {
	case slotOpen:
		if !yields {
			t.runWaiters(slot)
		}
	case slotShut:
		t.wantDescriptor(slot)
	}
}

// get takes a carrier for outer (nil: the table's own op) on slot.
func (t *FileTable) get(outer *Op, slot int32) *fileOp {
	var w *fileOp
	if last := len(t.pool) - 1; last >= 0 {
		w = t.pool[last]
		t.pool[last] = nil
		t.pool = t.pool[:last]
	} else {
		w = &fileOp{table: t}
		w.inner.Callback = w.done
	}
	w.outer, w.slot, w.next = outer, slot, nil
	if outer != nil {
		w.inner.Code, w.inner.Flags, w.inner.Path, w.inner.Target = outer.Code, outer.Flags, outer.Path, outer.Target
		w.inner.Buffer, w.inner.Position, w.inner.Names = outer.Buffer, outer.Position, outer.Names
		w.inner.InPlace = outer.InPlace
	}
	return w
}

func (t *FileTable) put(w *fileOp) {
	w.outer, w.next = nil, nil
	w.inner.Buffer, w.inner.Names, w.inner.Path, w.inner.Target = nil, nil, "", ""
	w.inner.InPlace = false
	if len(t.pool) < fileOpsPooledMax {
		t.pool = append(t.pool, w)
	}
}

// done completes an inner op: the table's own open or close, or a
// caller's op it carried.
func (w *fileOp) done(inner *Op) {
	t := w.table
	outer := w.outer
	switch {
	case outer == nil && inner.Code == OpOpen:
		t.openDone(w)
		return
	case inner.Code == OpClose:
		t.closeDone(w)
		return
	case outer.Code == OpRemove || outer.Code == OpRename:
		if inner.Err == nil {
			t.pathChanged(outer)
		}
	default:
		if s := &t.slots[w.slot]; outer.Code == OpSync && s.lost != nil {
			if inner.Err == nil {
				inner.Err = fmt.Errorf("engine: closing %s to make room: %w", s.path, s.lost)
			}
			s.lost = nil
		}
		t.unpin(w.slot)
	}
	outer.Result, outer.Err = inner.Result, inner.Err
	t.put(w)
	outer.Callback(outer)
}

func isOutOfDescriptors(err error) bool {
	return errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE)
}
