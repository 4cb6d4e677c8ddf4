package engine_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// tableBackend drives a FileTable over the in-memory storage.
type tableBackend struct {
	t     testing.TB
	table *engine.FileTable
	mem   *enginetest.MemStorage
}

func newTableBackend(t testing.TB, mem *enginetest.MemStorage, budget int) *tableBackend {
	return &tableBackend{t: t, mem: mem, table: engine.NewFileTable(mem, engine.FileTableOptions{OpenMax: budget, Logger: quiet})}
}

func (b *tableBackend) Submit(op *engine.Op) { b.table.Submit(op) }

// run submits op, completes it and checks its callback ran once.
func (b *tableBackend) run(op *engine.Op) *engine.Op {
	b.t.Helper()
	called := 0
	op.Callback = func(*engine.Op) { called++ }
	b.Submit(op)
	b.drain()
	if called != 1 {
		b.t.Fatalf("op %d completed %d times", op.Code, called)
	}
	return op
}

// open creates or opens path through the table.
func (b *tableBackend) open(path string) engine.File {
	b.t.Helper()
	op := b.run(&engine.Op{Code: engine.OpOpen, Path: path, Flags: engine.OpenCreate})
	if op.Err != nil {
		b.t.Fatalf("open %s: %v", path, op.Err)
	}
	return engine.File(op.Result)
}

func (b *tableBackend) drain() {
	for b.mem.Pending() > 0 || b.table.Pending() > 0 {
		if b.mem.Run(1<<20)+b.table.Poll(1<<20) == 0 {
			b.t.Fatalf("file table stuck: %d ops wait for a descriptor, stats %+v", b.table.Pending(), b.table.Stats())
		}
	}
}

// fleet is many partitions over one small file budget and their model.
type fleet struct {
	t       *testing.T
	random  *rand.Rand
	budget  int
	backend *tableBackend
	parts   []*engine.Partition
	models  [][]enginetest.Message
	stored  []map[engine.Consumer]uint64
	serial  uint64
	clock   uint64
}

// TestFileTableManyPartitions runs seeded appends, polls, offset stores,
// syncs, partition restarts, deletes and whole restarts (clean or crash)
// on 50 partitions sharing a budget of 8 open files, against a model; it
// checks every poll's content and that the storage never held more than
// the budget open. A second run lets the process refuse opens (EMFILE)
// below the budget, as connections taking descriptors would.
func TestFileTableManyPartitions(t *testing.T) {
	steps := 1500
	if testing.Short() {
		steps = 400
	}
	for _, filesLimit := range []int{0, 5} {
		seed := testSeed(t)
		t.Run(fmt.Sprintf("process-limit=%d", filesLimit), func(t *testing.T) {
			mem := enginetest.NewMemStorage(seed)
			mem.FilesLimit = filesLimit
			f := &fleet{t: t, random: newRandom(seed), budget: 8, backend: newTableBackend(t, mem, 8)}
			f.parts = make([]*engine.Partition, 50)
			f.models = make([][]enginetest.Message, len(f.parts))
			f.stored = make([]map[engine.Consumer]uint64, len(f.parts))
			for index := range f.parts {
				f.stored[index] = make(map[engine.Consumer]uint64)
			}
			f.openAll()
			for step := 0; step < steps; step++ {
				f.step()
				f.checkBudget()
			}
			for index := range f.parts {
				f.verify(index, 0)
			}
			stats := f.backend.table.Stats()
			if stats.Evictions == 0 || stats.Reopens == 0 || stats.Waits == 0 {
				t.Fatalf("a budget of 8 for 50 partitions should evict, reopen and wait: %+v", stats)
			}
			t.Logf("stats %+v", stats)
		})
	}
}

func (f *fleet) options(index int) engine.PartitionOptions {
	return engine.PartitionOptions{
		Directory: fmt.Sprintf("/data/partitions/%d", index), PartitionID: uint32(index),
		SegmentBytes: 1 << 20, Durability: engine.Durability(index % 3), Logger: quiet,
		JournalBytes: 64 << 10, ReadBytes: 64 << 10,
	}
}

