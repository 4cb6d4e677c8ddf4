package sim

import (
	"flag"
	"testing"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "replay one simulator seed")
	seedCount = flag.Int("seeds", 0, "how many seeds TestSeeds runs (0: 200 in -short, else 1000)")
)

// TestSeeds runs consecutive seeds through Run and fails with the replay
// command of the first seed that breaks an invariant.
func TestSeeds(t *testing.T) {
	if *seedFlag != 0 {
		runSeed(t, *seedFlag)
		return
	}
	count := *seedCount
	if count == 0 {
		count = 1000
		if testing.Short() {
			count = 200
		}
	}
	var total Result
	for seed := uint64(1); seed <= uint64(count); seed++ {
		res, ok := runSeed(t, seed)
		if !ok {
			return
		}
		total.Commits += res.Commits
		total.ViewChanges += res.ViewChanges
		total.Crashes += res.Crashes
		total.CrashesBeforeApply += res.CrashesBeforeApply
		total.TornWrites += res.TornWrites
		total.Corruptions += res.Corruptions
		total.Partitions += res.Partitions
		total.StateTransfers += res.StateTransfers
		total.PacketsDropped += res.PacketsDropped
		total.Duplicated += res.Duplicated
	}
	t.Logf("%d seeds: %+v", count, total)
	if count < 200 {
		return
	}
	// The search is only as good as the faults it injects: every kind must
	// have happened somewhere in 200 seeds.
	exercised := map[string]bool{
		"commits": total.Commits > 0, "view changes": total.ViewChanges > 0,
		"crashes": total.Crashes > 0, "crashes before apply": total.CrashesBeforeApply > 0,
		"torn writes": total.TornWrites > 0, "corrupt sectors": total.Corruptions > 0,
		"partitions": total.Partitions > 0, "state transfers": total.StateTransfers > 0,
		"dropped packets": total.PacketsDropped > 0, "duplicated packets": total.Duplicated > 0,
	}
	for _, kind := range []string{"commits", "view changes", "crashes", "crashes before apply",
		"torn writes", "corrupt sectors", "partitions", "state transfers", "dropped packets",
		"duplicated packets"} {
		if !exercised[kind] {
			t.Errorf("no %s in %d seeds: the simulator stopped exercising them", kind, count)
		}
	}
}

func runSeed(t *testing.T, seed uint64) (res Result, ok bool) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("seed %d panicked: %v\nreplay: %s", seed, p, Replay(seed))
		}
	}()
	res = Run(OptionsFromSeed(seed))
	if res.Failure != "" {
		t.Errorf("seed %d: %s\n%+v\nreplay: %s", seed, res.Failure, OptionsFromSeed(seed), Replay(seed))
		return res, false
	}
	return res, true
}

// TestDeterminism runs one seed twice and compares the run hashes: the hash
// folds every commit and reply, so any hidden nondeterminism changes it.
func TestDeterminism(t *testing.T) {
	for _, seed := range []uint64{7, 42, 1234} {
		first := Run(OptionsFromSeed(seed))
		second := Run(OptionsFromSeed(seed))
		if first != second {
			t.Fatalf("seed %d ran differently twice:\n%+v\n%+v", seed, first, second)
		}
		if first.Commits == 0 {
			t.Fatalf("seed %d committed nothing", seed)
		}
	}
}
