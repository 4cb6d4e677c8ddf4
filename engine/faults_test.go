package engine_test

import (
	"errors"
	"log/slog"
	"strings"
	"syscall"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

var quiet = slog.New(slog.DiscardHandler)

// filled opens a partition and appends batchCount batches, draining each.
func filled(t *testing.T, storage backend, options engine.PartitionOptions, batchCount int) (*engine.Partition, []enginetest.Message) {
	t.Helper()
	p := mustOpen(t, storage, options)
	var model []enginetest.Message
	random := newRandom(7)
	serial := uint64(0)
	for batch := 0; batch < batchCount; batch++ {
		messages := randomMessages(random, &serial, 1+batch%3, 12000)
		if _, err := appendBatch(t, storage, p, enginetest.Batch(10, messages...), uint64(100+batch)); err != nil {
			t.Fatalf("append %d: %v", batch, err)
		}
		model = append(model, messages...)
	}
	return p, model
}

func testOptions() engine.PartitionOptions {
	return engine.PartitionOptions{Directory: "/d/p", SegmentBytes: 1 << 20, Logger: quiet}
}

const firstLog = "/d/p/00000000000000000000.log"

// TestCorruptionBeforeDurablePointRefusesOpen flips one byte inside a
// synced batch: the partition must refuse to open, naming file and
// position, rather than drop acknowledged data.
// With 120 batches the damage lands in a sealed segment; with 12 it lands
// in the active one, before the last index entry (the durable witness).
func TestCorruptionBeforeDurablePointRefusesOpen(t *testing.T) {
	for _, batches := range []int{120, 12} {
		mem := enginetest.NewMemStorage(1)
		storage := memBackend{mem}
		p, _ := filled(t, storage, testOptions(), batches)
		if sealed := p.SegmentCount() > 1; sealed != (batches == 120) {
			t.Fatalf("%d batches made %d segments", batches, p.SegmentCount())
		}
		closePartition(t, storage, p)
		checkCorruptionRefused(t, mem, storage, []int{300, 70000})
	}
}

func checkCorruptionRefused(t *testing.T, mem *enginetest.MemStorage, storage backend, positions []int) {
	for _, position := range positions {
		data, _ := mem.File(firstLog)
		damaged := append([]byte(nil), data...)
		damaged[position] ^= 0xff
		mem.SetFile(firstLog, damaged)
		_, err := openPartition(t, storage, testOptions())
		var corrupt *engine.CorruptError
		if !errors.Is(err, engine.ErrCorrupt) || !errors.As(err, &corrupt) {
			t.Fatalf("damage at %d: open error %v, want ErrCorrupt", position, err)
		}
		if corrupt.Path != firstLog || corrupt.Position > int64(position) {
			t.Fatalf("damage at %d reported as %s at %d", position, corrupt.Path, corrupt.Position)
		}
		mem.SetFile(firstLog, data)
	}
	mustOpen(t, storage, testOptions())
}

// TestTornTailTruncated appends junk past the last batch of the active
// segment (a write that never completed): open truncates and reports it,
// and appends continue at the right offset.
func TestTornTailTruncated(t *testing.T) {
	mem := enginetest.NewMemStorage(2)
	storage := memBackend{mem}
	p, model := filled(t, storage, testOptions(), 10)
	closePartition(t, storage, p)
	data, _ := mem.File(firstLog)
	mem.SetFile(firstLog, append(data, []byte(strings.Repeat("torn", 3000))...))
	p = mustOpen(t, storage, testOptions())
	if p.TornBytes() == 0 {
		t.Fatal("torn tail not reported")
	}
	checkAll(t, storage, p, model)
	op, err := appendBatch(t, storage, p, enginetest.Batch(1, enginetest.Message{Payload: []byte("after")}), 999)
	if err != nil || op.BaseOffset != uint64(len(model)) {
		t.Fatalf("append after truncation: offset %d, error %v", op.BaseOffset, err)
	}
	closePartition(t, storage, p)
	p = mustOpen(t, storage, testOptions())
	if p.TornBytes() != 0 || p.OffsetNext() != uint64(len(model)+1) {
		t.Fatalf("second open: torn %d, next %d", p.TornBytes(), p.OffsetNext())
	}
}

// TestMissingIndexRebuilt deletes every .index: open rebuilds them and
// polls by offset and timestamp still find their batches.
func TestMissingIndexRebuilt(t *testing.T) {
	mem := enginetest.NewMemStorage(3)
	storage := memBackend{mem}
	p, model := filled(t, storage, testOptions(), 120)
	segments := p.SegmentCount()
	closePartition(t, storage, p)
	for _, name := range listFiles(mem, "/d/p", ".index") {
		mem.Remove(name)
	}
	p = mustOpen(t, storage, testOptions())
	if p.SegmentCount() != segments || len(listFiles(mem, "/d/p", ".index")) != segments {
		t.Fatalf("segments %d, index files %d, want %d", p.SegmentCount(), len(listFiles(mem, "/d/p", ".index")), segments)
	}
	for _, name := range listFiles(mem, "/d/p", ".index") {
		if data, _ := mem.File(name); len(data) == 0 || len(data)%24 != 0 {
			t.Fatalf("%s rebuilt with %d bytes", name, len(data))
		}
	}
	checkAll(t, storage, p, model)
	got := poll(t, storage, p, &engine.PollOp{Strategy: engine.PollTimestamp, Value: 150, Count: 1})
	if len(got) != 1 || got[0].Offset == 0 {
		t.Fatalf("timestamp poll returned %v", got)
	}
}

func listFiles(mem *enginetest.MemStorage, directory, suffix string) []string {
	var names []string
	op := &engine.Op{Code: engine.OpList, Path: directory, Callback: func(*engine.Op) {}}
	mem.Submit(op)
	mem.Run(1)
	for _, name := range op.Names {
		if strings.HasSuffix(name, suffix) {
			names = append(names, directory+"/"+name)
		}
	}
	return names
}

// TestWriteErrorFailsAppendsAndKeepsServing injects ENOSPC into log
// writes: the appends in the failed group get the error, their offsets are
// handed out again, and reads keep working.
func TestWriteErrorFailsAppendsAndKeepsServing(t *testing.T) {
	mem := enginetest.NewMemStorage(4)
	storage := memBackend{mem}
	p, model := filled(t, storage, testOptions(), 5)
	mem.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpWrite && len(op.Buffer) > 24*200 {
			return syscall.ENOSPC
		}
		return nil
	}
	record := enginetest.Batch(1, enginetest.Message{Payload: make([]byte, 9000)})
	_, err := appendBatch(t, storage, p, record, 500)
	if !errors.Is(err, syscall.ENOSPC) || engine.IsFatal(err) {
		t.Fatalf("append on a full disk: %v, want ENOSPC, not fatal", err)
	}
	checkAll(t, storage, p, model)
	mem.Inject = nil
	op, err := appendBatch(t, storage, p, record, 501)
	if err != nil || op.BaseOffset != uint64(len(model)) {
		t.Fatalf("append after space returned: offset %d, error %v", op.BaseOffset, err)
	}
}

