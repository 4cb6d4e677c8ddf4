package shard

import (
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/whippetio/whippet/engine"
)

// TestDataManyPartitionsConcurrent: every shard pipelines appends to
// every partition of a 32-partition topic at once (seeded sizes); each
// partition must hold every message exactly once, at contiguous offsets,
// with each origin's messages in the order that origin started them.
func TestDataManyPartitionsConcurrent(t *testing.T) {
	seed := *dataSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -data.seed=%d)", seed, seed)
	forEachBackend(t, func(t *testing.T, backend string) {
		h := startData(t, backend, DataOptions{Directory: t.TempDir()})
		shards := h.shardCount()
		const partitions, perOrigin = 32, 40
		topic := PartitionKey{Stream: 11, Topic: 3}
		h.create(topic, partitions, PartitionConfig{Durability: engine.DurabilityWritten})
		random := rand.New(rand.NewPCG(seed, 1))
		batches := make([][][]byte, shards) // [origin][op]
		for origin := range shards {
			for index := range partitions * perOrigin {
				// origin, batch number, message number within the batch
				sequence := origin<<32 | index/partitions<<8
				batches[origin] = append(batches[origin], testBatch(sequence, 1+random.IntN(3), 8+random.IntN(2000)))
			}
		}
		finished := make([]chan []dataResult, shards)
		for origin := range shards {
			finished[origin] = make(chan []dataResult, 1)
			go func() {
				results, _ := h.pipeline(origin, partitions*perOrigin, func(ds *DataShard, op *DataOp, index int) {
					op.Key = topic
					op.Key.Partition = uint32(index % partitions)
					op.Batch = batches[origin][index]
					ds.Append(op)
				}, nil)
				finished[origin] <- results
			}()
		}
		for origin := range shards {
			for index, result := range <-finished[origin] {
				if result.Err != nil {
					t.Fatalf("origin %d append %d: %v", origin, index, result.Err)
				}
			}
		}
		for partition := range uint32(partitions) {
			key := topic
			key.Partition = partition
			checkOriginOrder(t, h.poll(int(partition)%shards, key, engine.PollFirst, 0, 1<<20, engine.Consumer{}, false), shards, perOrigin)
		}
	})
}

// checkOriginOrder checks a whole partition: contiguous offsets, and per
// origin the batches 0..perOrigin-1 in order (a message's sequence number
// is origin<<32 | batch<<8 | its index in the batch).
func checkOriginOrder(t *testing.T, result dataResult, shards, perOrigin int) {
	t.Helper()
	if result.Err != nil {
		t.Fatal(result.Err)
	}
	offsets, sequences := decodeSequences(t, result.Out)
	next := make([]int, shards)
	for index, offset := range offsets {
		if offset != uint64(index) {
			t.Fatalf("offset %d at position %d", offset, index)
		}
		origin, batch := int(sequences[index]>>32), int(uint32(sequences[index])>>8)
		if batch != next[origin] && batch != next[origin]-1 {
			t.Fatalf("origin %d: batch %d after batch %d", origin, batch, next[origin]-1)
		}
		next[origin] = batch + 1
	}
	for origin, count := range next {
		if count != perOrigin {
			t.Fatalf("origin %d: %d batches stored, want %d", origin, count, perOrigin)
		}
	}
}

