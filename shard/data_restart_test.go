package shard

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/whippetio/whippet/engine"
)

// TestDataRestart: partitions on both shards take messages and offsets,
// the runtime stops, and a new runtime on the same directory, given the
// partition list the metadata would give it, serves every message and
// offset and continues at the next offset. Run twice in a row, so the
// second start recovers what a recovered partition wrote.
func TestDataRestart(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		directory := t.TempDir()
		topic := PartitionKey{Stream: 2, Topic: 5}
		configs := []PartitionConfig{
			{Durability: engine.DurabilityPersisted},
			{Durability: engine.DurabilityWritten},
			{Durability: engine.DurabilityMemory},
		}
		var specs []PartitionSpec
		h := startData(t, backend, DataOptions{Directory: directory})
		for index, config := range configs {
			key := topic
			key.Topic += uint32(index)
			h.create(key, 4, config)
			for partition := range uint32(4) {
				key.Partition = partition
				specs = append(specs, PartitionSpec{Key: key, Config: config})
			}
		}
		consumer := engine.Consumer{Kind: engine.ConsumerGroup, ID: 1}
		for generation := range 3 {
			for _, spec := range specs {
				for batch := range 3 {
					first := generation*30 + batch*10
					result := h.appendAt(batch%h.shardCount(), spec.Key, first, 10, 0)
					if result.Err != nil || result.BaseOffset != uint64(first) {
						t.Fatalf("generation %d: append to %v: base %d, %v", generation, spec.Key, result.BaseOffset, result.Err)
					}
				}
				stored := uint64(generation*30 + 7)
				if result := h.offsetOp(0, spec.Key, consumer, stored, (*DataShard).StoreOffset); result.Err != nil {
					t.Fatal(result.Err)
				}
			}
			h.stop()
			h = startData(t, backend, DataOptions{Directory: directory, Partitions: specs})
			total := (generation + 1) * 30
			for index, spec := range specs {
				origin := index % h.shardCount()
				expectRange(t, "after restart", h.poll(origin, spec.Key, engine.PollFirst, 0, 1000, engine.Consumer{}, false), 0, total)
				got := h.offsetOp(origin, spec.Key, consumer, 0, (*DataShard).GetOffset)
				if got.Err != nil || !got.Found || got.Offset != uint64(generation*30+7) {
					t.Fatalf("generation %d: offset of %v after restart: %+v", generation, spec.Key, got)
				}
			}
		}
	})
}

// TestDataDurabilityWritten: under written and persisted durability an
// acknowledged batch is in its segment file when Done runs (read back
// with a plain read of the file while the runtime serves).
func TestDataDurabilityWritten(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		directory := t.TempDir()
		h := startData(t, backend, DataOptions{Directory: directory})
		for index, durability := range []engine.Durability{engine.DurabilityWritten, engine.DurabilityPersisted} {
			key := PartitionKey{Stream: 7, Topic: uint32(index)}
			h.create(key, 2, PartitionConfig{Durability: durability})
			for partition := range uint32(2) {
				key.Partition = partition
				for batch := range 5 {
					sequence := 0x5EC0_0000 + 1000*int(partition) + batch
					if result := h.appendAt(batch%h.shardCount(), key, sequence, 1, 0); result.Err != nil {
						t.Fatal(result.Err)
					}
					log, err := os.ReadFile(filepath.Join(PartitionDirectory(directory, key), "00000000000000000000.log"))
					if err != nil {
						t.Fatal(err)
					}
					payload := make([]byte, 8)
					binary.LittleEndian.PutUint64(payload, uint64(sequence))
					if !bytes.Contains(log, payload) {
						t.Fatalf("%v (%v): acknowledged message %d not in the segment file", key, durability, sequence)
					}
				}
			}
		}
	})
}

// TestDataOpsDuringRecovery: ops started the moment a restarted runtime
// begins recovering (on the owner, from the other shard, and from the
// owner's OnStart, when the partition is certainly still opening) park
// until it is open and then see the recovered messages.
func TestDataOpsDuringRecovery(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		directory := t.TempDir()
		h := startData(t, backend, DataOptions{Directory: directory})
		shards := h.shardCount()
		key := keysOwnedBy(9, 1, shards-1, shards, 1)[0]
		h.create(key, 1, PartitionConfig{})
		for batch := range 20 {
			if result := h.appendAt(0, key, batch*10, 10, 0); result.Err != nil {
				t.Fatal(result.Err)
			}
		}
		h.stop()
		type early struct {
			opening bool
			result  dataResult
		}
		polled := make(chan early, 1)
		appended := make(chan dataResult, 1)
		onStart := func(ds *DataShard) {
			if ds.Shard().ID() != shards-1 {
				return
			}
			opening := ds.partitions[key] != nil && ds.partitions[key].state == partitionOpening
			poll := ds.Get()
			poll.Key, poll.Strategy, poll.Count, poll.Out = key, engine.PollFirst, 1000, make([]byte, 0, 1<<20)
			poll.Done = func(op *DataOp) {
				polled <- early{opening: opening, result: dataResult{Err: op.Err, Out: op.Out, Messages: op.Messages,
					OffsetFirst: op.OffsetFirst, OffsetLast: op.OffsetLast}}
				ds.Put(op)
			}
			ds.Poll(poll)
			add := ds.Get()
			add.Key, add.Batch = key, testBatch(200, 10, 64)
			add.Done = func(op *DataOp) {
				appended <- dataResult{Err: op.Err, BaseOffset: op.BaseOffset}
				ds.Put(op)
			}
			ds.Append(add)
		}
		specs := []PartitionSpec{{Key: key}}
		h = startDataWith(t, backend, DataOptions{Directory: directory, Partitions: specs}, onStart)
		remote := h.poll(0, key, engine.PollOffset, 100, 1000, engine.Consumer{}, false)
		first := <-polled
		if !first.opening {
			t.Fatal("the partition was not opening when the owner's OnStart ran")
		}
		expectRange(t, "poll parked during recovery", first.result, 0, 200)
		if result := <-appended; result.Err != nil || result.BaseOffset != 200 {
			t.Fatalf("append parked during recovery: base %d, %v", result.BaseOffset, result.Err)
		}
		if remote.Err != nil || remote.Messages < 100 {
			t.Fatalf("poll from the other shard during recovery: %d messages, %v", remote.Messages, remote.Err)
		}
	})
}
