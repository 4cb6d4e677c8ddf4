// Package enginetest holds fakes for engine tests: a crashable in-memory
// Storage with seeded completion order, an error injector and crash
// clones, and a batch builder. Production code never imports it.
package enginetest

import (
	"bytes"
	"math/rand/v2"
	"path"
	"sort"
	"strings"
	"syscall"
	"unsafe"

	"github.com/whippetio/whippet/engine"
)

// MemStorage is an engine.Storage over in-memory files that tells synced
// from unsynced bytes. Ops take effect when they complete, in a seeded
// random order among those in flight. Crash returns a clone that keeps
// the synced state plus a seeded share of the unsynced writes (whole,
// torn at a block boundary, or lost) and of unsynced directory changes.
type MemStorage struct {
	random  *rand.Rand
	files   map[string]*memFile // the current namespace
	durable map[string]*memFile // the namespace as of each directory's last sync
	handles map[engine.File]handle
	next    engine.File
	queue   []*engine.Op
	// submitted holds what each queued write carried at Submit: the
	// bytes must not change before the write completes (the kernel may
	// read them at any moment in between).
	submitted map[*engine.Op][]byte
	// Inject, when set, may fail an op as it completes: a non-nil error is
	// reported and the op has no effect.
	Inject func(op *engine.Op) error
	// Hold, when set, keeps the ops it returns true for in flight: Run
	// completes only the others, so a test decides when they complete.
	Hold func(op *engine.Op) bool
	// Syncs counts completed file syncs; Writes counts completed writes
	// per path; Kicked counts Kick calls.
	Syncs  int
	Writes map[string]int
	Kicked int
	// NoKick hides the engine.Kicker capability: partitions then write
	// whole groups only, as on a storage that runs ops inside Submit.
	NoKick bool
	// FilesLimit, when positive, fails an open with EMFILE while that many
	// handles are open (the process's RLIMIT_NOFILE). OpenPeak is the most
	// handles ever open at once.
	FilesLimit int
	OpenPeak   int
}

type memFile struct {
	data    []byte
	synced  []byte
	changes []change // since the last sync, in order
}

type change struct {
	truncate bool
	// allocate grows the file to position with zeros, never shrinks it.
	allocate bool
	position int64
	data     []byte
}

type handle struct {
	path      string
	file      *memFile
	direct    bool
	directory bool
}

// NewMemStorage returns an empty storage whose completion order and
// crashes draw from seed.
func NewMemStorage(seed uint64) *MemStorage {
	return &MemStorage{
		random:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		files:     make(map[string]*memFile),
		durable:   make(map[string]*memFile),
		handles:   make(map[engine.File]handle),
		Writes:    make(map[string]int),
		submitted: make(map[*engine.Op][]byte),
		next:      3,
	}
}

// Submit queues op; it completes in a later Run.
func (s *MemStorage) Submit(op *engine.Op) {
	if op.Callback == nil {
		panic("enginetest: op without callback")
	}
	if op.Code == engine.OpWrite {
		s.submitted[op] = append([]byte(nil), op.Buffer...)
	}
	s.queue = append(s.queue, op)
}

// Kicks reports the engine.Kicker capability (see NoKick).
func (s *MemStorage) Kicks() bool { return !s.NoKick }

// Kick counts the call: queued ops complete in Run, as ever, so a test
// decides whether a piece completes before the rest of its batch.
func (s *MemStorage) Kick() { s.Kicked++ }

// OpenFiles is the number of handles open now.
func (s *MemStorage) OpenFiles() int { return len(s.handles) }

// Pending is the number of ops in flight.
func (s *MemStorage) Pending() int { return len(s.queue) }

// PendingOps is the number of ops of code in flight.
func (s *MemStorage) PendingOps(code engine.OpCode) int {
	count := 0
	for _, op := range s.queue {
		if op.Code == code {
			count++
		}
	}
	return count
}

// Names lists the files in directory, sorted.
func (s *MemStorage) Names(directory string) []string { return s.list(directory, nil) }

// Run completes up to countMax ops (and the ops their callbacks submit),
// picking each from those in flight at random; it returns how many ran.
func (s *MemStorage) Run(countMax int) int {
	done := 0
	for done < countMax && len(s.queue) > 0 {
		index := s.pick()
		if index < 0 {
			break // every op in flight is held
		}
		op := s.queue[index]
		s.queue[index] = s.queue[len(s.queue)-1]
		s.queue = s.queue[:len(s.queue)-1]
		if op.Code == engine.OpWrite {
			if !bytes.Equal(s.submitted[op], op.Buffer) {
				panic("enginetest: a write's bytes changed while it was in flight")
			}
			delete(s.submitted, op)
		}
		op.Result, op.Err = 0, nil
		if s.Inject != nil {
			op.Err = s.Inject(op)
		}
		if op.Err == nil {
			s.execute(op)
		}
		done++
		op.Callback(op)
	}
	return done
}

