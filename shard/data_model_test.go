package shard

import (
	"flag"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/whippetio/whippet/engine"
)

var dataSeed = flag.Uint64("data.seed", 0, "seed of TestDataModel (0: from the clock)")

// dataModel is the trivial model: per partition the sequence numbers
// stored, in offset order, and each consumer's stored offset.
type dataModel struct {
	messages map[PartitionKey][]uint64
	offsets  map[PartitionKey]map[engine.Consumer]uint64
}

// TestDataModel runs seeded random ops (appends of random sizes from
// random shards, polls by offset, first, last and next, offset stores and
// deletes, topic purges and runtime restarts) against a trivial model and
// checks every answer. The seed is logged; -data.seed replays one.
func TestDataModel(t *testing.T) {
	seed := *dataSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -data.seed=%d)", seed, seed)
	steps := 1500
	if testing.Short() {
		steps = 150
	}
	forEachBackend(t, func(t *testing.T, backend string) {
		random := rand.New(rand.NewPCG(seed, 2))
		directory := t.TempDir()
		topic := PartitionKey{Stream: 21, Topic: 2}
		const partitions = 5
		var specs []PartitionSpec
		for partition := range uint32(partitions) {
			specs = append(specs, PartitionSpec{Key: PartitionKey{Stream: 21, Topic: 2, Partition: partition},
				Config: PartitionConfig{SegmentBytes: 1 << 20}})
		}
		h := startData(t, backend, DataOptions{Directory: directory})
		h.create(topic, partitions, specs[0].Config)
		model := &dataModel{messages: map[PartitionKey][]uint64{}, offsets: map[PartitionKey]map[engine.Consumer]uint64{}}
		next := uint64(1)
		for step := range steps {
			key := specs[random.IntN(partitions)].Key
			origin := random.IntN(h.shardCount())
			switch roll := random.IntN(100); {
			case roll < 45:
				count := 1 + random.IntN(20)
				result := h.append(origin, key, testBatch(int(next), count, 1+random.IntN(3000)))
				if result.Err != nil || result.BaseOffset != uint64(len(model.messages[key])) {
					t.Fatalf("step %d: append to %v: base %d, model %d, %v", step, key, result.BaseOffset, len(model.messages[key]), result.Err)
				}
				for index := range count {
					model.messages[key] = append(model.messages[key], next+uint64(index))
				}
				next += uint64(count)
			case roll < 75:
				model.checkPoll(t, h, step, random, origin, key)
			case roll < 88:
				model.storeOffset(t, h, step, random, origin, key)
			case roll < 92:
				consumer := engine.Consumer{Kind: engine.ConsumerKind(1 + random.IntN(2)), ID: uint32(random.IntN(3))}
				result := h.offsetOp(origin, key, consumer, 0, (*DataShard).DeleteOffset)
				if _, stored := model.offsets[key][consumer]; stored != (result.Err == nil) {
					t.Fatalf("step %d: delete offset of %v on %v: %v, model has it: %v", step, consumer, key, result.Err, stored)
				}
				delete(model.offsets[key], consumer)
			case roll < 96:
				h.topicOp(origin, topic, partitions, (*DataShard).Purge)
				model.messages = map[PartitionKey][]uint64{}
				model.offsets = map[PartitionKey]map[engine.Consumer]uint64{}
			default:
				h.stop()
				h = startData(t, backend, DataOptions{Directory: directory, Partitions: specs})
			}
		}
	})
}

// checkPoll polls with a random strategy and compares with the model.
func (m *dataModel) checkPoll(t *testing.T, h *dataHarness, step int, random *rand.Rand, origin int, key PartitionKey) {
	t.Helper()
	stored := m.messages[key]
	count := uint32(1 + random.IntN(60))
	consumer := engine.Consumer{Kind: engine.ConsumerKind(1 + random.IntN(2)), ID: uint32(random.IntN(3))}
	strategy := engine.PollStrategy(1 + random.IntN(5))
	if strategy == engine.PollTimestamp {
		strategy = engine.PollOffset
	}
	value := uint64(random.IntN(len(stored) + 5))
	first := 0
	switch strategy {
	case engine.PollOffset:
		first = int(value)
	case engine.PollLast:
		first = max(0, len(stored)-int(count))
	case engine.PollNext:
		if offset, ok := m.offsets[key][consumer]; ok {
			first = int(offset) + 1
		}
	}
	first = min(first, len(stored))
	want := min(int(count), len(stored)-first)
	result := h.poll(origin, key, strategy, value, count, consumer, false)
	if result.Err != nil {
		t.Fatalf("step %d: poll %v strategy %d: %v", step, key, strategy, result.Err)
	}
	offsets, sequences := decodeSequences(t, result.Out)
	if len(offsets) != want {
		t.Fatalf("step %d: poll %v strategy %d value %d count %d: %d messages, model %d", step, key, strategy, value, count, len(offsets), want)
	}
	for index := range offsets {
		if offsets[index] != uint64(first+index) || sequences[index] != stored[first+index] {
			t.Fatalf("step %d: poll %v: message %d is offset %d sequence %d, model %d/%d", step, key, index,
				offsets[index], sequences[index], first+index, stored[first+index])
		}
	}
}

// storeOffset stores a random offset and compares the outcome (stored, or
// refused past the current offset) with the model.
func (m *dataModel) storeOffset(t *testing.T, h *dataHarness, step int, random *rand.Rand, origin int, key PartitionKey) {
	t.Helper()
	consumer := engine.Consumer{Kind: engine.ConsumerKind(1 + random.IntN(2)), ID: uint32(random.IntN(3))}
	offset := uint64(random.IntN(len(m.messages[key]) + 3))
	result := h.offsetOp(origin, key, consumer, offset, (*DataShard).StoreOffset)
	valid := offset < uint64(len(m.messages[key]))
	if valid != (result.Err == nil) {
		t.Fatalf("step %d: store offset %d of %v on %v (%d messages): %v", step, offset, consumer, key, len(m.messages[key]), result.Err)
	}
	if valid {
		if m.offsets[key] == nil {
			m.offsets[key] = map[engine.Consumer]uint64{}
		}
		m.offsets[key][consumer] = offset
	}
}