func (f *fleet) openAll() {
	failures := 0
	for index := range f.parts {
		engine.OpenPartition(f.backend, f.options(index), func(p *engine.Partition, err error) {
			if err != nil {
				failures++
				f.t.Errorf("open partition %d: %v", index, err)
			}
			f.parts[index] = p
		})
	}
	f.backend.drain()
	if failures > 0 {
		f.t.FailNow()
	}
}

func (f *fleet) checkBudget() {
	f.t.Helper()
	if peak := f.backend.mem.OpenPeak; peak > f.budget {
		f.t.Fatalf("the storage held %d files open, budget %d", peak, f.budget)
	}
	if stats := f.backend.table.Stats(); stats.OpenPeak > f.budget || stats.Open > f.budget {
		f.t.Fatalf("the table held %d files open (peak %d), budget %d", stats.Open, stats.OpenPeak, f.budget)
	}
}

func (f *fleet) step() {
	switch roll := f.random.IntN(20); {
	case roll < 9:
		f.appendSome()
	case roll < 13:
		f.pollSome()
	case roll < 15:
		f.storeOffsets()
	case roll < 16:
		f.syncSome()
	case roll < 18:
		f.restartOne()
	case roll < 19:
		f.deleteOne()
	default:
		f.restartAll()
	}
}

// appendSome appends to several partitions at once, so their writes
// compete for the budget, then drains.
func (f *fleet) appendSome() {
	count := 1 + f.random.IntN(8)
	ops := make([]*engine.AppendOp, count)
	targets := make([]int, count)
	batches := make([][]enginetest.Message, count)
	for k := range ops {
		index := f.random.IntN(len(f.parts))
		payloadMax := 200
		if f.random.IntN(8) == 0 {
			payloadMax = 60 << 10 // fills segments, so some roll
		}
		batches[k] = randomMessages(f.random, &f.serial, 1+f.random.IntN(6), payloadMax)
		f.clock += 10
		ops[k] = &engine.AppendOp{Batch: enginetest.Batch(f.clock, batches[k]...), Timestamp: f.clock}
		ops[k].Done = func(*engine.AppendOp) {}
		if err := f.parts[index].Append(ops[k]); err != nil {
			f.t.Fatalf("append to partition %d: %v", index, err)
		}
		targets[k] = index
		if ops[k].BaseOffset != uint64(len(f.models[index])) {
			f.t.Fatalf("partition %d: append at offset %d, model at %d", index, ops[k].BaseOffset, len(f.models[index]))
		}
		f.models[index] = append(f.models[index], batches[k]...)
	}
	f.backend.drain()
	for k, op := range ops {
		if op.Err != nil {
			f.t.Fatalf("append to partition %d: %v", targets[k], op.Err)
		}
	}
}

// pollSome polls several partitions at once from random offsets.
func (f *fleet) pollSome() {
	count := 1 + f.random.IntN(4)
	ops := make([]*engine.PollOp, count)
	targets := make([]int, count)
	for k := range ops {
		index := f.random.IntN(len(f.parts))
		start := uint64(0)
		if n := len(f.models[index]); n > 0 {
			start = uint64(f.random.IntN(n))
		}
		ops[k] = &engine.PollOp{Strategy: engine.PollOffset, Value: start, Count: 50, Out: make([]byte, 0, 4<<20)}
		ops[k].Done = func(*engine.PollOp) {}
		if err := f.parts[index].Poll(ops[k]); err != nil {
			f.t.Fatalf("poll partition %d: %v", index, err)
		}
		targets[k] = index
	}
	f.backend.drain()
	for k, op := range ops {
		f.checkPoll(targets[k], op)
	}
}