// TestFsyncFailureIsFatal fails one fdatasync: the waiting append gets a
// FatalError and the partition refuses everything after, never retrying.
func TestFsyncFailureIsFatal(t *testing.T) {
	mem := enginetest.NewMemStorage(5)
	storage := memBackend{mem}
	p, _ := filled(t, storage, testOptions(), 3)
	syncs := 0
	mem.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpSync {
			syncs++
			return syscall.EIO
		}
		return nil
	}
	_, err := appendBatch(t, storage, p, enginetest.Batch(1, enginetest.Message{Payload: []byte("x")}), 9)
	if !engine.IsFatal(err) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("append with failing fsync: %v, want a fatal EIO", err)
	}
	if err := p.Append(&engine.AppendOp{Batch: enginetest.Batch(1, enginetest.Message{Payload: []byte("y")}), Timestamp: 10}); !engine.IsFatal(err) {
		t.Fatalf("append after a fatal error: %v", err)
	}
	if err := p.Poll(&engine.PollOp{Strategy: engine.PollFirst, Count: 1}); !engine.IsFatal(err) {
		t.Fatalf("poll after a fatal error: %v", err)
	}
	storage.drain()
	if syncs != 1 {
		t.Fatalf("fsync attempted %d times, want exactly 1 (never retried)", syncs)
	}
}

