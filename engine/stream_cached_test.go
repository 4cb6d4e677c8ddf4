package engine_test

import (
	"bytes"
	"errors"
	"syscall"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// drainedCache returns in-memory storage and a one-shard cache of
// budgetBytes that holds written journals for a drain, as a shard's does.
func drainedCache(t *testing.T, seed uint64, budgetBytes int64, wake func()) (*enginetest.MemStorage, memBackend,
	*engine.Cache) {
	t.Helper()
	mem := enginetest.NewMemStorage(seed)
	cache := engine.NewCache(engine.NewCacheBudget(budgetBytes), 1)
	t.Cleanup(cache.Release)
	cache.SetWake(wake)
	return mem, memBackend{mem}, cache
}

// TestLargeBatchesCachedWithoutCopy: in a partition whose shard drains
// its cache (SetWake), a batch streamed or written in pieces is received
// into a region of the cache's arena and, once written, is its record
// in place. Method, after each such batch: no journal waits for a copy
// and none woke the shard; the cache grew by the batch's bytes alone; a
// poll of it leaves it in place as a span holding the bytes on disk; its
// writes tell the storage they may read the arena in place. A
// small batch still takes the held journal's path. A stream dropped
// midway caches nothing and leaves no pin, the next one is cached again,
// a failed piece write leaves no pin either, and Close leaves none.
func TestLargeBatchesCachedWithoutCopy(t *testing.T) {
	wakes := 0
	mem, storage, cache := drainedCache(t, 31, 64<<20, func() { wakes++ })
	options := testOptions()
	options.Cache, options.SegmentBytes = cache, 1<<30
	p := mustOpen(t, storage, options)
	serial := uint64(0)
	inPlace := 0 // writes the storage may take from the arena without a copy
	mem.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpWrite && op.InPlace {
			inPlace++
		}
		return nil
	}
	if _, err := appendBatch(t, storage, p, enginetest.Batch(1, randomMessages(newRandom(31), &serial, 3, 700)...), 10); err != nil {
		t.Fatal(err)
	}
	if cache.Stats().HeldCount != 1 || wakes != 1 || inPlace != 0 {
		t.Fatalf("a small batch: %d held journals, %d wakes, %d writes in place; want its journal held for the copy",
			cache.Stats().HeldCount, wakes, inPlace)
	}
	cache.Drain(1 << 62)
	wakes = 0
	checkLent := func(what string, record []byte, start int64, base uint64) {
		t.Helper()
		stats := cache.Stats()
		if stats.HeldCount != 0 || wakes != 0 || stats.PinnedCount != 0 {
			t.Fatalf("%s: %d held journals, %d wakes, %d pins; want none", what, stats.HeldCount, wakes, stats.PinnedCount)
		}
		file, _ := mem.File(firstLog)
		op := &engine.PollOp{Strategy: engine.PollOffset, Value: base, Count: 1000, Out: make([]byte, 0, len(record)+4096),
			Spans: make([]engine.PollSpan, 0, 2)}
		pollSpans(t, storage, p, op)
		if len(op.Spans) != 1 || !bytes.Equal(op.Spans[0].Data, file[start:start+int64(len(record))]) {
			t.Fatalf("%s: %d spans; want the batch in place, as on disk", what, len(op.Spans))
		}
		op.Spans[0].Release()
	}
	done := 0
	bytesBefore, start := cache.Stats().Bytes, p.SizeBytes()
	streamed := enginetest.Batch(5, largeMessages(&serial, 64)...)
	op, err := openStream(t, mem, p, streamed, 1).finish(&done)
	storage.drain()
	if err != nil || op.Err != nil || done != 1 || cache.Stats().Bytes != bytesBefore+int64(len(streamed)) {
		t.Fatalf("streamed: acks %d, cache bytes %d (from %d for %d): %v %v", done, cache.Stats().Bytes, bytesBefore,
			len(streamed), err, op.Err)
	}
	checkLent("streamed", streamed, start, op.BaseOffset)
	if inPlace == 0 {
		t.Fatal("no write of the streamed batch was marked in place")
	}

	bytesBefore, start = cache.Stats().Bytes, p.SizeBytes()
	pieced := countingAppend(t, p, enginetest.Batch(6, largeMessages(&serial, 64)...), 30, &done)
	storage.drain()
	if done != 2 || pieced.Err != nil || p.PiecedBatches() == 0 || cache.Stats().Bytes <= bytesBefore {
		t.Fatalf("pieced: acks %d, pieced %d, cache bytes %d from %d: %v", done, p.PiecedBatches(),
			cache.Stats().Bytes, bytesBefore, pieced.Err)
	}
	checkLent("pieced", pieced.Batch, start, pieced.BaseOffset)

	bytesBefore = cache.Stats().Bytes
	dropped := openStream(t, mem, p, enginetest.Batch(7, largeMessages(&serial, 64)...), 2)
	if err := dropped.feed(len(dropped.record) / 2); err != nil {
		t.Fatal(err)
	}
	p.StreamAbort(dropped.id)
	storage.drain()
	if stats := cache.Stats(); stats.Bytes != bytesBefore || stats.PinnedCount != 0 {
		t.Fatalf("after a dropped stream: %d cache bytes (from %d), %d pins", stats.Bytes, bytesBefore, stats.PinnedCount)
	}
	serial -= 64
	start = p.SizeBytes()
	again := enginetest.Batch(8, largeMessages(&serial, 64)...)
	op, err = openStream(t, mem, p, again, 3).finish(&done)
	storage.drain()
	if err != nil || op.Err != nil || done != 3 {
		t.Fatalf("stream after the dropped one: acks %d: %v %v", done, err, op.Err)
	}
	checkLent("streamed after a drop", again, start, op.BaseOffset)

	mem.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpWrite && len(op.Buffer) >= 128<<10 {
			return syscall.EIO
		}
		return nil
	}
	failing := openStream(t, mem, p, enginetest.Batch(9, largeMessages(&serial, 64)...), 4)
	err = failing.feed(len(failing.record))
	if err == nil {
		storage.drain()
		_, err = failing.finish(new(int))
	}
	mem.Inject = nil
	p.StreamAbort(failing.id)
	storage.drain()
	if stats := cache.Stats(); !errors.Is(err, syscall.EIO) || stats.PinnedCount != 0 {
		t.Fatalf("after a failed piece (%v): %d pins", err, stats.PinnedCount)
	}
	closePartition(t, storage, p)
	if stats := cache.Stats(); stats.PinnedCount != 0 || stats.HeldCount != 0 {
		t.Fatalf("after Close: %d pins, %d held journals", stats.PinnedCount, stats.HeldCount)
	}
	checkMessages(t, storage, mustOpen(t, storage, options), 0, 3+64*3)
}