func (f *fleet) checkPoll(index int, op *engine.PollOp) {
	f.t.Helper()
	if op.Err != nil {
		f.t.Fatalf("poll partition %d: %v", index, op.Err)
	}
	messages, err := enginetest.Decode(op.Out)
	if err != nil {
		f.t.Fatalf("poll partition %d output: %v", index, err)
	}
	model := f.models[index]
	want := min(uint64(op.Count), uint64(len(model))-min(op.Value, uint64(len(model))))
	if uint64(len(messages)) != want {
		f.t.Fatalf("partition %d poll from %d: %d messages, want %d", index, op.Value, len(messages), want)
	}
	for k, message := range messages {
		expected := model[op.Value+uint64(k)]
		if message.Offset != op.Value+uint64(k) || message.IDLow != expected.IDLow || !bytes.Equal(message.Payload, expected.Payload) {
			f.t.Fatalf("partition %d offset %d: got id %d offset %d, want id %d", index, op.Value+uint64(k),
				message.IDLow, message.Offset, expected.IDLow)
		}
	}
}

// verify polls the whole partition from offset and compares it.
func (f *fleet) verify(index int, offset uint64) {
	f.t.Helper()
	for offset < uint64(len(f.models[index])) {
		op := &engine.PollOp{Strategy: engine.PollOffset, Value: offset, Count: 1000, Out: make([]byte, 0, 16<<20)}
		op.Done = func(*engine.PollOp) {}
		if err := f.parts[index].Poll(op); err != nil {
			f.t.Fatalf("poll partition %d: %v", index, err)
		}
		f.backend.drain()
		f.checkPoll(index, op)
		offset += uint64(op.Messages)
	}
}

func (f *fleet) storeOffsets() {
	count := 1 + f.random.IntN(6)
	ops := make([]*engine.OffsetOp, 0, count)
	targets := make([]int, 0, count)
	for k := 0; k < count; k++ {
		index := f.random.IntN(len(f.parts))
		if len(f.models[index]) == 0 {
			continue
		}
		op := &engine.OffsetOp{Consumer: consumers[f.random.IntN(len(consumers))],
			Offset: uint64(f.random.IntN(len(f.models[index]))), Done: func(*engine.OffsetOp) {}}
		if err := f.parts[index].StoreOffset(op); err != nil {
			f.t.Fatalf("store offset on partition %d: %v", index, err)
		}
		f.stored[index][op.Consumer] = op.Offset
		ops, targets = append(ops, op), append(targets, index)
	}
	f.backend.drain()
	for k, op := range ops {
		if op.Err != nil {
			f.t.Fatalf("store offset on partition %d: %v", targets[k], op.Err)
		}
	}
}

func (f *fleet) syncSome() {
	count := 1 + f.random.IntN(5)
	results := make([]error, count)
	for k := range results {
		results[k] = errors.New("sync not done")
		index := f.random.IntN(len(f.parts))
		if err := f.parts[index].Sync(func(err error) { results[k] = err }); err != nil {
			results[k] = nil // a sync of the same partition is running
		}
	}
	f.backend.drain()
	for _, err := range results {
		if err != nil {
			f.t.Fatalf("sync: %v", err)
		}
	}
}

// restartOne closes a partition and opens it again.
func (f *fleet) restartOne() {
	index := f.random.IntN(len(f.parts))
	closePartition(f.t, f.backend, f.parts[index])
	f.parts[index] = mustOpen(f.t, f.backend, f.options(index))
	f.checkStored(index)
	f.verify(index, uint64(len(f.models[index]))-min(uint64(len(f.models[index])), 20))
}

func (f *fleet) checkStored(index int) {
	f.t.Helper()
	for consumer, offset := range f.stored[index] {
		if got, ok := f.parts[index].StoredOffset(consumer); !ok || got != offset {
			f.t.Fatalf("partition %d consumer %v: stored %d (%v), want %d", index, consumer, got, ok, offset)
		}
	}
}

// deleteOne deletes a partition and creates it again, empty.
func (f *fleet) deleteOne() {
	index := f.random.IntN(len(f.parts))
	var deleteErr error = errors.New("delete not done")
	f.parts[index].Delete(func(err error) { deleteErr = err })
	f.backend.drain()
	if deleteErr != nil {
		f.t.Fatalf("delete partition %d: %v", index, deleteErr)
	}
	if _, ok := f.backend.mem.File(f.options(index).Directory + "/offsets"); ok {
		f.t.Fatalf("partition %d: the offsets file survived the delete", index)
	}
	f.models[index], f.stored[index] = nil, make(map[engine.Consumer]uint64)
	f.parts[index] = mustOpen(f.t, f.backend, f.options(index))
	if next := f.parts[index].OffsetNext(); next != 0 {
		f.t.Fatalf("partition %d recreated at offset %d", index, next)
	}
}