// TestDataTopicOps: topic stats and shard totals, purge (messages and
// stored offsets gone, offsets restart at 0), delete (ops then fail
// with ErrPartitionNotFound), create again (empty), and a delete and a
// create of the same partitions started in one turn (the create waits for
// the delete).
func TestDataTopicOps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		directory := t.TempDir()
		h := startData(t, backend, DataOptions{Directory: directory})
		shards := h.shardCount()
		topic := PartitionKey{Stream: 4, Topic: 4}
		h.create(topic, 6, PartitionConfig{})
		for partition := range uint32(6) {
			key := topic
			key.Partition = partition
			for batch := range int(partition) {
				if result := h.appendAt(batch%shards, key, batch*3, 3, 0); result.Err != nil {
					t.Fatal(result.Err)
				}
			}
		}
		stats := h.call(shards-1, func(ds *DataShard, op *DataOp) {
			op.Key, op.PartitionCount, op.Stats = topic, 7, make([]PartitionStats, 7)
			ds.TopicStats(op)
		})
		for partition, stat := range stats.Stats {
			if partition == 6 {
				if !errors.Is(stat.Err, ErrPartitionNotFound) {
					t.Fatalf("stats of a partition never created: %+v", stat)
				}
				continue
			}
			if stat.Err != nil || stat.MessagesCount != uint64(3*partition) || stat.SizeBytes == 0 && partition > 0 {
				t.Fatalf("partition %d stats: %+v", partition, stat)
			}
		}
		all := h.call(0, func(ds *DataShard, op *DataOp) { op.Shards = make([]ShardDataStats, shards); ds.StatsAll(op) })
		var partitions, messages uint64
		for _, totals := range all.Shards {
			partitions += uint64(totals.Partitions)
			messages += totals.MessagesCount
		}
		if all.Err != nil || partitions != 6 || messages != 3*(0+1+2+3+4+5) {
			t.Fatalf("totals: %+v", all)
		}
		consumer := engine.Consumer{Kind: engine.ConsumerSingle, ID: 9}
		last := PartitionKey{Stream: 4, Topic: 4, Partition: 5}
		if result := h.offsetOp(0, last, consumer, 4, (*DataShard).StoreOffset); result.Err != nil {
			t.Fatal(result.Err)
		}
		h.topicOp(shards-1, topic, 6, (*DataShard).Purge)
		purged := h.call(0, func(ds *DataShard, op *DataOp) {
			op.Key, op.PartitionCount, op.Stats = topic, 6, make([]PartitionStats, 6)
			ds.TopicStats(op)
		})
		for partition, stat := range purged.Stats {
			if stat.Err != nil || stat.MessagesCount != 0 {
				t.Fatalf("partition %d after purge: %+v", partition, stat)
			}
		}
		if got := h.offsetOp(0, last, consumer, 0, (*DataShard).GetOffset); got.Err != nil || got.Found {
			t.Fatalf("stored offset after purge: %+v", got)
		}
		if result := h.appendAt(1%shards, last, 0, 1, 0); result.Err != nil || result.BaseOffset != 0 {
			t.Fatalf("append after purge: base %d, %v", result.BaseOffset, result.Err)
		}
		h.topicOp(0, topic, 6, (*DataShard).Delete)
		key := topic
		key.Partition = 3
		if result := h.append(shards-1, key, testBatch(0, 1, 8)); !errors.Is(result.Err, ErrPartitionNotFound) {
			t.Fatalf("append after delete: %v", result.Err)
		}
		if err := RemoveTopicDirectory(directory, topic.Stream, topic.Topic); err != nil {
			t.Fatalf("remove the deleted topic's directory: %v", err)
		}
		h.create(topic, 6, PartitionConfig{})
		if result := h.appendAt(0, key, 0, 2, 0); result.Err != nil || result.BaseOffset != 0 {
			t.Fatalf("append to the recreated partition: base %d, %v", result.BaseOffset, result.Err)
		}
		results, _ := h.pipeline(0, 3, func(ds *DataShard, op *DataOp, index int) {
			op.Key, op.PartitionCount = topic, 6
			switch index {
			case 0:
				ds.Delete(op)
			case 1:
				ds.Create(op)
			default:
				op.Key = key
				op.Batch = testBatch(0, 1, 8)
				ds.Append(op)
			}
		}, nil)
		for index, result := range results {
			if result.Err != nil {
				t.Fatalf("delete, create, append in one turn: op %d: %v", index, result.Err)
			}
		}
		if results[2].BaseOffset != 0 {
			t.Fatalf("append after delete and create stored at %d, want 0 (a fresh partition)", results[2].BaseOffset)
		}
	})
}

func (h *dataHarness) topicOp(shard int, topic PartitionKey, count int, start func(ds *DataShard, op *DataOp)) {
	h.t.Helper()
	result := h.call(shard, func(ds *DataShard, op *DataOp) {
		op.Key, op.PartitionCount = topic, count
		start(ds, op)
	})
	if result.Err != nil {
		h.t.Fatalf("topic op on %v ×%d: %v", topic, count, result.Err)
	}
}

// fillSegments appends batches of about 100 KB until the partition has
// at least segments segments (1 MiB each); it returns the message count.
func (h *dataHarness) fillSegments(key PartitionKey, segments int) int {
	h.t.Helper()
	messages := 0
	for {
		stats := h.call(0, func(ds *DataShard, op *DataOp) { op.Key = key; ds.Stats(op) })
		if stats.Err != nil {
			h.t.Fatal(stats.Err)
		}
		if stats.Partition.SegmentCount >= segments {
			return messages
		}
		result := h.call(1%h.shardCount(), func(ds *DataShard, op *DataOp) {
			op.Key, op.Batch = key, testBatch(messages, 10, 10_000)
			ds.Append(op)
		})
		if result.Err != nil {
			h.t.Fatal(result.Err)
		}
		messages += 10
	}
}