// TestLentRegionEndsWhenItsSyncFails: a streamed batch received into a
// lent region whose fdatasync fails stops the partition, and the loan
// ends with it: the batch is not cached, and no pin is left on the
// region to stop the shard's cache from evicting past it for good.
func TestLentRegionEndsWhenItsSyncFails(t *testing.T) {
	mem, storage, cache := drainedCache(t, 32, 64<<20, func() {})
	options := testOptions()
	options.Cache, options.SegmentBytes, options.Durability = cache, 1<<30, engine.DurabilityPersisted
	p := mustOpen(t, storage, options)
	inPlace := 0
	mem.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpWrite && op.InPlace {
			inPlace++
		}
		if op.Code == engine.OpSync {
			return syscall.EIO
		}
		return nil
	}
	serial := uint64(0)
	op, err := openStream(t, mem, p, enginetest.Batch(1, largeMessages(&serial, 64)...), 1).finish(new(int))
	storage.drain()
	if err != nil || !engine.IsFatal(op.Err) || !engine.IsFatal(p.Err()) || inPlace == 0 {
		t.Fatalf("a lent batch whose sync failed: %v, op %v, partition %v, %d writes in place", err, op.Err, p.Err(), inPlace)
	}
	if stats := cache.Stats(); stats.PinnedCount != 0 || stats.Bytes != 0 {
		t.Fatalf("after the partition stopped: %d pins, %d cached bytes; want the loan ended, nothing cached",
			stats.PinnedCount, stats.Bytes)
	}
}