// TestMemoryDurabilityRetriesWrite: under DurabilityMemory a failed write
// was acknowledged already, so it is kept, served from memory, and
// written by a later Tick; until then the partition is not Settled.
func TestMemoryDurabilityRetriesWrite(t *testing.T) {
	mem := enginetest.NewMemStorage(6)
	storage := memBackend{mem}
	options := testOptions()
	options.Durability = engine.DurabilityMemory
	p := mustOpen(t, storage, options)
	mem.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpWrite {
			return syscall.ENOSPC
		}
		return nil
	}
	messages := []enginetest.Message{{Payload: []byte("kept")}}
	if _, err := appendBatch(t, storage, p, enginetest.Batch(1, messages...), 5); err != nil {
		t.Fatal(err)
	}
	compareMessages(t, poll(t, storage, p, &engine.PollOp{Strategy: engine.PollFirst, Count: 9}), messages, 0)
	mem.Inject = nil
	if p.Settled() {
		t.Fatal("a partition with a stalled write reports itself settled")
	}
	p.Tick()
	storage.drain()
	if !p.Settled() {
		t.Fatal("a partition whose retried write completed is not settled")
	}
	closePartition(t, storage, p)
	p = mustOpen(t, storage, options)
	compareMessages(t, poll(t, storage, p, &engine.PollOp{Strategy: engine.PollFirst, Count: 9}), messages, 0)
}

// TestRetryWritesHoldsAppends: with RetryWrites a failed write under
// DurabilityWritten is kept and retried by Tick: the append completes only
// once the write succeeds, without an error, at the offset it was given,
// and the next append follows it (no offset handed out twice).
func TestRetryWritesHoldsAppends(t *testing.T) {
	mem := enginetest.NewMemStorage(7)
	storage := memBackend{mem}
	options := testOptions()
	options.Durability = engine.DurabilityWritten
	options.RetryWrites = true
	p := mustOpen(t, storage, options)
	mem.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpWrite {
			return syscall.ENOSPC
		}
		return nil
	}
	first := &engine.AppendOp{Batch: enginetest.Batch(1, enginetest.Message{Payload: []byte("held")}), Timestamp: 5}
	done := 0
	first.Done = func(*engine.AppendOp) { done++ }
	if err := p.Append(first); err != nil {
		t.Fatal(err)
	}
	storage.drain()
	p.Tick()
	storage.drain()
	if done != 0 || p.WriteFailures() < 2 {
		t.Fatalf("append completed %d times on a full disk after %d failed writes", done, p.WriteFailures())
	}
	mem.Inject = nil
	p.Tick()
	storage.drain()
	if done != 1 || first.Err != nil || first.BaseOffset != 0 {
		t.Fatalf("after the retry: done %d, err %v, offset %d", done, first.Err, first.BaseOffset)
	}
	second, err := appendBatch(t, storage, p, enginetest.Batch(1, enginetest.Message{Payload: []byte("next")}), 6)
	if err != nil || second.BaseOffset != 1 {
		t.Fatalf("next append: %v at offset %d, want 1", err, second.BaseOffset)
	}
	compareMessages(t, poll(t, storage, p, &engine.PollOp{Strategy: engine.PollFirst, Count: 9}),
		[]enginetest.Message{{Payload: []byte("held")}, {Payload: []byte("next")}}, 0)
}

// TestSyncMakesWrittenDurable: under DurabilityWritten an acknowledged
// batch may be lost by a crash, but not after Sync completed.
func TestSyncMakesWrittenDurable(t *testing.T) {
	mem := enginetest.NewMemStorage(12)
	storage := memBackend{mem}
	options := testOptions()
	options.Durability = engine.DurabilityWritten
	p, model := filled(t, storage, options, 30)
	called := 0
	if err := p.Sync(func(err error) {
		if err != nil {
			t.Fatal(err)
		}
		called++
	}); err != nil {
		t.Fatal(err)
	}
	storage.drain()
	if called != 1 {
		t.Fatalf("sync callback ran %d times", called)
	}
	for seed := uint64(0); seed < 20; seed++ {
		clone := memBackend{mem.Crash(seed)}
		recovered := mustOpen(t, clone, options)
		if recovered.OffsetNext() != uint64(len(model)) {
			t.Fatalf("crash %d after Sync kept %d of %d offsets", seed, recovered.OffsetNext(), len(model))
		}
	}
}

