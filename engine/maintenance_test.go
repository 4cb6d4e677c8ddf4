package engine_test

import (
	"errors"
	"os"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

func maintain(t *testing.T, storage backend, start func(*engine.MaintenanceOp) error, op *engine.MaintenanceOp) {
	t.Helper()
	called := 0
	op.Done = func(*engine.MaintenanceOp) { called++ }
	if err := start(op); err != nil {
		t.Fatalf("maintenance: %v", err)
	}
	storage.drain()
	if called != 1 || op.Err != nil {
		t.Fatalf("maintenance: called %d, error %v", called, op.Err)
	}
}

func storeOffset(t *testing.T, storage backend, p *engine.Partition, consumer engine.Consumer, offset uint64) error {
	t.Helper()
	op := &engine.OffsetOp{Consumer: consumer, Offset: offset}
	called := 0
	op.Done = func(*engine.OffsetOp) { called++ }
	if err := p.StoreOffset(op); err != nil {
		return err
	}
	storage.drain()
	if called != 1 {
		t.Fatalf("store offset callback ran %d times", called)
	}
	return op.Err
}

// TestRetention checks expiry by time, the size limit, the consumer
// barrier, and that the active segment always stays.
func TestRetention(t *testing.T) {
	mem := enginetest.NewMemStorage(8)
	storage := memBackend{mem}
	p, model := filled(t, storage, testOptions(), 300)
	segments := p.SegmentCount()
	if segments < 4 {
		t.Fatalf("only %d segments", segments)
	}
	consumer := engine.Consumer{Kind: engine.ConsumerGroup, ID: 3}
	if err := storeOffset(t, storage, p, consumer, 0); err != nil {
		t.Fatal(err)
	}
	op := &engine.MaintenanceOp{NowMicros: 1 << 40, ExpiryMicros: 1}
	maintain(t, storage, p.Retain, op)
	if op.SegmentsDeleted != 0 {
		t.Fatalf("retention passed the consumer barrier: %d deleted", op.SegmentsDeleted)
	}
	if err := storeOffset(t, storage, p, consumer, uint64(len(model)-1)); err != nil {
		t.Fatal(err)
	}
	size := p.SizeBytes()
	op = &engine.MaintenanceOp{SizeBytesMax: size - 1}
	maintain(t, storage, p.Retain, op)
	if op.SegmentsDeleted != 1 || p.OffsetFirst() == 0 {
		t.Fatalf("size retention deleted %d segments, first offset %d", op.SegmentsDeleted, p.OffsetFirst())
	}
	op = &engine.MaintenanceOp{NowMicros: 100 + 300, ExpiryMicros: 1}
	maintain(t, storage, p.Retain, op)
	if p.SegmentCount() != 1 {
		t.Fatalf("expiry left %d segments, want only the active one", p.SegmentCount())
	}
	first := p.OffsetFirst()
	got := poll(t, storage, p, &engine.PollOp{Strategy: engine.PollFirst, Count: 10})
	compareMessages(t, got, model[first:first+10], first)
	closePartition(t, storage, p)
	p = mustOpen(t, storage, testOptions())
	if p.OffsetFirst() != first || p.OffsetNext() != uint64(len(model)) {
		t.Fatalf("reopen after retention: first %d next %d", p.OffsetFirst(), p.OffsetNext())
	}
	if len(listFiles(mem, "/d/p", ".log")) != 1 {
		t.Fatal("deleted segment files are still there")
	}
}

// TestDeleteSegmentsAndPurge removes the oldest sealed segments by count,
// then purges: the partition restarts empty at offset 0 with no offsets.
func TestDeleteSegmentsAndPurge(t *testing.T) {
	mem := enginetest.NewMemStorage(9)
	storage := memBackend{mem}
	p, model := filled(t, storage, testOptions(), 300)
	segments := p.SegmentCount()
	op := &engine.MaintenanceOp{SegmentCount: 2}
	maintain(t, storage, p.DeleteSegments, op)
	if op.SegmentsDeleted != 2 || p.SegmentCount() != segments-2 {
		t.Fatalf("deleted %d, left %d of %d", op.SegmentsDeleted, p.SegmentCount(), segments)
	}
	consumer := engine.Consumer{Kind: engine.ConsumerSingle, ID: 1}
	if err := storeOffset(t, storage, p, consumer, 5); err != nil {
		t.Fatal(err)
	}
	maintain(t, storage, p.Purge, &engine.MaintenanceOp{PurgeGeneration: 3})
	if p.PurgeGeneration() != 3 {
		t.Fatalf("purge generation %d, want 3", p.PurgeGeneration())
	}
	if p.SegmentCount() != 1 || p.OffsetNext() != 0 || p.OffsetFirst() != 0 {
		t.Fatalf("after purge: %d segments, next %d", p.SegmentCount(), p.OffsetNext())
	}
	if _, ok := p.StoredOffset(consumer); ok {
		t.Fatal("purge kept a consumer offset")
	}
	if got := poll(t, storage, p, &engine.PollOp{Strategy: engine.PollFirst, Count: 10}); len(got) != 0 {
		t.Fatalf("purged partition served %d messages", len(got))
	}
	messages := model[:2]
	op2, err := appendBatch(t, storage, p, enginetest.Batch(1, messages...), 9999)
	if err != nil || op2.BaseOffset != 0 {
		t.Fatalf("append after purge: %d, %v", op2.BaseOffset, err)
	}
	closePartition(t, storage, p)
	p = mustOpen(t, storage, testOptions())
	compareMessages(t, poll(t, storage, p, &engine.PollOp{Strategy: engine.PollFirst, Count: 10}), messages, 0)
	if _, ok := p.StoredOffset(consumer); ok {
		t.Fatal("purged consumer offset came back")
	}
	if p.PurgeGeneration() != 3 {
		t.Fatalf("purge generation after reopen %d, want 3", p.PurgeGeneration())
	}
}

// TestConsumerOffsets stores, reloads, auto-commits and deletes offsets,
// and polls with Next.
func TestConsumerOffsets(t *testing.T) {
	storage := memBackend{enginetest.NewMemStorage(10)}
	p := mustOpen(t, storage, testOptions())
	single := engine.Consumer{Kind: engine.ConsumerSingle, ID: 77}
	group := engine.Consumer{Kind: engine.ConsumerGroup, ID: 0}
	if err := storeOffset(t, storage, p, single, 0); !errors.Is(err, engine.ErrInvalidOffset) {
		t.Fatalf("store on an empty partition: %v", err)
	}
	closePartition(t, storage, p)
	p, model := filled(t, storage, testOptions(), 20)
	if err := storeOffset(t, storage, p, single, uint64(len(model))); !errors.Is(err, engine.ErrInvalidOffset) {
		t.Fatalf("store past the current offset: %v", err)
	}
	if err := storeOffset(t, storage, p, single, 4); err != nil {
		t.Fatal(err)
	}
	got := poll(t, storage, p, &engine.PollOp{Strategy: engine.PollNext, Consumer: single, Count: 3, AutoCommit: true})
	compareMessages(t, got, model[5:8], 5)
	got = poll(t, storage, p, &engine.PollOp{Strategy: engine.PollNext, Consumer: group, Count: 2, AutoCommit: true})
	compareMessages(t, got, model[0:2], 0)
	storage.drain()
	closePartition(t, storage, p)
	p = mustOpen(t, storage, testOptions())
	if offset, ok := p.StoredOffset(single); !ok || offset != 7 {
		t.Fatalf("reloaded single offset %d, %v; want 7", offset, ok)
	}
	if offset, ok := p.StoredOffset(group); !ok || offset != 1 {
		t.Fatalf("reloaded group offset %d, %v; want 1", offset, ok)
	}
	deleteOp := &engine.OffsetOp{Consumer: single, Done: func(*engine.OffsetOp) {}}
	if err := p.DeleteOffset(deleteOp); err != nil {
		t.Fatal(err)
	}
	storage.drain()
	if err := p.DeleteOffset(&engine.OffsetOp{Consumer: single, Done: func(*engine.OffsetOp) {}}); !errors.Is(err, engine.ErrOffsetNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	closePartition(t, storage, p)
	p = mustOpen(t, storage, testOptions())
	if _, ok := p.StoredOffset(single); ok {
		t.Fatal("deleted offset came back")
	}
}

// TestDedupWindow drops messages whose id was seen within the window and
// renumbers the rest so offsets stay contiguous.
func TestDedupWindow(t *testing.T) {
	storage := memBackend{enginetest.NewMemStorage(11)}
	options := testOptions()
	options.DedupCount = 100
	options.DedupWindowMicros = 1000
	p := mustOpen(t, storage, options)
	message := func(id uint64) enginetest.Message {
		return enginetest.Message{IDLow: id, Payload: []byte{byte(id)}}
	}
	appendBatch(t, storage, p, enginetest.Batch(1, message(1), message(2)), 10)
	op, _ := appendBatch(t, storage, p, enginetest.Batch(1, message(2), message(3), message(1), message(4)), 20)
	if op.Count != 2 || op.BaseOffset != 2 {
		t.Fatalf("dedup kept %d at %d, want 2 at 2", op.Count, op.BaseOffset)
	}
	op, _ = appendBatch(t, storage, p, enginetest.Batch(1, message(3)), 30)
	if op.Count != 0 {
		t.Fatalf("all-duplicate batch stored %d", op.Count)
	}
	op, _ = appendBatch(t, storage, p, enginetest.Batch(1, message(1)), 2000)
	if op.Count != 1 || op.BaseOffset != 4 {
		t.Fatalf("expired id: kept %d at %d", op.Count, op.BaseOffset)
	}
	got := poll(t, storage, p, &engine.PollOp{Strategy: engine.PollFirst, Count: 10})
	want := []enginetest.Message{message(1), message(2), message(3), message(4), message(1)}
	compareMessages(t, got, want, 0)
}

// TestDeletePartition removes a partition's files and directory.
func TestDeletePartition(t *testing.T) {
	directory := t.TempDir() + "/p7"
	storage := directBackend{engine.NewDirectStorage()}
	options := testOptions()
	options.Directory = directory
	p, _ := filled(t, storage, options, 150)
	var deleteErr error
	called := 0
	p.Delete(func(err error) { deleteErr, called = err, called+1 })
	storage.drain()
	if called != 1 || deleteErr != nil {
		t.Fatalf("delete: called %d, %v", called, deleteErr)
	}
	if _, err := os.Stat(directory); !os.IsNotExist(err) {
		t.Fatalf("directory still there: %v", err)
	}
}

// startCountedSync starts a Sync that must succeed and returns the count
// of its callback's runs.
func startCountedSync(t *testing.T, p *engine.Partition) *int {
	t.Helper()
	synced := new(int)
	if err := p.Sync(func(err error) {
		if err != nil {
			t.Errorf("sync: %v", err)
		}
		*synced++
	}); err != nil {
		t.Fatal(err)
	}
	return synced
}

// TestPurgeWaitsForSync: a purge requested while a Sync's fdatasync is in
// flight waits for the Sync. It used to start at once (the write pipeline
// was idle), remove every segment and close its files, and the Sync's
// next step then looked up the active segment of a partition that had
// none (index out of range).
func TestPurgeWaitsForSync(t *testing.T) {
	storage := memBackend{enginetest.NewMemStorage(31)}
	p, _ := filled(t, storage, testOptions(), 20)
	synced := startCountedSync(t, p)
	maintain(t, storage, p.Purge, &engine.MaintenanceOp{PurgeGeneration: 1})
	if *synced != 1 {
		t.Fatalf("sync callback ran %d times", *synced)
	}
	if p.SegmentCount() != 1 || p.OffsetNext() != 0 {
		t.Fatalf("after purge: %d segments, next offset %d", p.SegmentCount(), p.OffsetNext())
	}
	closePartition(t, storage, p)
	p = mustOpen(t, storage, testOptions())
	if p.OffsetNext() != 0 {
		t.Fatalf("reopened after purge: next offset %d", p.OffsetNext())
	}
}

// TestSyncDuringPurge: a Sync requested while a purge removes the segments
// (the write pipeline is idle, so the Sync would start at once) waits for
// the purge and then syncs the fresh segment.
func TestSyncDuringPurge(t *testing.T) {
	storage := memBackend{enginetest.NewMemStorage(32)}
	p, _ := filled(t, storage, testOptions(), 20)
	purge := &engine.MaintenanceOp{PurgeGeneration: 1}
	purged := 0
	purge.Done = func(*engine.MaintenanceOp) { purged++ }
	if err := p.Purge(purge); err != nil {
		t.Fatal(err)
	}
	if storage.Pending() == 0 {
		t.Fatal("the purge submitted nothing")
	}
	synced := startCountedSync(t, p)
	storage.drain()
	if purged != 1 || purge.Err != nil || *synced != 1 {
		t.Fatalf("purge done %d times (%v), sync done %d times", purged, purge.Err, *synced)
	}
	if p.SegmentCount() != 1 || p.OffsetNext() != 0 {
		t.Fatalf("after purge and sync: %d segments, next offset %d", p.SegmentCount(), p.OffsetNext())
	}
	closePartition(t, storage, p)
}
