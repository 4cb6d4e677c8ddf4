package engine_test

import (
	"bytes"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// openCachedPartition opens a partition in directory on a counting memory
// storage seeded with seed, with a 1 MiB cache of one shard (released at
// the test's end) and 64 KiB disk reads.
func openCachedPartition(t *testing.T, seed uint64, directory string) (*countingBackend, *engine.Cache, *engine.Partition) {
	t.Helper()
	storage := &countingBackend{memBackend: memBackend{enginetest.NewMemStorage(seed)}}
	cache := engine.NewCache(engine.NewCacheBudget(1<<20), 1)
	t.Cleanup(cache.Release)
	options := engine.PartitionOptions{Directory: directory, SegmentBytes: 1 << 30, Cache: cache, Logger: quiet, ReadBytes: 64 << 10}
	return storage, cache, mustOpen(t, storage, options)
}

// TestPollAfterEviction: a poll the cache serves and the same poll after
// the cache evicted those batches return identical bytes, the second from
// disk; a poll spanning evicted and cached batches returns them all in
// order. Method: a 1 MiB cache, one partition, a first batch polled
// while cached (no disk read), then enough batches to evict it.
func TestPollAfterEviction(t *testing.T) {
	storage, cache, p := openCachedPartition(t, 11, "/e/p")
	random := newRandom(12)
	serial := uint64(0)
	var model []enginetest.Message
	appendMessages := func(count int) {
		messages := randomMessages(random, &serial, count, 4000)
		if _, err := appendBatch(t, storage, p, enginetest.Batch(1, messages...), uint64(1+len(model))); err != nil {
			t.Fatal(err)
		}
		model = append(model, messages...)
	}
	appendMessages(8)
	readsBefore := storage.reads
	cached := &engine.PollOp{Strategy: engine.PollOffset, Value: 0, Count: 8}
	compareMessages(t, poll(t, storage, p, cached), model, 0)
	if storage.reads != readsBefore {
		t.Fatalf("a poll of the batch just written read the disk %d times", storage.reads-readsBefore)
	}
	fromCache := bytes.Clone(cached.Out)
	for cache.Stats().EvictedCount == 0 {
		appendMessages(50)
	}
	readsBefore = storage.reads
	evicted := &engine.PollOp{Strategy: engine.PollOffset, Value: 0, Count: 8}
	compareMessages(t, poll(t, storage, p, evicted), model[:8], 0)
	if storage.reads == readsBefore {
		t.Fatalf("a poll of an evicted batch read nothing from disk")
	}
	if !bytes.Equal(evicted.Out, fromCache) {
		t.Fatalf("the disk returned other bytes (%d) than the cache did (%d)", len(evicted.Out), len(fromCache))
	}
	spanning := &engine.PollOp{Strategy: engine.PollOffset, Value: 0, Count: uint32(len(model))}
	compareMessages(t, poll(t, storage, p, spanning), model, 0)
	last := len(model) - 50
	readsBefore = storage.reads
	compareMessages(t, poll(t, storage, p, &engine.PollOp{Strategy: engine.PollOffset, Value: uint64(last), Count: 50}), model[last:], uint64(last))
	if storage.reads != readsBefore {
		t.Fatalf("a poll of the newest batch read the disk")
	}
}

// TestClosedPartitionGivesItsCacheRoomBack: a closed (or deleted)
// partition's records are dead, so the next partition's batches reuse
// their room instead of evicting or growing. Method: partition A fills
// over half of a 1 MiB cache and closes; the cache counts no live bytes
// and its tail passed A's records; partition B then writes over half of
// it too (without A's death, A's oldest records would be evicted)
// without anything evicted or the capacity growing, and polls it all
// back from the cache.
func TestClosedPartitionGivesItsCacheRoomBack(t *testing.T) {
	storage, cache, first := openCachedPartition(t, 13, "/e/a")
	random := newRandom(14)
	serial := uint64(0)
	write := func(p *engine.Partition) []enginetest.Message {
		var all []enginetest.Message
		for range 15 {
			messages := randomMessages(random, &serial, 20, 4000)
			if _, err := appendBatch(t, storage, p, enginetest.Batch(1, messages...), 1); err != nil {
				t.Fatal(err)
			}
			all = append(all, messages...)
		}
		return all
	}
	write(first)
	filled := cache.Stats()
	if filled.Bytes < 512<<10 || filled.Records == 0 {
		t.Fatalf("stats %+v: the first partition's batches were not cached", filled)
	}
	closePartition(t, storage, first)
	if closed := cache.Stats(); closed.Bytes != 0 || closed.Records != 0 || closed.ForgottenCount != filled.Records {
		t.Fatalf("stats after the close %+v: want no records left, %d forgotten", closed, filled.Records)
	}
	second := mustOpen(t, storage, engine.PartitionOptions{Directory: "/e/b", SegmentBytes: 1 << 30, Cache: cache,
		Logger: quiet, ReadBytes: 64 << 10})
	model := write(second)
	after := cache.Stats()
	if after.CapacityBytes != filled.CapacityBytes || after.EvictedCount != 0 || after.Bytes < 512<<10 {
		t.Fatalf("stats %+v after the same writes to a second partition: want capacity %d kept, nothing evicted",
			after, filled.CapacityBytes)
	}
	readsBefore := storage.reads
	compareMessages(t, poll(t, storage, second, &engine.PollOp{Strategy: engine.PollOffset, Value: 0,
		Count: uint32(len(model))}), model, 0)
	if storage.reads != readsBefore {
		t.Fatal("the second partition's batches were read from disk, not the cache")
	}
	closePartition(t, storage, second)
}
