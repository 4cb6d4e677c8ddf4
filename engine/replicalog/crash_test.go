package replicalog

import (
	"flag"
	"math/rand/v2"
	"testing"

	"github.com/whippetio/whippet/engine/enginetest"
)

var crashSeed = flag.Uint64("replicalog.seed", 0, "run the crash tests with this seed only")

// workload is a seeded sequence of Persists over a few slots: hard state
// and app changes, small and large messages, erases, repeated slots.
func workload(seed uint64, count, slotCount int, messageBytesMax int) []*Persist {
	random := rand.New(rand.NewPCG(seed, 7))
	out := make([]*Persist, count)
	op := uint64(0)
	for i := range out {
		p := &Persist{Sync: true}
		if random.IntN(3) > 0 {
			p.HardState = message(-1, uint64(i), 1+random.IntN(300))
		}
		if random.IntN(4) == 0 {
			p.App = message(-2, uint64(i), random.IntN(AppBytesMax+1))
		}
		for range random.IntN(4) {
			op++
			write := Write{Slot: random.IntN(slotCount), Op: op}
			switch random.IntN(8) {
			case 0:
			case 1:
				write.Message = message(write.Slot, op, copyMessageBytesMax+1+random.IntN(messageBytesMax))
			default:
				write.Message = message(write.Slot, op, 1+random.IntN(2000))
			}
			p.Writes = append(p.Writes, write)
		}
		out[i] = p
	}
	return out
}

// crashRun runs the workload on a fresh storage and crashes after
// stepsMax op completions (counting the open's). It returns the crash
// clone, the acknowledged model and the Persist in flight (or nil).
func crashRun(t *testing.T, seed uint64, steps []*Persist, slotCount, stepsMax int) (*enginetest.MemStorage, *model, *Persist, bool) {
	storage := enginetest.NewMemStorage(seed)
	acked := newModel(slotCount)
	var log *Log
	next, done := 0, false
	var inflight *Persist
	submit := func() {
		if next == len(steps) {
			done = true
			return
		}
		inflight = steps[next]
		next++
		log.Persist(inflight)
	}
	for _, p := range steps {
		p.Done = func(err error) {
			if err != nil {
				t.Fatalf("seed %d: persist: %v", seed, err)
			}
			acked.apply(inflight)
			inflight = nil
			submit()
		}
	}
	Open(storage, testDirectory, slotCount, func(l *Log, _ Loaded, err error) {
		if err != nil {
			t.Fatalf("seed %d: open: %v", seed, err)
		}
		log = l
		submit()
	})
	for count := 0; count < stepsMax && storage.Pending() > 0; count++ {
		storage.Run(1)
	}
	finished := storage.Pending() == 0 && done
	return storage.Crash(seed ^ uint64(stepsMax)*0x9e3779b97f4a7c15), acked, inflight, finished
}

// acceptable reports why loaded is neither the acknowledged state nor that
// state plus a prefix of the in-flight Persist's writes (with its hard
// state and app only when all its writes made it), or "".
func acceptable(loaded Loaded, acked *model, inflight *Persist) string {
	if inflight == nil {
		return acked.differs(loaded)
	}
	partial := acked.clone()
	for j := 0; ; j++ {
		if partial.differs(loaded) == "" {
			return ""
		}
		if j == len(inflight.Writes) {
			break
		}
		partial.apply(&Persist{Writes: inflight.Writes[j : j+1]})
	}
	partial.apply(&Persist{HardState: inflight.HardState, App: inflight.App})
	if where := partial.differs(loaded); where != "" {
		return "not the acknowledged state nor a prefix of the in-flight Persist: " + where
	}
	return ""
}

// TestCrashAtEveryStep runs a seeded workload and, for every op
// completion k, crashes after k completions (keeping a seeded share of the
// unsynced writes, torn or whole), reopens, and checks the loaded state
// is the acknowledged one or it plus a prefix of the Persist in flight.
// Every other run also crashes the recovery itself at a seeded step and
// reopens again.
func TestCrashAtEveryStep(t *testing.T) {
	seeds, count := []uint64{1, 2, 3, 4, 5, 6, 7, 8}, 12
	if testing.Short() {
		seeds, count = seeds[:3], 8
	}
	if *crashSeed != 0 {
		seeds = []uint64{*crashSeed}
	}
	const slotCount = 4
	var stats recoveryStats
	for _, seed := range seeds {
		t.Logf("seed %d (rerun with -replicalog.seed=%d)", seed, seed)
		for stepsMax := 0; ; stepsMax++ {
			steps := workload(seed, count, slotCount, 20000)
			crashed, acked, inflight, finished := crashRun(t, seed, steps, slotCount, stepsMax)
			stats.add(checkRecovery(t, crashed, acked, inflight, seed, stepsMax))
			if finished {
				break
			}
		}
	}
	t.Logf("%+v", stats)
	// The crash points must reach the interesting cases, or the test
	// proves little: torn tails, Persists half landed, hard state rolled
	// back to the previous copy.
	if stats.torn == 0 || stats.partial == 0 || stats.inflightSeen == 0 || stats.crashes < 100 {
		t.Fatalf("crash points miss cases: %+v", stats)
	}
}

type recoveryStats struct {
	crashes, torn, partial, inflightSeen int
}

func (s *recoveryStats) add(other recoveryStats) {
	s.crashes += other.crashes
	s.torn += other.torn
	s.partial += other.partial
	s.inflightSeen += other.inflightSeen
}

func checkRecovery(t *testing.T, crashed *enginetest.MemStorage, acked *model, inflight *Persist, seed uint64, stepsMax int) recoveryStats {
	t.Helper()
	if stepsMax%2 == 1 {
		random := rand.New(rand.NewPCG(seed, uint64(stepsMax)))
		Open(crashed, testDirectory, len(acked.slots), func(*Log, Loaded, error) {})
		for range random.IntN(12) {
			crashed.Run(1)
		}
		crashed = crashed.Crash(seed + uint64(stepsMax))
	}
	result := openLog(t, crashed, len(acked.slots))
	if result.err != nil {
		t.Fatalf("seed %d, crash after %d steps: open: %v", seed, stepsMax, result.err)
	}
	if why := acceptable(result.loaded, acked, inflight); why != "" {
		t.Fatalf("seed %d, crash after %d steps: %s", seed, stepsMax, why)
	}
	stats := recoveryStats{crashes: 1}
	if result.loaded.TornBytes > 0 {
		stats.torn++
	}
	if inflight != nil && acked.differs(result.loaded) != "" {
		stats.inflightSeen++
		full := acked.clone()
		full.apply(inflight)
		if full.differs(result.loaded) != "" {
			stats.partial++
		}
	}
	// The recovered log accepts more and keeps it across a clean restart.
	m := &model{hardState: result.loaded.HardState, app: result.loaded.App, slots: result.loaded.Slots}
	more := &Persist{HardState: []byte("after"), Writes: []Write{{Slot: 0, Op: 1 << 40, Message: []byte("after")}}, Sync: true}
	persist(t, crashed, result.log, more)
	m.apply(more)
	closeLog(t, crashed, result.log)
	log, loaded := mustOpen(t, crashed, len(acked.slots))
	if where := m.differs(loaded); where != "" {
		t.Fatalf("seed %d, crash after %d steps: restart after recovery differs in %s", seed, stepsMax, where)
	}
	closeLog(t, crashed, log)
	return stats
}
