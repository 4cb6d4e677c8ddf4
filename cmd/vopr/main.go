// Command vopr runs the vsr simulator: many seeds (-seeds n, from -first) or
// one seed replayed (-seed n), and prints a summary. A failing seed prints
// the command that replays it and makes the exit status 1.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/whippetio/whippet/vsr/sim"
)

func main() {
	seed := flag.Uint64("seed", 0, "replay this one seed")
	seeds := flag.Uint64("seeds", 0, "run this many seeds")
	first := flag.Uint64("first", 1, "first seed of a -seeds run")
	verbose := flag.Bool("v", false, "print one line per seed")
	flag.Parse()
	switch {
	case *seed != 0:
		os.Exit(replay(*seed))
	case *seeds != 0:
		os.Exit(runMany(*first, *seeds, *verbose))
	default:
		flag.Usage()
		os.Exit(2)
	}
}

// run turns a panic inside the simulated replicas (a broken assertion) into
// a failure that names the seed, so a search over many seeds reports it.
func run(opts sim.Options) (res sim.Result) {
	defer func() {
		if p := recover(); p != nil {
			res = sim.Result{Seed: opts.Seed, Failure: fmt.Sprintf("panic: %v", p)}
		}
	}()
	return sim.Run(opts)
}

func replay(seed uint64) int {
	opts := sim.OptionsFromSeed(seed)
	fmt.Printf("options: %+v\n", opts)
	res := run(opts)
	printResult(res)
	if res.Failure != "" {
		fmt.Printf("FAIL: %s\n", res.Failure)
		return 1
	}
	fmt.Println("ok")
	return 0
}

func printResult(res sim.Result) {
	fmt.Printf("seed %d: ticks=%d commits=%d replies=%d views=%d crashes=%d crashes_before_apply=%d restarts=%d torn=%d corrupt=%d wiped=%d partitions=%d state_transfers=%d packets=%d dropped=%d duplicated=%d hash=%016x\n",
		res.Seed, res.Ticks, res.Commits, res.Replies, res.ViewChanges, res.Crashes, res.CrashesBeforeApply, res.Restarts,
		res.TornWrites, res.Corruptions, res.Wipes, res.Partitions, res.StateTransfers, res.PacketsSent,
		res.PacketsDropped, res.Duplicated, res.Hash)
}

func runMany(first, count uint64, verbose bool) int {
	var total sim.Result
	failed := 0
	for seed := first; seed < first+count; seed++ {
		res := run(sim.OptionsFromSeed(seed))
		if verbose {
			printResult(res)
		}
		if res.Failure != "" {
			failed++
			fmt.Printf("FAIL seed %d: %s\n  replay: %s\n", seed, res.Failure, sim.Replay(seed))
		}
		total.Ticks += res.Ticks
		total.Commits += res.Commits
		total.Replies += res.Replies
		total.ViewChanges += res.ViewChanges
		total.Crashes += res.Crashes
		total.CrashesBeforeApply += res.CrashesBeforeApply
		total.Restarts += res.Restarts
		total.TornWrites += res.TornWrites
		total.Corruptions += res.Corruptions
		total.Wipes += res.Wipes
		total.Partitions += res.Partitions
		total.StateTransfers += res.StateTransfers
		total.PacketsSent += res.PacketsSent
		total.PacketsDropped += res.PacketsDropped
		total.Duplicated += res.Duplicated
	}
	fmt.Printf("%d seeds from %d: %d passed, %d failed\n", count, first, count-uint64(failed), failed)
	fmt.Printf("totals: ticks=%d commits=%d replies=%d views=%d crashes=%d crashes_before_apply=%d restarts=%d torn=%d corrupt=%d wiped=%d partitions=%d state_transfers=%d packets=%d dropped=%d duplicated=%d\n",
		total.Ticks, total.Commits, total.Replies, total.ViewChanges, total.Crashes, total.CrashesBeforeApply, total.Restarts,
		total.TornWrites, total.Corruptions, total.Wipes, total.Partitions, total.StateTransfers, total.PacketsSent,
		total.PacketsDropped, total.Duplicated)
	if failed > 0 {
		return 1
	}
	return 0
}
