package shard

import (
	"errors"
	"testing"

	"github.com/whippetio/whippet/engine"
)

// appendAt appends count messages numbered from first with an explicit
// base timestamp (µs).
func (h *dataHarness) appendAt(shard int, key PartitionKey, first, count int, timestamp uint64) dataResult {
	return h.call(shard, func(ds *DataShard, op *DataOp) {
		op.Key, op.Batch, op.Timestamp = key, testBatch(first, count, 64), timestamp
		ds.Append(op)
	})
}

func (h *dataHarness) offsetOp(shard int, key PartitionKey, consumer engine.Consumer, offset uint64, start func(ds *DataShard, op *DataOp)) dataResult {
	return h.call(shard, func(ds *DataShard, op *DataOp) {
		op.Key, op.Consumer, op.Offset = key, consumer, offset
		start(ds, op)
	})
}

// expectRange checks that a poll returned exactly the offsets
// first..first+count-1, each carrying its own sequence number.
func expectRange(t *testing.T, what string, result dataResult, first, count int) {
	t.Helper()
	if result.Err != nil {
		t.Fatalf("%s: %v", what, result.Err)
	}
	offsets, sequences := decodeSequences(t, result.Out)
	if len(offsets) != count || int(result.Messages) != count {
		t.Fatalf("%s: %d messages (%d reported), want %d", what, len(offsets), result.Messages, count)
	}
	for index := range offsets {
		want := uint64(first + index)
		if offsets[index] != want || sequences[index] != want {
			t.Fatalf("%s: message %d has offset %d sequence %d, want %d", what, index, offsets[index], sequences[index], want)
		}
	}
	if count > 0 && (result.OffsetFirst != uint64(first) || result.OffsetLast != uint64(first+count-1)) {
		t.Fatalf("%s: reported offsets %d..%d, want %d..%d", what, result.OffsetFirst, result.OffsetLast, first, first+count-1)
	}
}

// TestDataPollStrategies: every polling strategy, from the owner and from
// the other shard, over 100 messages in 10 batches with known timestamps.
func TestDataPollStrategies(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		h := startData(t, backend, DataOptions{Directory: t.TempDir()})
		shards := h.shardCount()
		key := keysOwnedBy(3, 1, shards-1, shards, 1)[0]
		h.create(key, 1, PartitionConfig{})
		const base = uint64(1_000_000)
		for batch := range 10 {
			if result := h.appendAt(0, key, batch*10, 10, base+uint64(batch)*1000); result.Err != nil {
				t.Fatal(result.Err)
			}
		}
		none := engine.Consumer{}
		for origin := range shards {
			expectRange(t, "offset 15", h.poll(origin, key, engine.PollOffset, 15, 20, none, false), 15, 20)
			expectRange(t, "timestamp of batch 3", h.poll(origin, key, engine.PollTimestamp, base+3000, 10, none, false), 30, 10)
			expectRange(t, "timestamp between batches", h.poll(origin, key, engine.PollTimestamp, base+3500, 10, none, false), 40, 10)
			expectRange(t, "first", h.poll(origin, key, engine.PollFirst, 0, 5, none, false), 0, 5)
			expectRange(t, "last", h.poll(origin, key, engine.PollLast, 0, 7, none, false), 93, 7)
			expectRange(t, "count past the end", h.poll(origin, key, engine.PollOffset, 95, 50, none, false), 95, 5)
			expectRange(t, "offset past the end", h.poll(origin, key, engine.PollOffset, 100, 10, none, false), 0, 0)
			result := h.poll(origin, key, engine.PollOffset, 100, 10, none, false)
			if result.CurrentOffset != 99 {
				t.Fatalf("current offset %d, want 99", result.CurrentOffset)
			}
		}
	})
}

// TestDataOffsets: next-polling with auto-commit, stored offsets of a
// consumer and of a consumer group with the same id kept apart, get,
// delete and the error statuses, from both shards.
func TestDataOffsets(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		h := startData(t, backend, DataOptions{Directory: t.TempDir()})
		shards := h.shardCount()
		key := keysOwnedBy(4, 0, 0, shards, 1)[0]
		h.create(key, 1, PartitionConfig{})
		remote := shards - 1
		single := engine.Consumer{Kind: engine.ConsumerSingle, ID: 3}
		group := engine.Consumer{Kind: engine.ConsumerGroup, ID: 3}
		if result := h.offsetOp(remote, key, single, 0, (*DataShard).StoreOffset); !errors.Is(result.Err, engine.ErrInvalidOffset) {
			t.Fatalf("store on an empty partition: %v", result.Err)
		}
		for batch := range 10 {
			if result := h.appendAt(remote, key, batch*10, 10, 0); result.Err != nil {
				t.Fatal(result.Err)
			}
		}
		expectRange(t, "next, nothing stored", h.poll(remote, key, engine.PollNext, 0, 10, single, true), 0, 10)
		expectRange(t, "next after auto-commit", h.poll(0, key, engine.PollNext, 0, 10, single, true), 10, 10)
		expectRange(t, "group next, nothing stored", h.poll(remote, key, engine.PollNext, 0, 4, group, false), 0, 4)
		got := h.offsetOp(remote, key, single, 0, (*DataShard).GetOffset)
		if got.Err != nil || !got.Found || got.Offset != 19 || got.CurrentOffset != 99 {
			t.Fatalf("get after auto-commit: %+v", got)
		}
		if got := h.offsetOp(0, key, group, 0, (*DataShard).GetOffset); got.Err != nil || got.Found {
			t.Fatalf("group offset before any store: %+v", got)
		}
		if result := h.offsetOp(remote, key, group, 50, (*DataShard).StoreOffset); result.Err != nil {
			t.Fatal(result.Err)
		}
		expectRange(t, "group next after store", h.poll(0, key, engine.PollNext, 0, 10, group, false), 51, 10)
		expectRange(t, "single unaffected by the group", h.poll(0, key, engine.PollNext, 0, 1, single, false), 20, 1)
		if result := h.offsetOp(0, key, single, 100, (*DataShard).StoreOffset); !errors.Is(result.Err, engine.ErrInvalidOffset) {
			t.Fatalf("store past the current offset: %v", result.Err)
		}
		if result := h.offsetOp(remote, key, single, 0, (*DataShard).DeleteOffset); result.Err != nil {
			t.Fatal(result.Err)
		}
		if got := h.offsetOp(0, key, single, 0, (*DataShard).GetOffset); got.Err != nil || got.Found {
			t.Fatalf("get after delete: %+v", got)
		}
		if result := h.offsetOp(0, key, single, 0, (*DataShard).DeleteOffset); !errors.Is(result.Err, engine.ErrOffsetNotFound) {
			t.Fatalf("delete twice: %v", result.Err)
		}
		expectRange(t, "next after delete", h.poll(remote, key, engine.PollNext, 0, 3, single, false), 0, 3)
	})
}
