// Command whippet-bench is iggy-bench for Whippet: the same benchmark
// kinds, flags and report, plus an open-loop mode (--rate) whose latency is
// measured from each batch's scheduled start, topic durability
// (--durability), a local server when no --server-address is given, and
// the lab's fixed workload set (suite).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/pkg/profile"

	"github.com/whippetio/whippet/bench"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitMissing = 3 // the run could not start: no server binary, no server
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	command, err := bench.ParseArgs(args)
	switch {
	case errors.Is(err, bench.ErrHelp) || command.Name == "help":
		fmt.Fprint(os.Stderr, usage)
		return exitOK
	case err != nil:
		fmt.Fprintf(os.Stderr, "whippet-bench: %v\n\n%s", err, usageShort)
		return exitUsage
	case command.Name == "examples":
		fmt.Print(examples)
		return exitOK
	}
	if stop := startProfile(command.Profile); stop != nil {
		defer stop()
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	environment := bench.Environment{
		Stdout: os.Stdout, Stderr: os.Stderr, Progress: isTerminal(os.Stderr),
		Command: append([]string{"whippet-bench"}, args...),
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	if command.Name == "suite" {
		if _, err := bench.RunSuite(ctx, command.Suite, environment); err != nil {
			return failure(err)
		}
		return exitOK
	}
	result, err := bench.Run(ctx, command.Config, environment)
	if result != nil && command.Config.OpenCharts && result.Directory != "" {
		openCharts(result.Directory)
	}
	if err != nil {
		return failure(err)
	}
	if !result.Report.Accounting.Exact && !result.Report.Run.TruncatedByMaxDuration {
		fmt.Fprintln(os.Stderr, "whippet-bench: message counts do not add up (see accounting in report.json)")
		return exitFailed
	}
	return exitOK
}

func failure(err error) int {
	fmt.Fprintf(os.Stderr, "whippet-bench: %v\n", err)
	if errors.Is(err, bench.ErrNoServerBinary) {
		return exitMissing
	}
	return exitFailed
}

// startProfile profiles the bench itself into ./profile-<kind>/.
func startProfile(kind string) func() {
	var mode func(*profile.Profile)
	switch kind {
	case "":
		return nil
	case "cpu":
		mode = profile.CPUProfile
	case "mem":
		mode = profile.MemProfile
	case "trace":
		mode = profile.TraceProfile
	default:
		fmt.Fprintf(os.Stderr, "whippet-bench: --profile must be cpu, mem or trace; not profiling\n")
		return nil
	}
	return profile.Start(mode, profile.ProfilePath("profile-"+kind), profile.NoShutdownHook).Stop
}

// isTerminal reports whether file is a character device (a terminal).
func isTerminal(file *os.File) bool {
	info, err := file.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// openCharts opens the throughput chart in the desktop's browser.
func openCharts(directory string) {
	chart := filepath.Join(directory, bench.ThroughputChartFile)
	if err := exec.Command("xdg-open", chart).Start(); err != nil {
		fmt.Fprintf(os.Stderr, "whippet-bench: open %s: %v\n", chart, err)
	}
}
