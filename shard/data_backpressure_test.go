package shard

import (
	"errors"
	"testing"

	"github.com/whippetio/whippet/engine"
)

// pipeline starts count ops on shard in one loop turn (fill sets each
// one's inputs and starts it), then runs started (if any), and returns
// every result in start order once all are done, with the shard's count
// of messages held for a full queue.
func (h *dataHarness) pipeline(shard, count int, fill func(ds *DataShard, op *DataOp, index int), started func()) ([]dataResult, uint64) {
	results := make([]dataResult, count)
	done := make(chan uint64, 1)
	h.inject[shard] <- func(ds *DataShard) {
		left := count
		for index := range count {
			op := ds.Get()
			op.Done = func(op *DataOp) {
				results[index] = dataResult{Err: op.Err, BaseOffset: op.BaseOffset, Messages: op.Messages}
				ds.Put(op)
				left--
				if left == 0 {
					done <- ds.heldTotal
				}
			}
			fill(ds, op, index)
		}
		if started != nil {
			started()
		}
	}
	var held uint64
	h.wait(waitValue(done, &held))
	return results, held
}

func waitValue(source <-chan uint64, into *uint64) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		*into = <-source
		close(done)
	}()
	return done
}

// TestDataFullQueue: one shard starts more appends to a partition of the
// other shard in one turn than the queue between them holds. The excess
// is held and resent, nothing is lost, and the partition stores them in
// the order they were started.
func TestDataFullQueue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		h := startData(t, backend, DataOptions{Directory: t.TempDir()})
		if h.shardCount() < 2 {
			t.Skip("one CPU allowed: no peer shard")
		}
		key := keysOwnedBy(1, 1, 1, h.shardCount(), 1)[0]
		h.create(key, 1, PartitionConfig{Durability: engine.DurabilityMemory})
		count := 4 * queueSlotCount
		batches := make([][]byte, count)
		for index := range batches {
			batches[index] = testBatch(index, 1, 16)
		}
		// Shard 1 is held in a test closure until every append has started,
		// so the queue fills whatever the two threads' speeds.
		blocked, release := make(chan struct{}), make(chan struct{})
		h.inject[1] <- func(*DataShard) { close(blocked); <-release }
		h.wait(blocked)
		results, held := h.pipeline(0, count, func(ds *DataShard, op *DataOp, index int) {
			op.Key, op.Batch = key, batches[index]
			ds.Append(op)
		}, func() { close(release) })
		if held < uint64(count-queueSlotCount) {
			t.Fatalf("%d messages held; a blocked peer's queue takes %d of %d", held, queueSlotCount, count)
		}
		for index, result := range results {
			if result.Err != nil || result.BaseOffset != uint64(index) {
				t.Fatalf("append %d: base offset %d, %v", index, result.BaseOffset, result.Err)
			}
		}
		expectRange(t, "after backpressure", h.poll(1, key, engine.PollFirst, 0, uint32(count), engine.Consumer{}, false), 0, count)
		t.Logf("%d of %d requests held for a full queue", held, count)
	})
}

// TestDataParkedDuringPurge: appends that arrive while a purge runs park
// in order, beyond partitionParkedMax they fail with ErrDataBusy, and
// once the purge is done the parked ones land from offset 0 in order.
func TestDataParkedDuringPurge(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		h := startData(t, backend, DataOptions{Directory: t.TempDir()})
		key := keysOwnedBy(6, 0, 0, h.shardCount(), 1)[0]
		h.create(key, 1, PartitionConfig{Durability: engine.DurabilityMemory})
		for batch := range 5 {
			if result := h.appendAt(0, key, batch*10, 10, 0); result.Err != nil {
				t.Fatal(result.Err)
			}
		}
		count := partitionParkedMax + 100
		batch := testBatch(0, 1, 16)
		results, _ := h.pipeline(0, count+1, func(ds *DataShard, op *DataOp, index int) {
			if index == 0 {
				op.Key, op.PartitionCount = key, 1
				ds.Purge(op)
				return
			}
			op.Key, op.Batch = key, batch
			ds.Append(op)
		}, nil)
		if results[0].Err != nil {
			t.Fatalf("purge: %v", results[0].Err)
		}
		stored := 0
		for index, result := range results[1:] {
			switch {
			case result.Err == nil:
				if result.BaseOffset != uint64(stored) {
					t.Fatalf("parked append %d stored at %d, want %d", index, result.BaseOffset, stored)
				}
				stored++
			case errors.Is(result.Err, ErrDataBusy):
			default:
				t.Fatalf("append %d: %v", index, result.Err)
			}
		}
		if stored < partitionParkedMax || stored == count {
			t.Fatalf("%d of %d appends stored; want the parked limit %d honoured", stored, count, partitionParkedMax)
		}
		stats := h.call(1%h.shardCount(), func(ds *DataShard, op *DataOp) { op.Key = key; ds.Stats(op) })
		if stats.Err != nil || stats.Partition.MessagesCount != uint64(stored) || stats.Partition.OffsetFirst != 0 {
			t.Fatalf("stats after purge and parked appends: %+v", stats)
		}
	})
}