// pick returns the index of a random op in flight that is not held, or -1.
func (s *MemStorage) pick() int {
	if s.Hold == nil {
		return s.random.IntN(len(s.queue))
	}
	free := 0
	for _, op := range s.queue {
		if !s.Hold(op) {
			free++
		}
	}
	if free == 0 {
		return -1
	}
	chosen := s.random.IntN(free)
	for index, op := range s.queue {
		if !s.Hold(op) {
			if chosen == 0 {
				return index
			}
			chosen--
		}
	}
	panic("enginetest: a free op was counted")
}

func (s *MemStorage) execute(op *engine.Op) {
	switch op.Code {
	case engine.OpOpen:
		s.open(op)
	case engine.OpClose:
		if _, ok := s.handles[op.File]; !ok {
			op.Err = syscall.EBADF
		}
		delete(s.handles, op.File)
	case engine.OpRead:
		s.read(op)
	case engine.OpWrite:
		s.write(op)
	case engine.OpSync:
		s.sync(op)
	case engine.OpSize:
		h, err := s.handle(op, false)
		if err == nil {
			op.Result = int64(len(h.file.data))
		}
	case engine.OpTruncate:
		s.truncate(op)
	case engine.OpAllocate:
		s.allocate(op)
	case engine.OpRemove:
		delete(s.files, op.Path)
	case engine.OpMkdir:
	case engine.OpList:
		op.Names = s.list(op.Path, op.Names)
	case engine.OpRename:
		file, ok := s.files[op.Path]
		if !ok {
			op.Err = syscall.ENOENT
			return
		}
		s.files[op.Target] = file
		delete(s.files, op.Path)
	default:
		op.Err = syscall.ENOSYS
	}
}

func (s *MemStorage) open(op *engine.Op) {
	if s.FilesLimit > 0 && len(s.handles) >= s.FilesLimit {
		op.Err = syscall.EMFILE
		return
	}
	defer func() { s.OpenPeak = max(s.OpenPeak, len(s.handles)) }()
	if op.Flags&engine.OpenDirectory != 0 {
		s.handles[s.next] = handle{path: op.Path, directory: true}
		op.Result = int64(s.next)
		s.next++
		return
	}
	file, ok := s.files[op.Path]
	if !ok {
		if op.Flags&engine.OpenCreate == 0 {
			op.Err = syscall.ENOENT
			return
		}
		file = &memFile{}
		s.files[op.Path] = file
	}
	s.handles[s.next] = handle{path: op.Path, file: file, direct: op.Flags&engine.OpenDirect != 0}
	op.Result = int64(s.next)
	s.next++
}

func (s *MemStorage) handle(op *engine.Op, io bool) (handle, error) {
	h, ok := s.handles[op.File]
	if !ok || h.directory && io {
		op.Err = syscall.EBADF
		return h, op.Err
	}
	if io && h.direct && !directAligned(op) {
		op.Err = syscall.EINVAL
		return h, op.Err
	}
	return h, nil
}

func directAligned(op *engine.Op) bool {
	if op.Position%4096 != 0 || len(op.Buffer)%4096 != 0 {
		return false
	}
	return len(op.Buffer) == 0 || uintptr(unsafe.Pointer(&op.Buffer[0]))%4096 == 0
}

func (s *MemStorage) read(op *engine.Op) {
	h, err := s.handle(op, true)
	if err != nil {
		return
	}
	if op.Position < int64(len(h.file.data)) {
		op.Result = int64(copy(op.Buffer, h.file.data[op.Position:]))
	}
}

func (s *MemStorage) write(op *engine.Op) {
	h, err := s.handle(op, true)
	if err != nil {
		return
	}
	s.Writes[h.path]++
	h.file.apply(change{position: op.Position, data: op.Buffer})
	h.file.changes = append(h.file.changes, change{position: op.Position, data: append([]byte(nil), op.Buffer...)})
	op.Result = int64(len(op.Buffer))
}

func (s *MemStorage) truncate(op *engine.Op) {
	h, err := s.handle(op, false)
	if err != nil {
		return
	}
	c := change{truncate: true, position: op.Position}
	h.file.apply(c)
	h.file.changes = append(h.file.changes, c)
}

