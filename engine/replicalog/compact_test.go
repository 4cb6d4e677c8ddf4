package replicalog

import (
	"testing"

	"github.com/whippetio/whippet/engine/enginetest"
)

// churn rewrites the slots with 100 KiB messages until the journal has
// been compacted at least times times; it returns the Persists it ran.
func churn(t *testing.T, storage *enginetest.MemStorage, log *Log, m *model, times int, op *uint64) {
	t.Helper()
	start := log.generation
	for log.generation < start+uint64(times) {
		*op++
		slot := int(*op % uint64(len(m.slots)))
		p := &Persist{HardState: message(-1, *op, 40), Writes: []Write{{slot, *op, message(slot, *op, 100<<10)}}, Sync: true}
		if *op%7 == 0 {
			p.Writes = append(p.Writes, Write{Slot: (slot + 1) % len(m.slots), Op: *op})
		}
		persist(t, storage, log, p)
		m.apply(p)
		if log.journalBytes > compactRatio*log.liveBytes+(1<<20) && log.journalBytes > compactBytesMin+(1<<20) {
			t.Fatalf("journal %d bytes, live %d: compaction did not run", log.journalBytes, log.liveBytes)
		}
	}
}

// TestCompactionAcrossRestarts: the journal is rewritten when it outgrows
// its live bytes, and what it holds survives restarts before and after,
// erased slots included.
func TestCompactionAcrossRestarts(t *testing.T) {
	storage := enginetest.NewMemStorage(20)
	log, _ := mustOpen(t, storage, 6)
	m := newModel(6)
	op := uint64(0)
	for round := range 3 {
		churn(t, storage, log, m, 1, &op)
		if log.journalBytes >= compactBytesMin {
			t.Fatalf("round %d: journal %d bytes right after compaction", round, log.journalBytes)
		}
		closeLog(t, storage, log)
		var loaded Loaded
		log, loaded = mustOpen(t, storage, 6)
		if where := m.differs(loaded); where != "" {
			t.Fatalf("round %d: reopened after compaction, differs in %s", round, where)
		}
		if log.generation != uint64(round+2) {
			t.Fatalf("round %d: generation %d", round, log.generation)
		}
	}
	closeLog(t, storage, log)
}

// TestCrashDuringCompaction crashes at every op of the Persist that
// triggers a compaction and of the compaction itself: the reopened log
// holds the acknowledged state (or it plus the in-flight Persist).
func TestCrashDuringCompaction(t *testing.T) {
	const slotCount = 3
	build := func() (*enginetest.MemStorage, *Log, *model, *Persist) {
		storage := enginetest.NewMemStorage(21)
		log, _ := mustOpen(t, storage, slotCount)
		m := newModel(slotCount)
		op := uint64(0)
		for {
			op++
			slot := int(op % slotCount)
			p := &Persist{HardState: message(-1, op, 40), Writes: []Write{{slot, op, message(slot, op, 200<<10)}}, Sync: true}
			if log.journalBytes+recordBytes(p) > compactBytesMin && log.journalBytes+recordBytes(p) > compactRatio*log.liveBytes {
				return storage, log, m, p
			}
			persist(t, storage, log, p)
			m.apply(p)
		}
	}
	crashes := 0
	for step := 0; ; step++ {
		storage, log, m, last := build()
		generation := log.generation
		finished := false
		last.Done = func(err error) {
			if err != nil {
				t.Fatalf("persist: %v", err)
			}
			finished = true
		}
		log.Persist(last)
		for range step {
			storage.Run(1)
		}
		if storage.Pending() == 0 {
			if !finished || log.generation != generation+1 {
				t.Fatalf("the last Persist did not compact: finished %v, generation %d", finished, log.generation)
			}
			break
		}
		inflight := last
		if finished {
			m.apply(last)
			inflight = nil
		}
		crashed := storage.Crash(uint64(step))
		result := openLog(t, crashed, slotCount)
		if result.err != nil {
			t.Fatalf("crash after %d steps: %v", step, result.err)
		}
		if why := acceptable(result.loaded, m, inflight); why != "" {
			t.Fatalf("crash after %d steps: %s", step, why)
		}
		crashes++
	}
	if crashes < 10 {
		t.Fatalf("only %d crash points", crashes)
	}
}

// recordBytes is the journal bytes p's writes append.
func recordBytes(p *Persist) int64 {
	total := int64(0)
	for _, write := range p.Writes {
		total += recordHeaderBytes + int64(len(write.Message))
	}
	return total
}
