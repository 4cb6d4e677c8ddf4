package engine_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// model is the trivial reference: one slice per partition, the retained
// prefix cut off, and a map of stored offsets.
type model struct {
	first      uint64
	messages   []enginetest.Message // messages[i] is offset first+i
	timestamps []uint64
	offsets    map[engine.Consumer]uint64
}

func (m *model) next() uint64 { return m.first + uint64(len(m.messages)) }

// differential drives a partition and the model with the same seeded ops.
type differential struct {
	t       *testing.T
	random  *rand.Rand
	storage backend
	options engine.PartitionOptions
	p       *engine.Partition
	model   model
	serial  uint64
	clock   uint64
	out     []byte
	pieced  uint64 // batches written in pieces by partitions since closed
	// streamed counts the batches appended while they arrived.
	streamed uint64
}

var consumers = []engine.Consumer{
	{Kind: engine.ConsumerSingle, ID: 1}, {Kind: engine.ConsumerSingle, ID: 2}, {Kind: engine.ConsumerGroup, ID: 0},
}

// TestDifferential runs seeded random appends, polls (every strategy,
// auto-commit), offset stores, segment deletions, purges and restarts
// against the model, on the in-memory storage and on real files through
// DirectStorage (O_DIRECT where the file system has it).
func TestDifferential(t *testing.T) {
	steps := 3000
	seeds := 3
	if testing.Short() {
		steps, seeds = 800, 2
	}
	base := testSeed(t)
	for index := 0; index < seeds; index++ {
		seed := base + uint64(index)
		durability := engine.Durability(seed % 3)
		t.Run(fmt.Sprintf("mem/seed=%d/%s", seed, durability), func(t *testing.T) {
			runDifferential(t, seed, memBackend{enginetest.NewMemStorage(seed)}, "/m/p", durability, steps)
		})
		t.Run(fmt.Sprintf("direct/seed=%d/%s", seed, durability), func(t *testing.T) {
			runDifferential(t, seed, directBackend{engine.NewDirectStorage()}, t.TempDir(), durability, steps)
		})
	}
}

func runDifferential(t *testing.T, seed uint64, storage backend, directory string, durability engine.Durability, steps int) {
	d := &differential{
		t:       t,
		random:  newRandom(seed),
		storage: storage,
		options: engine.PartitionOptions{
			Directory: directory, SegmentBytes: 1 << 20, Durability: durability, Logger: quiet,
			Cache: engine.NewCache(engine.NewCacheBudget(int64(newRandom(seed).IntN(3))<<20), 1), ReadBytes: 64 << 10,
		},
		model: model{offsets: make(map[engine.Consumer]uint64)},
		out:   make([]byte, 0, 16<<20),
	}
	if seed%3 == 0 {
		// Small journals: more, smaller flushes enter the cache.
		d.options.JournalBytes = 128 << 10
	}
	if seed%2 == 0 {
		// Ids are unique, so the window drops nothing: this runs every
		// append through the dedup copy and must not change a thing.
		d.options.DedupCount, d.options.DedupWindowMicros = 500, 1000
	}
	if allocator, ok := storage.(*ringBackend); ok {
		d.options.Allocate, d.options.Release = allocator.allocate, allocator.release
	}
	d.p = mustOpen(t, storage, d.options)
	for step := 0; step < steps; step++ {
		switch roll := d.random.IntN(100); {
		case roll < 4:
			d.streamOne()
		case roll < 45:
			d.appendSome()
		case roll < 85:
			d.poll()
		case roll < 92:
			d.storeOffset()
		case roll < 96:
			d.deleteSegments()
		case roll < 99 || d.random.IntN(4) > 0:
			d.restart()
		default:
			d.purge()
		}
	}
	d.restart()
	d.checkEverything()
	t.Logf("end: offsets [%d, %d), %d segments, %d consumers, %d batches written in pieces, %d streamed",
		d.model.first, d.model.next(), d.p.SegmentCount(), len(d.model.offsets), d.pieced, d.streamed)
}

// appendSome submits up to four appends before draining, so they group.
func (d *differential) appendSome() {
	var ops []*engine.AppendOp
	for count := 1 + d.random.IntN(4); count > 0; count-- {
		messages := randomMessages(d.random, &d.serial, 1+d.random.IntN(5), 1+d.random.IntN(16000))
		if d.random.IntN(12) == 0 {
			// Large enough to be written in pieces (pieces.go).
			messages = randomMessages(d.random, &d.serial, 100+d.random.IntN(40), 12000+d.random.IntN(6000))
		}
		d.clock += uint64(d.random.IntN(3))
		op := &engine.AppendOp{Batch: enginetest.Batch(1, messages...), Timestamp: d.clock + 1, Done: func(*engine.AppendOp) {}}
		if err := d.p.Append(op); err != nil {
			d.t.Fatalf("append: %v", err)
		}
		if op.BaseOffset != d.model.next() || op.Count != uint32(len(messages)) {
			d.t.Fatalf("append stored %d at %d, model next %d", op.Count, op.BaseOffset, d.model.next())
		}
		d.model.messages = append(d.model.messages, messages...)
		for range messages {
			d.model.timestamps = append(d.model.timestamps, d.clock+1)
		}
		ops = append(ops, op)
	}
	d.storage.drain()
	for _, op := range ops {
		if op.Err != nil {
			d.t.Fatalf("append: %v", op.Err)
		}
	}
}