// TestOffsetWriteErrorDoesNotBlockClose: a failed consumer-offset write
// fails the store, and Close still completes.
func TestOffsetWriteErrorDoesNotBlockClose(t *testing.T) {
	mem := enginetest.NewMemStorage(13)
	storage := memBackend{mem}
	p, _ := filled(t, storage, testOptions(), 3)
	mem.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpWrite && len(op.Buffer) == 32 {
			return syscall.EIO
		}
		return nil
	}
	err := storeOffset(t, storage, p, engine.Consumer{Kind: engine.ConsumerSingle, ID: 1}, 1)
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("store with a failing write: %v", err)
	}
	closePartition(t, storage, p)
}

// TestFlushWritesWithoutSync pins a FlushUnsavedBuffer bug: with fsync
// false it fdatasynced anyway. Flush waits for appends not yet written
// (DurabilityMemory acknowledges before the write) and syncs nothing;
// Sync fdatasyncs the .log and the .index.
func TestFlushWritesWithoutSync(t *testing.T) {
	storage := &countingBackend{memBackend: memBackend{enginetest.NewMemStorage(14)}}
	options := testOptions()
	options.Durability = engine.DurabilityMemory
	p := mustOpen(t, storage, options)
	appended := 0
	op := &engine.AppendOp{Batch: enginetest.Batch(1, enginetest.Message{Payload: []byte("unsaved")}), Timestamp: 5,
		Done: func(*engine.AppendOp) { appended++ }}
	if err := p.Append(op); err != nil {
		t.Fatal(err)
	}
	for _, fsync := range []bool{false, true} {
		storage.syncs = 0
		called := 0
		done := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
			called++
		}
		var err error
		if fsync {
			err = p.Sync(done)
		} else {
			err = p.Flush(done)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !fsync && called != 0 {
			t.Fatal("Flush completed before the pending write")
		}
		storage.drain()
		want := 0
		if fsync {
			want = 2
		}
		if called != 1 || storage.syncs != want {
			t.Fatalf("fsync %v: callback ran %d times, %d fdatasyncs, want 1 and %d", fsync, called, storage.syncs, want)
		}
	}
	if appended != 1 || p.OffsetNext() != 1 {
		t.Fatalf("append done %d times, offset next %d", appended, p.OffsetNext())
	}
}

// TestSyncFailureReachesCaller: a failed fdatasync of a Sync (the .log's,
// then the .index's) stops the partition and hands the fatal error to the
// Sync's callback, once, so the caller learns of it instead of waiting for
// ever.
func TestSyncFailureReachesCaller(t *testing.T) {
	for failing, path := range []string{firstLog, strings.TrimSuffix(firstLog, ".log") + ".index"} {
		mem := enginetest.NewMemStorage(41)
		storage := memBackend{mem}
		p, _ := filled(t, storage, testOptions(), 3)
		syncs := 0
		mem.Inject = func(op *engine.Op) error {
			if op.Code != engine.OpSync {
				return nil
			}
			syncs++
			if syncs == failing+1 {
				return syscall.EIO
			}
			return nil
		}
		called := 0
		var syncErr error
		if err := p.Sync(func(err error) { syncErr, called = err, called+1 }); err != nil {
			t.Fatal(err)
		}
		storage.drain()
		if called != 1 || !engine.IsFatal(syncErr) || !strings.Contains(syncErr.Error(), path) {
			t.Fatalf("failing %s: sync callback ran %d times with %v", path, called, syncErr)
		}
		if err := p.Sync(func(error) {}); !engine.IsFatal(err) {
			t.Fatalf("a Sync on the stopped partition: %v", err)
		}
	}
}