// TestDataSegmentsAndRetention: DeleteSegments removes the oldest sealed
// segment, Flush syncs, and the maintenance timer applies message expiry
// (every sealed segment expires) and the size limit.
func TestDataSegmentsAndRetention(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		clock := time.Unix(1_800_000_000, 0)
		var clockMicros atomicTime
		clockMicros.set(clock)
		h := startData(t, backend, DataOptions{Directory: t.TempDir(), MaintenanceInterval: 5 * time.Millisecond, Now: clockMicros.get})
		topic := PartitionKey{Stream: 8, Topic: 1}
		h.create(topic, 1, PartitionConfig{SegmentBytes: 1 << 20})
		stored := h.fillSegments(topic, 4)
		deleted := h.call(0, func(ds *DataShard, op *DataOp) { op.Key, op.SegmentCount = topic, 1; ds.DeleteSegments(op) })
		if deleted.Err != nil || deleted.SegmentCount != 1 {
			t.Fatalf("delete segments: %+v", deleted)
		}
		first := h.poll(1%h.shardCount(), topic, engine.PollFirst, 0, 1, engine.Consumer{}, false)
		if first.Err != nil || first.OffsetFirst == 0 {
			t.Fatalf("first offset after deleting a segment: %+v", first)
		}
		if result := h.call(1%h.shardCount(), func(ds *DataShard, op *DataOp) { op.Key, op.Fsync = topic, true; ds.Flush(op) }); result.Err != nil {
			t.Fatalf("flush: %v", result.Err)
		}
		expiring := PartitionKey{Stream: 8, Topic: 2}
		h.create(expiring, 1, PartitionConfig{SegmentBytes: 1 << 20, ExpiryMicros: 60_000_000})
		h.fillSegments(expiring, 3)
		sized := PartitionKey{Stream: 8, Topic: 3}
		h.create(sized, 1, PartitionConfig{SegmentBytes: 1 << 20, SizeBytesMax: 2 << 20})
		for batch := range 50 { // 5 MB, while retention keeps removing segments
			result := h.call(0, func(ds *DataShard, op *DataOp) {
				op.Key, op.Batch = sized, testBatch(batch*10, 10, 10_000)
				ds.Append(op)
			})
			if result.Err != nil {
				t.Fatal(result.Err)
			}
		}
		clockMicros.set(clock.Add(time.Hour))
		h.waitSegments(expiring, 1)
		h.waitSegments(sized, 3)
		if stats := h.call(0, func(ds *DataShard, op *DataOp) { op.Key = topic; ds.Stats(op) }); stats.Partition.MessagesCount >= uint64(stored) {
			t.Fatalf("DeleteSegments removed no message: %d stored, %+v", stored, stats.Partition)
		}
	})
}

// waitSegments waits (driving nothing but the shards' own timers) until
// the partition has at most segments segments.
func (h *dataHarness) waitSegments(key PartitionKey, segments int) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		stats := h.call(0, func(ds *DataShard, op *DataOp) { op.Key = key; ds.Stats(op) })
		if stats.Err != nil {
			h.t.Fatal(stats.Err)
		}
		if stats.Partition.SegmentCount <= segments {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%v still has %d segments, want at most %d", key, stats.Partition.SegmentCount, segments)
		}
	}
}

// atomicTime is a clock the test moves and the shards read.
type atomicTime struct{ micros atomic.Uint64 }

func (c *atomicTime) set(at time.Time) { c.micros.Store(uint64(at.UnixMicro())) }
func (c *atomicTime) get() time.Time   { return time.UnixMicro(int64(c.micros.Load())) }

// TestDataRetentionUpdate pins a reconfiguration bug: a topic's new
// message expiry or size cap (UpdateTopic) reached its open partitions
// only after a restart. Retention sets both on the owners of a range of
// open partitions, and the next maintenance run applies them.
func TestDataRetentionUpdate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		clock := time.Unix(1_800_000_000, 0)
		var clockMicros atomicTime
		clockMicros.set(clock)
		h := startData(t, backend, DataOptions{Directory: t.TempDir(), MaintenanceInterval: 5 * time.Millisecond, Now: clockMicros.get})
		topic := PartitionKey{Stream: 9, Topic: 1}
		h.create(topic, 2, PartitionConfig{SegmentBytes: 1 << 20})
		second := PartitionKey{Stream: 9, Topic: 1, Partition: 1}
		h.fillSegments(topic, 3)
		h.fillSegments(second, 3)
		clockMicros.set(clock.Add(time.Hour))
		result := h.call(0, func(ds *DataShard, op *DataOp) {
			op.Key, op.PartitionCount = topic, 2
			op.Config = PartitionConfig{ExpiryMicros: 60_000_000}
			ds.Retention(op)
		})
		if result.Err != nil {
			t.Fatalf("retention: %v", result.Err)
		}
		h.waitSegments(topic, 1)
		h.waitSegments(second, 1)
	})
}