func (d *differential) poll() {
	m := &d.model
	op := &engine.PollOp{
		Strategy:   engine.PollStrategy(1 + d.random.IntN(5)),
		Count:      uint32(d.random.IntN(300)),
		Consumer:   consumers[d.random.IntN(len(consumers))],
		AutoCommit: d.random.IntN(3) == 0,
		Out:        d.out,
	}
	start := d.expectedStart(op)
	got := poll(d.t, d.storage, d.p, op)
	count := uint64(0)
	if start < m.next() {
		count = min(uint64(op.Count), m.next()-start)
	}
	if uint64(len(got)) != count {
		d.t.Fatalf("poll %+v: got %d messages, model has %d from %d", op.Strategy, len(got), count, start)
	}
	if count > 0 {
		compareMessages(d.t, got, m.messages[start-m.first:start-m.first+count], start)
		if op.AutoCommit {
			stored, ok := m.offsets[op.Consumer]
			if !ok || stored < start+count-1 {
				m.offsets[op.Consumer] = start + count - 1
			}
		}
	}
	if op.CurrentOffset != max(m.next(), 1)-1 {
		d.t.Fatalf("current offset %d, model next %d", op.CurrentOffset, m.next())
	}
}

func (d *differential) expectedStart(op *engine.PollOp) uint64 {
	m := &d.model
	switch op.Strategy {
	case engine.PollOffset:
		op.Value = m.first + uint64(d.random.IntN(len(m.messages)+10))
		return op.Value
	case engine.PollFirst:
		return m.first
	case engine.PollLast:
		if m.next() > uint64(op.Count) {
			return max(m.next()-uint64(op.Count), m.first)
		}
		return m.first
	case engine.PollNext:
		if stored, ok := m.offsets[op.Consumer]; ok {
			return max(stored+1, m.first)
		}
		return m.first
	}
	op.Value = d.clock - uint64(d.random.IntN(int(d.clock)+1)) + uint64(d.random.IntN(3))
	for index, timestamp := range m.timestamps {
		if timestamp >= op.Value {
			return m.first + uint64(index)
		}
	}
	return m.next()
}

func (d *differential) storeOffset() {
	m := &d.model
	consumer := consumers[d.random.IntN(len(consumers))]
	offset := uint64(d.random.IntN(int(m.next()) + 2))
	err := storeOffset(d.t, d.storage, d.p, consumer, offset)
	valid := m.next() > 0 && offset < m.next()
	if valid != (err == nil) {
		d.t.Fatalf("store offset %d with next %d: %v", offset, m.next(), err)
	}
	if valid {
		m.offsets[consumer] = offset
	}
}

func (d *differential) deleteSegments() {
	m := &d.model
	op := &engine.MaintenanceOp{SegmentCount: 1 + d.random.IntN(2)}
	maintain(d.t, d.storage, d.p.DeleteSegments, op)
	first := d.p.OffsetFirst()
	if first < m.first || first > m.next() {
		d.t.Fatalf("first offset %d outside the model's [%d, %d]", first, m.first, m.next())
	}
	for _, stored := range m.offsets {
		if op.SegmentsDeleted > 0 && first > stored+1 {
			d.t.Fatalf("deleted past the consumer barrier %d (first now %d)", stored, first)
		}
	}
	cut := first - m.first
	m.messages, m.timestamps, m.first = m.messages[cut:], m.timestamps[cut:], first
}

func (d *differential) restart() {
	d.pieced += d.p.PiecedBatches()
	closePartition(d.t, d.storage, d.p)
	d.p = mustOpen(d.t, d.storage, d.options)
	if d.p.OffsetFirst() != d.model.first || d.p.OffsetNext() != d.model.next() {
		d.t.Fatalf("reopened with [%d, %d), model [%d, %d)", d.p.OffsetFirst(), d.p.OffsetNext(), d.model.first, d.model.next())
	}
	for consumer, offset := range d.model.offsets {
		if stored, ok := d.p.StoredOffset(consumer); !ok || stored != offset {
			d.t.Fatalf("consumer %+v offset %d after restart, model %d", consumer, stored, offset)
		}
	}
}

func (d *differential) purge() {
	maintain(d.t, d.storage, d.p.Purge, &engine.MaintenanceOp{})
	d.model = model{offsets: make(map[engine.Consumer]uint64)}
}

func (d *differential) checkEverything() {
	m := &d.model
	for offset := m.first; offset < m.next(); {
		got := poll(d.t, d.storage, d.p, &engine.PollOp{Strategy: engine.PollOffset, Value: offset, Count: 500, Out: d.out})
		compareMessages(d.t, got, m.messages[offset-m.first:offset-m.first+uint64(len(got))], offset)
		if len(got) == 0 {
			d.t.Fatalf("nothing at %d of [%d, %d)", offset, m.first, m.next())
		}
		offset += uint64(len(got))
	}
}
