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
	for seed := uint64(1); seed <= uint64(count); seed++ {
		if !runSeed(t, seed) {
			return
		}
	}
}

func runSeed(t *testing.T, seed uint64) bool {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("seed %d panicked: %v\nreplay: %s", seed, p, Replay(seed))
		}
	}()
	res := Run(OptionsFromSeed(seed))
	if res.Failure != "" {
		t.Errorf("seed %d: %s\n%+v\nreplay: %s", seed, res.Failure, OptionsFromSeed(seed), Replay(seed))
		return false
	}
	return true
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
