package engine_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// crashRun is one partition's life across crashes: what was assigned to
// each offset (an unacknowledged append may or may not survive) and the
// acknowledged frontier that must survive under DurabilityPersisted.
type crashRun struct {
	t        *testing.T
	random   *rand.Rand
	storage  memBackend
	options  engine.PartitionOptions
	p        *engine.Partition
	assigned []enginetest.Message
	acked    uint64 // one past the highest acknowledged offset
	serial   uint64
	clock    uint64
	ops      []*engine.AppendOp
	// stores are the offsets submitted for the test consumer, in order;
	// storeAcked is the index of the last acknowledged one (-1: none).
	stores     []uint64
	storeAcked int
}

var crashConsumer = engine.Consumer{Kind: engine.ConsumerGroup, ID: 9}

// TestCrashRecovery appends with random group-commit points, crashes at a
// random moment into a clone that keeps synced bytes plus a seeded share
// of unsynced ones, and reopens. Every acknowledged offset must be present,
// contiguous and checksum-valid; every recovered message must be the one
// appended at that offset (no phantoms). Several crash cycles per seed.
func TestCrashRecovery(t *testing.T) {
	seeds := 30
	if testing.Short() {
		seeds = 8
	}
	base := testSeed(t)
	for index := 0; index < seeds; index++ {
		seed := base + uint64(index)
		for _, durability := range []engine.Durability{engine.DurabilityPersisted, engine.DurabilityWritten, engine.DurabilityMemory} {
			t.Run(fmt.Sprintf("seed=%d/%s", seed, durability), func(t *testing.T) {
				runCrashCycles(t, seed, durability)
			})
		}
	}
}

func runCrashCycles(t *testing.T, seed uint64, durability engine.Durability) {
	run := &crashRun{
		t:          t,
		random:     newRandom(seed),
		storage:    memBackend{enginetest.NewMemStorage(seed)},
		options:    engine.PartitionOptions{Directory: "/data/s0/t0/p0", SegmentBytes: 1 << 20, Durability: durability, Logger: quiet, JournalBytes: 256 << 10},
		clock:      1,
		storeAcked: -1,
	}
	run.p = mustOpen(t, run.storage, run.options)
	for cycle := 0; cycle < 4; cycle++ {
		steps := 20 + run.random.IntN(200)
		for step := 0; step < steps; step++ {
			run.step()
		}
		run.crash(seed*31 + uint64(cycle))
	}
}

// step submits a few appends, then completes a random number of ops, so
// groups form and crashes land between write, sync and index write.
func (r *crashRun) step() {
	for count := r.random.IntN(4); count > 0; count-- {
		messages := randomMessages(r.random, &r.serial, 1+r.random.IntN(6), 1+r.random.IntN(20000))
		if r.random.IntN(10) == 0 {
			// Large enough to be written in pieces (pieces.go), so
			// crashes land between them too.
			messages = randomMessages(r.random, &r.serial, 100+r.random.IntN(40), 12000+r.random.IntN(6000))
		}
		r.clock++
		op := &engine.AppendOp{Batch: enginetest.Batch(r.clock, messages...), Timestamp: r.clock}
		op.Done = r.appendDone
		if err := r.p.Append(op); err != nil {
			if errors.Is(err, engine.ErrJournalFull) {
				return
			}
			r.t.Fatalf("append: %v", err)
		}
		if op.BaseOffset != uint64(len(r.assigned)) {
			r.t.Fatalf("base offset %d, assigned so far %d", op.BaseOffset, len(r.assigned))
		}
		r.assigned = append(r.assigned, messages...)
		r.ops = append(r.ops, op)
	}
	if r.random.IntN(5) == 0 && r.p.OffsetNext() > 0 {
		r.storeOffset()
	}
	r.storage.Run(r.random.IntN(8))
}

func (r *crashRun) storeOffset() {
	index := len(r.stores)
	offset := uint64(r.random.IntN(int(r.p.OffsetNext())))
	op := &engine.OffsetOp{Consumer: crashConsumer, Offset: offset}
	op.Done = func(op *engine.OffsetOp) {
		if op.Err != nil {
			r.t.Fatalf("store offset: %v", op.Err)
		}
		r.storeAcked = max(r.storeAcked, index)
	}
	if err := r.p.StoreOffset(op); err != nil {
		r.t.Fatalf("store offset: %v", err)
	}
	r.stores = append(r.stores, offset)
}

// checkOffset: the recovered offset is the last acknowledged store or a
// later one; under DurabilityPersisted it cannot be missing once one was
// acknowledged.
func (r *crashRun) checkOffset(p *engine.Partition) {
	stored, ok := p.StoredOffset(crashConsumer)
	if !ok {
		if r.storeAcked >= 0 && r.options.Durability == engine.DurabilityPersisted {
			r.t.Fatalf("acknowledged consumer offset %d lost", r.stores[r.storeAcked])
		}
		return
	}
	for index := max(r.storeAcked, 0); index < len(r.stores); index++ {
		if r.stores[index] == stored {
			return
		}
	}
	if r.options.Durability == engine.DurabilityPersisted || r.storeAcked < 0 {
		r.t.Fatalf("recovered consumer offset %d was not stored at or after the last acknowledged one", stored)
	}
}

func (r *crashRun) appendDone(op *engine.AppendOp) {
	if op.Err != nil {
		r.t.Fatalf("append failed: %v", op.Err)
	}
	r.acked = max(r.acked, op.BaseOffset+uint64(op.Count))
}

func (r *crashRun) crash(seed uint64) {
	t := r.t
	pieced := r.p.PiecedBatches()
	clone := memBackend{r.storage.Crash(seed)}
	p, err := openPartition(t, clone, r.options)
	if err != nil {
		t.Fatalf("reopen after crash (seed %d): %v", seed, err)
	}
	next := p.OffsetNext()
	if r.options.Durability == engine.DurabilityPersisted && next < r.acked {
		t.Fatalf("lost acknowledged offsets: recovered up to %d, acknowledged up to %d", next, r.acked)
	}
	if next > uint64(len(r.assigned)) {
		t.Fatalf("phantom offsets: recovered up to %d, only %d assigned", next, len(r.assigned))
	}
	r.verify(clone, p, next)
	r.checkOffset(p)
	r.stores, r.storeAcked = r.stores[:0], -1
	if stored, ok := p.StoredOffset(crashConsumer); ok {
		r.stores, r.storeAcked = append(r.stores, stored), 0
	}
	r.storage, r.p = clone, p
	r.assigned = r.assigned[:next]
	r.acked = next
	t.Logf("crash seed %d: recovered %d offsets, torn bytes %d, batches written in pieces before it %d",
		seed, next, p.TornBytes(), pieced)
}

// verify polls everything back and compares it with what was assigned.
func (r *crashRun) verify(storage backend, p *engine.Partition, next uint64) {
	out := make([]byte, 0, 8<<20)
	for offset := uint64(0); offset < next; {
		op := &engine.PollOp{Strategy: engine.PollOffset, Value: offset, Count: 200, Out: out}
		got := poll(r.t, storage, p, op)
		if len(got) == 0 {
			r.t.Fatalf("poll at %d returned nothing, next is %d", offset, next)
		}
		for _, message := range got {
			if message.Offset != offset {
				r.t.Fatalf("offset %d where %d was expected: not contiguous", message.Offset, offset)
			}
			want := r.assigned[offset]
			if !bytes.Equal(message.Payload, want.Payload) || message.IDLow != want.IDLow {
				r.t.Fatalf("offset %d holds a message that was not appended there", offset)
			}
			offset++
		}
	}
}