// restartAll stops every partition, cleanly or by a crash, and opens
// them again on a fresh table. After a crash persisted partitions keep
// every acknowledged message; the others keep a prefix.
func (f *fleet) restartAll() {
	crash := f.random.IntN(2) == 0
	mem := f.backend.mem
	if crash {
		mem = mem.Crash(f.random.Uint64())
		mem.FilesLimit = f.backend.mem.FilesLimit
	} else {
		for _, p := range f.parts {
			closePartition(f.t, f.backend, p)
		}
	}
	if f.backend.mem.OpenFiles() != 0 && !crash {
		f.t.Fatalf("%d files open after every partition closed", f.backend.mem.OpenFiles())
	}
	f.checkBudget()
	f.backend = newTableBackend(f.t, mem, f.budget)
	f.openAll()
	for index, p := range f.parts {
		next := p.OffsetNext()
		if next > uint64(len(f.models[index])) {
			f.t.Fatalf("partition %d reopened at %d, past the %d appended", index, next, len(f.models[index]))
		}
		if next < uint64(len(f.models[index])) {
			if !crash || f.options(index).Durability == engine.DurabilityPersisted {
				f.t.Fatalf("partition %d lost acknowledged messages: %d of %d", index, next, len(f.models[index]))
			}
			f.models[index] = f.models[index][:next]
		}
		if !crash {
			f.checkStored(index)
		}
		f.stored[index] = make(map[engine.Consumer]uint64)
		for _, consumer := range consumers {
			if offset, ok := p.StoredOffset(consumer); ok {
				f.stored[index][consumer] = offset
			}
		}
	}
}

// TestFileTableOutOfDescriptors: when the process refuses every open
// (EMFILE) and the table holds nothing it could close, the open fails
// with ErrTooManyOpenFiles, which also matches the errno; once the
// process has descriptors again the same table opens the partition.
func TestFileTableOutOfDescriptors(t *testing.T) {
	mem := enginetest.NewMemStorage(testSeed(t))
	refuse := true
	mem.Inject = func(op *engine.Op) error {
		if refuse && op.Code == engine.OpOpen {
			return syscall.EMFILE
		}
		return nil
	}
	backend := newTableBackend(t, mem, 4)
	options := engine.PartitionOptions{Directory: "/data/p", Logger: quiet}
	_, err := openPartition(t, backend, options)
	if !errors.Is(err, engine.ErrTooManyOpenFiles) || !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("open with no descriptor: %v, want ErrTooManyOpenFiles and EMFILE", err)
	}
	if stats := backend.table.Stats(); stats.Handles != 0 || stats.Open != 0 {
		t.Fatalf("a refused open left handles behind: %+v", stats)
	}
	refuse = false
	p := mustOpen(t, backend, options)
	if _, err := appendBatch(t, backend, p, enginetest.Batch(1, enginetest.Message{IDLow: 1, Payload: []byte("x")}), 1); err != nil {
		t.Fatalf("append: %v", err)
	}
	closePartition(t, backend, p)
}

