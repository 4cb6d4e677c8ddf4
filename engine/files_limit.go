package engine

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// RaiseOpenFilesLimit raises the process's soft RLIMIT_NOFILE to its hard
// limit when it is lower, and returns the soft limit in force. The hard
// limit is the container's or the administrator's: it is never raised.
func RaiseOpenFilesLimit() (uint64, error) {
	var limit unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &limit); err != nil {
		return 0, fmt.Errorf("engine: getrlimit RLIMIT_NOFILE: %w", err)
	}
	if limit.Cur >= limit.Max {
		return limit.Cur, nil
	}
	raised := limit
	raised.Cur = limit.Max
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &raised); err != nil {
		return limit.Cur, fmt.Errorf("engine: raise RLIMIT_NOFILE from %d to %d: %w", limit.Cur, limit.Max, err)
	}
	return raised.Cur, nil
}

// OpenFilesBudget derives the descriptors the data files may hold from
// the process's open-file limit: what is left after reserve (connections,
// listeners, rings, logs), but at least half the limit for files when
// reserve asks for more, and at least OpenFilesMin.
func OpenFilesBudget(limit uint64, reserve int) int {
	limited := int(min(limit, uint64(fileHandlesMax)))
	budget := limited - min(max(reserve, 0), limited/2)
	return max(budget, OpenFilesMin)
}

// OpenFilesMin is the least useful budget of data files: a partition
// works with one descriptor (no op holds two), but a shard that reopens
// a file for every op wastes its time.
const OpenFilesMin = 16
