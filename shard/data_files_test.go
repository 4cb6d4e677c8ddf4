package shard

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/whippetio/whippet/engine"
)

// TestDataOpenFilesBudget: a data plane whose open-files budget (16 a
// shard) is far below what its partitions hold open (48 partitions, 4
// files each) serves appends from many goroutines at once, polls, offset
// stores and a restart, and no shard's file table ever held more than its
// share open; the tables had to close and reopen files.
func TestDataOpenFilesBudget(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		directory := t.TempDir()
		options := DataOptions{Directory: directory, OpenFilesMax: 2 * engine.OpenFilesMin}
		h := startData(t, backend, options)
		topic := PartitionKey{Stream: 3, Topic: 1}
		const partitionCount, rounds = 48, 3
		configs := []PartitionConfig{{Durability: engine.DurabilityPersisted}, {Durability: engine.DurabilityWritten}}
		var specs []PartitionSpec
		for index, config := range configs {
			key := topic
			key.Topic += uint32(index)
			h.create(key, partitionCount/len(configs), config)
			for partition := range uint32(partitionCount / len(configs)) {
				key.Partition = partition
				specs = append(specs, PartitionSpec{Key: key, Config: config})
			}
		}
		appendRounds(t, h, specs, 0, rounds)
		consumer := engine.Consumer{Kind: engine.ConsumerSingle, ID: 9}
		for index, spec := range specs {
			if result := h.offsetOp(index%h.shardCount(), spec.Key, consumer, uint64(index%(rounds*5)),
				(*DataShard).StoreOffset); result.Err != nil {
				t.Fatalf("store offset on %v: %v", spec.Key, result.Err)
			}
		}
		checkFileTables(t, h, options.OpenFilesMax/h.shardCount(), true)
		h.stop()
		h = startData(t, backend, DataOptions{Directory: directory, Partitions: specs, OpenFilesMax: options.OpenFilesMax})
		appendRounds(t, h, specs, rounds, 1)
		for index, spec := range specs {
			expectRange(t, "after restart", h.poll(index%h.shardCount(), spec.Key, engine.PollFirst, 0, 1000,
				engine.Consumer{}, false), 0, (rounds+1)*5)
			got := h.offsetOp(0, spec.Key, consumer, 0, (*DataShard).GetOffset)
			if got.Err != nil || !got.Found || got.Offset != uint64(index%(rounds*5)) {
				t.Fatalf("offset of %v after restart: %+v", spec.Key, got)
			}
		}
		checkFileTables(t, h, options.OpenFilesMax/h.shardCount(), false)
	})
}

// appendRounds appends 5 messages a round to every partition, the
// partitions spread over 8 goroutines so their writes compete for files.
func appendRounds(t *testing.T, h *dataHarness, specs []PartitionSpec, first, rounds int) {
	t.Helper()
	var group sync.WaitGroup
	var mutex sync.Mutex
	var failures []error
	for worker := range 8 {
		group.Add(1)
		go func() {
			defer group.Done()
			for round := first; round < first+rounds; round++ {
				for index := worker; index < len(specs); index += 8 {
					result := h.appendAt(index%h.shardCount(), specs[index].Key, round*5, 5, 0)
					if result.Err != nil || result.BaseOffset != uint64(round*5) {
						mutex.Lock()
						failures = append(failures, fmt.Errorf("append to %v: base %d, %w", specs[index].Key, result.BaseOffset, result.Err))
						mutex.Unlock()
					}
				}
			}
		}()
	}
	group.Wait()
	for _, err := range failures {
		t.Error(err)
	}
	if len(failures) > 0 {
		t.FailNow()
	}
}

// checkFileTables asserts each shard's table stayed within share; with
// evicted set, that the budget forced closes and reopens.
func checkFileTables(t *testing.T, h *dataHarness, share int, evicted bool) {
	t.Helper()
	for shard := range h.shardCount() {
		var stats engine.FileTableStats
		var budget int
		h.on(shard, func(ds *DataShard) {
			stats, budget = ds.Storage().Files().Stats(), ds.Storage().Files().OpenMax()
		})
		if budget != share || stats.OpenPeak > share || stats.Open > share {
			t.Fatalf("shard %d: budget %d (want %d), open %d, peak %d", shard, budget, share, stats.Open, stats.OpenPeak)
		}
		if evicted && (stats.Evictions == 0 || stats.Reopens == 0) {
			t.Fatalf("shard %d: %d partitions' files within %d open without closing any: %+v", shard, 48/h.shardCount(), share, stats)
		}
		t.Logf("shard %d: %+v", shard, stats)
	}
}

// TestDataTickListDrains: the tick visits only partitions with work. After
// appends to 20 partitions settle, every shard's tick list empties; an
// append to one partition puts exactly that one back until it settles.
func TestDataTickListDrains(t *testing.T) {
	h := startData(t, BackendEpoll, DataOptions{Directory: t.TempDir()})
	key := PartitionKey{Stream: 4, Topic: 1}
	h.create(key, 20, PartitionConfig{Durability: engine.DurabilityWritten})
	for partition := range uint32(20) {
		key.Partition = partition
		if result := h.appendAt(int(partition)%h.shardCount(), key, 0, 3, 0); result.Err != nil {
			t.Fatal(result.Err)
		}
	}
	waitTickLists(t, h, 0)
	key.Partition = 7
	owner := OwnerOf(key, h.shardCount())
	h.on(owner, func(ds *DataShard) {
		op := ds.Get()
		op.Key, op.Batch, op.Done = key, testBatch(3, 1, 64), func(op *DataOp) { op.origin.Put(op) }
		ds.Append(op)
		if len(ds.tickList) != 1 || ds.tickList[0].key != key {
			t.Errorf("after one append the tick list holds %d partitions", len(ds.tickList))
		}
	})
	waitTickLists(t, h, 0)
}

// waitTickLists waits until every shard's tick list holds want
// partitions (a few ticks).
func waitTickLists(t *testing.T, h *dataHarness, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for shard := range h.shardCount() {
		for {
			var length int
			h.on(shard, func(ds *DataShard) { length = len(ds.tickList) })
			if length == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("shard %d: tick list holds %d partitions, want %d", shard, length, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
