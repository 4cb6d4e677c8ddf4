package configs

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/whippetio/whippet/internal/meminfo"
)

// cacheAutoDivisor: size = "auto" gives the cache this fraction of the
// memory limit. The rest is the journals and read buffers of the
// partitions, connection buffers, the Go heap, and room for whatever else
// runs on the host; a broker's page-cache peers (Kafka) take what the OS
// leaves, which on a shared host is often less than a quarter.
const cacheAutoDivisor = 4

// cacheBytesMin is the smallest nonzero cache: one 4 KiB block.
const cacheBytesMin = 4 << 10

// Paths the memory limit is read from (variables so tests can point them
// at fixtures).
var (
	procSelfCgroupPath = "/proc/self/cgroup"
	cgroupRootPath     = "/sys/fs/cgroup"
	memInfoPath        = meminfo.Path
)

// MemoryLimitBytes is the memory this process may use: its cgroup's
// limit (cgroupMemoryMax) when one is set, else the machine's MemTotal,
// whichever is smaller.
func MemoryLimitBytes() (uint64, error) {
	text, err := os.ReadFile(memInfoPath)
	if err != nil {
		return 0, fmt.Errorf("configs: read the memory size: %w", err)
	}
	total, ok := meminfo.MemTotalBytes(string(text))
	if !ok {
		return 0, fmt.Errorf("configs: no MemTotal in %s", memInfoPath)
	}
	if limit, ok := cgroupMemoryMax(); ok && limit < total {
		return limit, nil
	}
	return total, nil
}

// cgroupMemoryMax reads the memory limit of this process's cgroup and of
// its ancestors, which bind it as well (a systemd slice, a container's
// cgroup above the one the process runs in), and returns the smallest:
// memory.max under cgroup v2, memory.limit_in_bytes under the v1 memory
// controller (hosts and container runtimes still on v1 or hybrid). False
// when none is set or every one is "max".
func cgroupMemoryMax() (uint64, bool) {
	membership, err := os.ReadFile(procSelfCgroupPath)
	if err != nil {
		return 0, false
	}
	var limit uint64
	found := false
	for line := range strings.Lines(string(membership)) {
		fields := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(fields) != 3 {
			continue
		}
		var root, file string
		switch {
		case fields[0] == "0" && fields[1] == "":
			root, file = cgroupRootPath, "/memory.max"
		case slices.Contains(strings.Split(fields[1], ","), "memory"):
			root, file = cgroupRootPath+"/memory", "/memory.limit_in_bytes"
		default:
			continue
		}
		for path := strings.TrimSuffix(fields[2], "/"); ; path = path[:strings.LastIndex(path, "/")] {
			if text, err := os.ReadFile(root + path + file); err == nil {
				if value, ok := parseMemoryMax(string(text)); ok && (!found || value < limit) {
					limit, found = value, true
				}
			}
			if !strings.Contains(path, "/") {
				break
			}
		}
	}
	return limit, found
}

// parseMemoryMax reads a cgroup v2 memory.max: bytes, or "max".
func parseMemoryMax(text string) (uint64, bool) {
	value, err := strconv.ParseUint(strings.TrimSpace(text), 10, 64)
	return value, err == nil && value > 0
}

// cacheBytes resolves system.cache.size against limitBytes, the memory
// limit: "auto" is a share of it, "0" none, anything else a size that
// must fit within the limit.
func cacheBytes(text string, limitBytes uint64) (uint64, error) {
	if strings.TrimSpace(text) == "auto" {
		return limitBytes / cacheAutoDivisor, nil
	}
	size, err := ParseSize(text)
	if err != nil {
		return 0, invalid("system.cache.size", "%v, or \"auto\"", err)
	}
	if size != 0 && size < cacheBytesMin {
		return 0, invalid("system.cache.size", "%d bytes is below %d (use \"0\" for no cache)", size, cacheBytesMin)
	}
	if size > limitBytes {
		return 0, invalid("system.cache.size", "%d bytes exceeds the memory limit of %d bytes", size, limitBytes)
	}
	return size, nil
}

// CacheBytes is the cache memory system.cache.size asks for, resolved
// against the memory limit (MemoryLimitBytes); 0 means no cache.
func (c *Config) CacheBytes() (uint64, error) {
	limit, err := c.memoryLimitBytes()
	if err != nil {
		if strings.TrimSpace(c.System.Cache.Size) == "auto" {
			return 0, invalid("system.cache.size", "\"auto\" needs the memory limit: %v", err)
		}
		limit = math.MaxUint64 // an explicit size stands on its own
	}
	return cacheBytes(c.System.Cache.Size, limit)
}

// memoryReading is one reading of MemoryLimitBytes.
type memoryReading struct {
	done  bool
	bytes uint64
	err   error
}

// memoryLimitBytes is MemoryLimitBytes, read on the first call and kept:
// the limit belongs to the process, not to the keys, so a later change of
// the keys leaves it valid.
func (c *Config) memoryLimitBytes() (uint64, error) {
	if !c.memory.done {
		c.memory.bytes, c.memory.err = MemoryLimitBytes()
		c.memory.done = true
	}
	return c.memory.bytes, c.memory.err
}
