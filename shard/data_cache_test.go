package shard

import (
	"bytes"
	"testing"
	"time"

	"github.com/whippetio/whippet/engine"
)

// TestDataPollCacheTiers: a poll right after an append's acknowledgement
// is served from the written journal the cache still holds, a later one
// from the cache's arena once the shard drained it, and one after the
// cache evicted the batch from disk; all three return identical bytes.
// Method: a 1 MiB budget; a first append makes the cache map its arena
// and the test waits for its populator; then a poll started from an
// append's Done on the owner shard (before any drain can run), then
// appends until that batch is evicted.
func TestDataPollCacheTiers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		h := startData(t, backend, DataOptions{Directory: t.TempDir(), CacheBytes: 1 << 20})
		shards := h.shardCount()
		key := keysOwnedBy(4, 1, shards-1, shards, 1)[0]
		owner := shards - 1
		h.create(key, 1, PartitionConfig{})
		if result := h.append(owner, key, testBatch(0, 10, 64)); result.Err != nil {
			t.Fatal(result.Err)
		}
		h.waitReady(owner, 64<<10)
		held, fromJournal := h.appendThenPoll(owner, key, testBatch(10, 10, 64))
		if held == 0 {
			t.Fatalf("no journal held when the append was acknowledged")
		}
		expectRange(t, "poll from the held journal", fromJournal, 10, 10)
		h.waitDrained(owner)
		fromArena := h.poll(owner, key, engine.PollOffset, 10, 10, engine.Consumer{}, false)
		expectRange(t, "poll from the arena", fromArena, 10, 10)
		next := 20
		for h.cacheStats(owner).EvictedCount == 0 {
			if result := h.append(0, key, testBatch(next, 100, 1000)); result.Err != nil {
				t.Fatal(result.Err)
			}
			next += 100
		}
		h.waitDrained(owner)
		fromDisk := h.poll(0, key, engine.PollOffset, 10, 10, engine.Consumer{}, false)
		expectRange(t, "poll from disk", fromDisk, 10, 10)
		if !bytes.Equal(fromJournal.Out, fromArena.Out) || !bytes.Equal(fromArena.Out, fromDisk.Out) {
			t.Fatalf("the journal, the arena and the disk returned different bytes")
		}
		expectRange(t, "poll spanning disk and cache", h.poll(0, key, engine.PollOffset, 0, uint32(next), engine.Consumer{}, false), 0, next)
	})
}

// appendThenPoll appends batch on shard (the key's owner) and, from the
// append's Done, polls it back at once; it returns the cache's held
// journals at the acknowledgement and the poll's result.
func (h *dataHarness) appendThenPoll(shard int, key PartitionKey, batch []byte) (int, dataResult) {
	h.t.Helper()
	held := make(chan int, 1)
	result := h.call(shard, func(ds *DataShard, poll *DataOp) {
		appendOp := ds.Get()
		appendOp.Key, appendOp.Batch = key, batch
		appendOp.Done = func(op *DataOp) {
			if op.Err != nil {
				h.t.Errorf("append: %v", op.Err)
			}
			held <- ds.cache.Stats().HeldCount
			base := op.BaseOffset
			ds.Put(op)
			poll.Key, poll.Strategy, poll.Value = key, engine.PollOffset, base
			poll.Count, poll.Out = 10, make([]byte, 0, 1<<20)
			ds.Poll(poll)
		}
		ds.Append(appendOp)
	})
	return <-held, result
}

func (h *dataHarness) cacheStats(shard int) engine.CacheStats {
	var stats engine.CacheStats
	h.on(shard, func(ds *DataShard) { stats = ds.cache.Stats() })
	return stats
}

// waitReady waits until shard's cache has bytes of memory ready.
func (h *dataHarness) waitReady(shard int, bytes int64) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.cacheStats(shard).ReadyBytes < bytes {
		if time.Now().After(deadline) {
			h.t.Fatalf("the cache's populator made less than %d bytes ready in 10 s", bytes)
		}
		time.Sleep(time.Millisecond) // the populator is a goroutine of its own
	}
}

// waitDrained waits until shard's cache copied every held journal.
func (h *dataHarness) waitDrained(shard int) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.cacheStats(shard).HeldCount > 0 {
		if time.Now().After(deadline) {
			h.t.Fatalf("the cache still holds journals after 10 s")
		}
		time.Sleep(time.Millisecond) // the drain runs on the shard's timer
	}
}