// TestFileTableHandles checks the handle rules directly: a stale handle
// is refused, a renamed file reopens under its new name, a removed
// file's open descriptor is kept until its handle closes, and a removed
// file whose descriptor was closed fails clearly.
func TestFileTableHandles(t *testing.T) {
	mem := enginetest.NewMemStorage(testSeed(t))
	backend := newTableBackend(t, mem, 1)
	run, open := backend.run, backend.open
	write := func(file engine.File, data string) error {
		return run(&engine.Op{Code: engine.OpWrite, File: file, Buffer: []byte(data)}).Err
	}
	first, second := open("/d/a"), open("/d/b") // the budget of 1 evicts a
	if err := write(first, "one"); err != nil {
		t.Fatalf("write through a reopened handle: %v", err)
	}
	if op := run(&engine.Op{Code: engine.OpRename, Path: "/d/a", Target: "/d/c"}); op.Err != nil {
		t.Fatalf("rename: %v", op.Err)
	}
	_ = write(second, "x") // evicts the renamed file
	if err := write(first, "two"); err != nil {
		t.Fatalf("write after rename and eviction: %v", err)
	}
	if data, _ := mem.File("/d/c"); string(data) != "two" {
		t.Fatalf("/d/c holds %q, want the renamed file rewritten", data)
	}
	_ = write(second, "x") // evicts the renamed file again
	if op := run(&engine.Op{Code: engine.OpRemove, Path: "/d/c"}); op.Err != nil {
		t.Fatalf("remove: %v", op.Err)
	}
	if err := write(first, "three"); !errors.Is(err, engine.ErrFileRemoved) {
		t.Fatalf("write to a removed file whose descriptor was closed: %v, want ErrFileRemoved", err)
	}
	kept := open("/d/e") // evicts b
	if op := run(&engine.Op{Code: engine.OpRemove, Path: "/d/e"}); op.Err != nil {
		t.Fatalf("remove: %v", op.Err)
	}
	if err := write(kept, "kept"); err != nil {
		t.Fatalf("write to a removed file whose descriptor is open: %v", err)
	}
	if op := run(&engine.Op{Code: engine.OpClose, File: kept}); op.Err != nil {
		t.Fatalf("close: %v", op.Err)
	}
	if err := write(second, "y"); err != nil {
		t.Fatalf("write to b once the removed file closed: %v", err)
	}
	for _, file := range []engine.File{first, second} {
		if op := run(&engine.Op{Code: engine.OpClose, File: file}); op.Err != nil {
			t.Fatalf("close: %v", op.Err)
		}
	}
	if op := run(&engine.Op{Code: engine.OpWrite, File: first, Buffer: []byte("z")}); !errors.Is(op.Err, syscall.EBADF) {
		t.Fatalf("write through a closed handle: %v, want EBADF", op.Err)
	}
	if stats := backend.table.Stats(); stats.Open != 0 || stats.Handles != 0 || mem.OpenFiles() != 0 || mem.OpenPeak > 1 {
		t.Fatalf("after closing every handle: %+v, storage open %d peak %d", stats, mem.OpenFiles(), mem.OpenPeak)
	}
}

// TestOpenFilesLimit: RaiseOpenFilesLimit lifts a lowered soft limit back
// to the hard one, and OpenFilesBudget leaves the reserve to the rest of
// the process, never more than half the limit, never below OpenFilesMin.
func TestOpenFilesLimit(t *testing.T) {
	var limit unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &limit); err != nil {
		t.Skipf("getrlimit RLIMIT_NOFILE: %v", err)
	}
	lowered := limit
	lowered.Cur = max(limit.Max/2, 256)
	if lowered.Cur >= limit.Max {
		t.Skipf("hard limit %d too low to lower the soft one", limit.Max)
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lowered); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	defer func() { _ = unix.Setrlimit(unix.RLIMIT_NOFILE, &limit) }() // restored for the other tests
	soft, err := engine.RaiseOpenFilesLimit()
	if err != nil || soft != limit.Max {
		t.Fatalf("raised soft limit %d, %v; want the hard limit %d", soft, err, limit.Max)
	}
	for _, c := range []struct {
		limit   uint64
		reserve int
		want    int
	}{
		{20000, 10256, 10000}, // 10,000 connections: half the limit for files
		{20000, 1280, 18720},
		{1024, 1280, 512},
		{64, 0, 64},
		{10, 0, engine.OpenFilesMin},
		{0, 100, engine.OpenFilesMin},
	} {
		if got := engine.OpenFilesBudget(c.limit, c.reserve); got != c.want {
			t.Errorf("OpenFilesBudget(%d, %d) = %d, want %d", c.limit, c.reserve, got, c.want)
		}
	}
}