func (s *MemStorage) allocate(op *engine.Op) {
	h, err := s.handle(op, false)
	if err != nil {
		return
	}
	c := change{allocate: true, position: op.Position}
	h.file.apply(c)
	h.file.changes = append(h.file.changes, c)
}

func (f *memFile) apply(c change) {
	if c.allocate {
		if c.position > int64(len(f.data)) {
			f.data = append(f.data, make([]byte, c.position-int64(len(f.data)))...)
		}
		return
	}
	if c.truncate {
		if c.position <= int64(len(f.data)) {
			f.data = f.data[:c.position]
			return
		}
		f.data = append(f.data, make([]byte, c.position-int64(len(f.data)))...)
		return
	}
	end := c.position + int64(len(c.data))
	if end > int64(len(f.data)) {
		f.data = append(f.data, make([]byte, end-int64(len(f.data)))...)
	}
	copy(f.data[c.position:], c.data)
}

func (s *MemStorage) sync(op *engine.Op) {
	h, err := s.handle(op, false)
	if err != nil {
		return
	}
	s.Syncs++
	if h.directory {
		s.syncDirectory(h.path)
		return
	}
	h.file.synced = append(h.file.synced[:0], h.file.data...)
	h.file.changes = nil
}

func (s *MemStorage) syncDirectory(directory string) {
	for name := range s.durable {
		if path.Dir(name) == directory {
			delete(s.durable, name)
		}
	}
	for name, file := range s.files {
		if path.Dir(name) == directory {
			s.durable[name] = file
		}
	}
}

func (s *MemStorage) list(directory string, names []string) []string {
	prefix := strings.TrimSuffix(directory, "/") + "/"
	for name := range s.files {
		if strings.HasPrefix(name, prefix) && !strings.Contains(name[len(prefix):], "/") {
			names = append(names, name[len(prefix):])
		}
	}
	sort.Strings(names)
	return names
}

// Crash returns the storage a restart would find: synced bytes, plus a
// seeded share of unsynced writes and directory changes. Ops in flight are
// lost. The clone draws from seed.
func (s *MemStorage) Crash(seed uint64) *MemStorage {
	clone := NewMemStorage(seed)
	random := clone.random
	names := make([]string, 0, len(s.files)+len(s.durable))
	for name := range s.files {
		names = append(names, name)
	}
	for name := range s.durable {
		if _, ok := s.files[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		current, durable := s.files[name], s.durable[name]
		file := current
		if current != durable && random.IntN(2) == 0 {
			file = durable // the unsynced create or remove did not reach the disk
		}
		if file == nil {
			continue
		}
		kept := file.crashContent(random)
		clone.files[name] = kept
		clone.durable[name] = kept
	}
	return clone
}

// crashContent keeps the synced bytes and applies each unsynced change
// whole, torn at a block boundary, or not at all.
func (f *memFile) crashContent(random *rand.Rand) *memFile {
	kept := &memFile{data: append([]byte(nil), f.synced...)}
	for _, c := range f.changes {
		switch random.IntN(3) {
		case 0:
			kept.apply(c)
		case 1:
			if !c.truncate && !c.allocate && len(c.data) > 4096 {
				blocks := random.IntN(len(c.data) / 4096)
				kept.apply(change{position: c.position, data: c.data[:blocks*4096]})
			}
		}
	}
	kept.synced = append([]byte(nil), kept.data...)
	return kept
}

// File returns a copy of the current content of path.
func (s *MemStorage) File(name string) ([]byte, bool) {
	file, ok := s.files[name]
	if !ok {
		return nil, false
	}
	return append([]byte(nil), file.data...), true
}

// SetFile replaces the content of path (synced), to plant damage.
func (s *MemStorage) SetFile(name string, data []byte) {
	file := &memFile{data: append([]byte(nil), data...), synced: append([]byte(nil), data...)}
	s.files[name] = file
	s.durable[name] = file
}

// Flip inverts the byte at position of path in place, to plant damage
// that handles already open see (SetFile replaces the file instead).
func (s *MemStorage) Flip(name string, position int) {
	file := s.files[name]
	file.data[position] ^= 0xff
	if position < len(file.synced) {
		file.synced[position] ^= 0xff
	}
}

// Remove deletes path durably, to plant a missing file.
func (s *MemStorage) Remove(name string) {
	delete(s.files, name)
	delete(s.durable, name)
}
