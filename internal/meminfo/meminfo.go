// Package meminfo reads the machine's memory size from /proc/meminfo, for
// the server's memory limit (configs) and the benchmark's hardware report
// (bench), which may not import each other.
//
// Invariants:
//  1. MemTotalBytes reports a size only from a well-formed, nonzero
//     "MemTotal: N kB" line; anything else is not a size.
package meminfo

import (
	"strconv"
	"strings"
)

// Path is where the kernel publishes the memory counters.
const Path = "/proc/meminfo"

// MemTotalBytes reads the MemTotal line (kB) of a /proc/meminfo text as
// bytes; false when the line is missing, malformed or zero.
func MemTotalBytes(text string) (uint64, bool) {
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, false
		}
		kilobytes, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil || kilobytes == 0 || kilobytes > 1<<54-1 {
			return 0, false
		}
		return kilobytes << 10, true
	}
	return 0, false
}
