package replicalog

import (
	"math/rand/v2"
	"testing"

	"github.com/whippetio/whippet/engine/enginetest"
)

// TestManySlots writes every slot of a large ring in one Persist, then
// rewrites and erases a seeded random share across Persists and restarts.
func TestManySlots(t *testing.T) {
	slotCount := 4096
	if testing.Short() {
		slotCount = 1024
	}
	storage := enginetest.NewMemStorage(30)
	log, _ := mustOpen(t, storage, slotCount)
	m := newModel(slotCount)
	all := &Persist{HardState: []byte("hs"), Sync: true}
	for slot := range slotCount {
		all.Writes = append(all.Writes, Write{Slot: slot, Op: uint64(slot), Message: message(slot, uint64(slot), 256+slot%300)})
	}
	persist(t, storage, log, all)
	m.apply(all)
	random := rand.New(rand.NewPCG(30, 1))
	for round := range 4 {
		p := &Persist{Sync: round%2 == 0}
		for range slotCount / 4 {
			slot := random.IntN(slotCount)
			write := Write{Slot: slot, Op: uint64(slotCount*(round+1) + slot)}
			if random.IntN(5) > 0 {
				write.Message = message(slot, write.Op, 1+random.IntN(1000))
			}
			p.Writes = append(p.Writes, write)
		}
		persist(t, storage, log, p)
		m.apply(p)
		closeLog(t, storage, log)
		var loaded Loaded
		log, loaded = mustOpen(t, storage, slotCount)
		if where := m.differs(loaded); where != "" {
			t.Fatalf("round %d: differs in %s", round, where)
		}
	}
	closeLog(t, storage, log)
}

// TestLargeMessages: messages of 1 MiB and of 17 MiB (a Prepare of the
// largest batch) are written from the caller's buffers and come back.
func TestLargeMessages(t *testing.T) {
	storage := enginetest.NewMemStorage(31)
	log, _ := mustOpen(t, storage, 4)
	m := newModel(4)
	p := &Persist{HardState: []byte("hs"), Sync: true, Writes: []Write{
		{0, 1, message(0, 1, 1<<20)},
		{1, 2, message(1, 2, 17<<20)},
		{2, 3, message(2, 3, 10)},
		{3, 4, message(3, 4, copyMessageBytesMax)},
	}}
	persist(t, storage, log, p)
	m.apply(p)
	closeLog(t, storage, log)
	log, loaded := mustOpen(t, storage, 4)
	if where := m.differs(loaded); where != "" {
		t.Fatalf("differs in %s", where)
	}
	closeLog(t, storage, log)
}

// TestQueuedPersistsRunInOrder: Persists submitted back to back complete
// in submission order, and Close waits for them.
func TestQueuedPersistsRunInOrder(t *testing.T) {
	storage := enginetest.NewMemStorage(32)
	log, _ := mustOpen(t, storage, 2)
	var order []int
	m := newModel(2)
	for i := range PersistQueueMax + 1 {
		p := &Persist{HardState: []byte{byte(i)}, Writes: []Write{{i % 2, uint64(i), message(i%2, uint64(i), 100)}}, Sync: i%3 == 0}
		p.Done = func(err error) {
			if err != nil {
				t.Fatal(err)
			}
			order = append(order, i)
		}
		log.Persist(p)
		m.apply(p)
	}
	closed := false
	log.Close(func(error) { closed = true })
	drain(storage)
	if !closed || len(order) != PersistQueueMax+1 {
		t.Fatalf("closed %v, completed %v", closed, order)
	}
	for i, got := range order {
		if got != i {
			t.Fatalf("completion order %v", order)
		}
	}
	log, loaded := mustOpen(t, storage, 2)
	if where := m.differs(loaded); where != "" {
		t.Fatalf("differs in %s", where)
	}
	closeLog(t, storage, log)
}

// TestUnsyncedSurvivesProcessCrash: Persists without Sync survive a
// process crash (the page cache keeps completed writes): reopening the
// same storage finds them, and open makes them durable.
func TestUnsyncedSurvivesProcessCrash(t *testing.T) {
	storage := enginetest.NewMemStorage(33)
	log, _ := mustOpen(t, storage, 3)
	m := newModel(3)
	for i := range 5 {
		p := &Persist{HardState: []byte{byte(i)}, App: []byte{byte(i), 1}, Writes: []Write{{i % 3, uint64(i), message(i%3, uint64(i), 5000)}}}
		persist(t, storage, log, p)
		m.apply(p)
	}
	syncs := storage.Syncs
	log, loaded := mustOpen(t, storage, 3) // no Close: the process died
	if where := m.differs(loaded); where != "" {
		t.Fatalf("differs in %s", where)
	}
	if storage.Syncs == syncs {
		t.Fatal("open did not sync what it found")
	}
	closeLog(t, storage, log)
	durable := storage.Crash(1)
	log, loaded = mustOpen(t, durable, 3)
	if where := m.differs(loaded); where != "" {
		t.Fatalf("after a power loss following open: differs in %s", where)
	}
	closeLog(t, durable, log)
}