// TestSlowStreamYieldsItsRegion: a stream whose client stalls keeps its
// lent region while another partition of the shard writes on; once the
// ring comes round to the region, eviction stops there (LoanBlocked
// grows, PinBlocked does not) and the other partition's batches go
// uncached. YieldBlockingLoan then drops the stalled stream (its feeds
// fail, the batch may be appended whole), its region goes back, and the
// other partition's next batch is cached again. Method: a 4 MiB cache,
// 768 KB streamed batches on the second partition.
func TestSlowStreamYieldsItsRegion(t *testing.T) {
	mem, storage, cache := drainedCache(t, 33, 4<<20, func() {})
	open := func(directory string) *engine.Partition {
		options := testOptions()
		options.Directory, options.Cache, options.SegmentBytes = directory, cache, 1<<30
		return mustOpen(t, storage, options)
	}
	slow, busy := open("/slow/p"), open("/busy/p")
	serial := uint64(0)
	stalled := openStream(t, mem, slow, enginetest.Batch(1, largeMessages(&serial, 64)...), 1)
	if err := stalled.feed(len(stalled.record) / 2); err != nil {
		t.Fatal(err)
	}
	storage.drain()
	busySerial, done := uint64(0), 0
	cached := func() bool { // the busy partition's newest batch is served in place
		op := &engine.PollOp{Strategy: engine.PollOffset, Value: busySerial - 64, Count: 64, Out: make([]byte, 0, 1<<20),
			Spans: make([]engine.PollSpan, 0, 1)}
		pollSpans(t, storage, busy, op)
		for index := range op.Spans {
			op.Spans[index].Release()
		}
		return len(op.Spans) == 1
	}
	for round := 0; cache.LoanBlocked() == 0; round++ {
		if round == 40 {
			t.Fatal("40 batches through a 4 MiB cache never came round to the stalled stream's region")
		}
		if _, err := openStream(t, mem, busy, enginetest.Batch(2, largeMessages(&busySerial, 64)...), uint64(round)).finish(&done); err != nil {
			t.Fatal(err)
		}
		storage.drain()
	}
	if stats := cache.Stats(); stats.PinBlocked != 0 || stats.PinnedCount != 1 || cached() {
		t.Fatalf("blocked by the loan: %d pin-blocked, %d pins, newest batch cached %v; want 0, 1 (the loan), false",
			stats.PinBlocked, stats.PinnedCount, cached())
	}
	cache.YieldBlockingLoan()
	storage.drain()
	if err := stalled.feed(len(stalled.record) - 1); err == nil || cache.Stats().PinnedCount != 0 {
		t.Fatalf("after the yield: feed %v, %d pins; want the stream dropped and its region back", err,
			cache.Stats().PinnedCount)
	}
	if _, err := openStream(t, mem, busy, enginetest.Batch(2, largeMessages(&busySerial, 64)...), 99).finish(&done); err != nil {
		t.Fatal(err)
	}
	storage.drain()
	if !cached() {
		t.Fatalf("the busy partition's batch after the yield is not cached: %+v", cache.Stats())
	}
	if _, err := appendBatch(t, storage, slow, stalled.record, 30); err != nil {
		t.Fatalf("the dropped stream's batch appended whole: %v", err)
	}
	checkMessages(t, storage, slow, 0, 64)
}

// TestStoppedPartitionsStreamAbortGivesItsRegionBack: a partition that
// stops (a consumer offset's fdatasync fails) while a stream is received
// into a lent region answers the stream's next feed with its fatal error
// and drops nothing itself; the region stays lent until the stream's
// owner aborts it, which gives it back.
func TestStoppedPartitionsStreamAbortGivesItsRegionBack(t *testing.T) {
	mem, storage, cache := drainedCache(t, 34, 64<<20, func() {})
	options := testOptions()
	options.Cache, options.SegmentBytes, options.Durability = cache, 1<<30, engine.DurabilityPersisted
	p := mustOpen(t, storage, options)
	serial := uint64(0)
	if _, err := appendBatch(t, storage, p, enginetest.Batch(1, randomMessages(newRandom(34), &serial, 3, 700)...), 10); err != nil {
		t.Fatal(err)
	}
	cache.Drain(1 << 62)
	stream := openStream(t, mem, p, enginetest.Batch(2, largeMessages(&serial, 64)...), 5)
	if err := stream.feed(len(stream.record) / 2); err != nil {
		t.Fatal(err)
	}
	storage.drain()
	mem.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpSync {
			return syscall.EIO
		}
		return nil
	}
	stored := &engine.OffsetOp{Consumer: engine.Consumer{Kind: engine.ConsumerSingle, ID: 1}, Offset: 1,
		Done: func(*engine.OffsetOp) {}}
	if err := p.StoreOffset(stored); err != nil {
		t.Fatal(err)
	}
	storage.drain()
	if err := p.StreamFeed(stream.id, stream.record[:len(stream.record)-1]); !engine.IsFatal(err) ||
		cache.Stats().PinnedCount != 1 {
		t.Fatalf("a feed after the partition stopped: %v, %d pins; want the fatal error, the region still lent", err,
			cache.Stats().PinnedCount)
	}
	p.StreamAbort(stream.id)
	storage.drain()
	if stats := cache.Stats(); stats.PinnedCount != 0 {
		t.Fatalf("after the abort: %d pins; want the region back", stats.PinnedCount)
	}
}
