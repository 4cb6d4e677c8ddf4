package shard

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrCPUList reports a CPU list that cannot be parsed or names a CPU the
// process may not use.
var ErrCPUList = errors.New("shard: bad CPU list")

// processCPUs is the affinity mask read at package initialisation, on the
// main thread before any shard pinned a thread: sched_getaffinity reports
// the calling thread's mask, and a later caller may run on a pinned one.
var processCPUs, processCPUsErr = readAffinity()

// AllowedCPUs returns, in ascending order, the CPUs this process may run on
// (its sched_getaffinity mask at start), the default placement of one
// shard per CPU.
func AllowedCPUs() ([]int, error) {
	return slices.Clone(processCPUs), processCPUsErr
}

func readAffinity() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("shard: sched_getaffinity: %w", err)
	}
	cpus := make([]int, 0, set.Count())
	for cpu := range cpuSetBits {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus, nil
}

// cpuSetBits is the number of CPUs a unix.CPUSet can name.
const cpuSetBits = len(unix.CPUSet{}) * 64

// ParseCPUList parses a Linux-style CPU list ("0-3,6,8-9") into ascending,
// distinct CPU numbers.
func ParseCPUList(text string) ([]int, error) {
	var cpus []int
	for part := range strings.SplitSeq(strings.TrimSpace(text), ",") {
		part = strings.TrimSpace(part)
		first, last, isRange := strings.Cut(part, "-")
		low, err := strconv.Atoi(first)
		if err != nil {
			return nil, fmt.Errorf("%w: %q", ErrCPUList, part)
		}
		high := low
		if isRange {
			if high, err = strconv.Atoi(last); err != nil {
				return nil, fmt.Errorf("%w: %q", ErrCPUList, part)
			}
		}
		if low < 0 || high < low || high >= cpuSetBits {
			return nil, fmt.Errorf("%w: %q out of range", ErrCPUList, part)
		}
		for cpu := low; cpu <= high; cpu++ {
			cpus = append(cpus, cpu)
		}
	}
	slices.Sort(cpus)
	if len(slices.Compact(slices.Clone(cpus))) != len(cpus) {
		return nil, fmt.Errorf("%w: %q names a CPU twice", ErrCPUList, text)
	}
	return cpus, nil
}

// checkCPUs verifies that every CPU of cpus is distinct and allowed.
func checkCPUs(cpus, allowed []int) error {
	if len(cpus) == 0 {
		return fmt.Errorf("%w: empty", ErrCPUList)
	}
	seen := make(map[int]bool, len(cpus))
	for _, cpu := range cpus {
		if seen[cpu] {
			return fmt.Errorf("%w: CPU %d named twice", ErrCPUList, cpu)
		}
		seen[cpu] = true
		if !slices.Contains(allowed, cpu) {
			return fmt.Errorf("%w: CPU %d is not in the process affinity mask %v", ErrCPUList, cpu, allowed)
		}
	}
	return nil
}

// pinThread locks the calling goroutine to its OS thread and binds that
// thread to cpu. The goroutine must stay locked for its whole life (never
// UnlockOSThread): the thread's affinity is not restored, so the runtime
// must not reuse it, and it ends the thread when the goroutine returns.
func pinThread(cpu int) error {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("shard: sched_setaffinity CPU %d: %w", cpu, err)
	}
	return nil
}
