package configs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func autoCacheBytes(t *testing.T) int {
	t.Helper()
	limit, err := MemoryLimitBytes()
	if err != nil {
		t.Fatal(err)
	}
	return int(limit / cacheAutoDivisor)
}

// TestCacheSize: system.cache.size resolves "auto" to a quarter of the
// memory limit, "0" to no cache and a size to itself; a bad value is an
// error naming the key.
func TestCacheSize(t *testing.T) {
	const limit = 8 << 30
	for _, row := range []struct {
		text    string
		want    uint64
		wantErr string
	}{
		{"auto", 2 << 30, ""},
		{" auto ", 2 << 30, ""},
		{"0", 0, ""},
		{"512 MiB", 512 << 20, ""},
		{"8 GiB", 8 << 30, ""},
		{"9 GiB", 0, "exceeds the memory limit"},
		{"100 B", 0, "is below"},
		{"lots", 0, "is not a size"},
		{"-1 GiB", 0, "is not a size"},
	} {
		got, err := cacheBytes(row.text, limit)
		if row.wantErr == "" {
			if err != nil || got != row.want {
				t.Fatalf("%q: %d, %v; want %d", row.text, got, err, row.want)
			}
			continue
		}
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "system.cache.size") ||
			!strings.Contains(err.Error(), row.wantErr) {
			t.Fatalf("%q: error %v, want one naming system.cache.size with %q", row.text, err, row.wantErr)
		}
	}
}

// TestCacheSizeThroughLoad: the key and its environment override reach
// the validated options, and a bad value fails the load naming the key.
func TestCacheSizeThroughLoad(t *testing.T) {
	loaded, err := Load("", []string{"WHIPPET_SYSTEM_CACHE_SIZE=64 MiB"})
	if err != nil {
		t.Fatal(err)
	}
	options, err := loaded.Config.ServerOptions(RootCredentials(nil), []int{0}, nil)
	if err != nil || options.CacheBytes != 64<<20 {
		t.Fatalf("cache bytes %d, %v; want 64 MiB", options.CacheBytes, err)
	}
	loaded, err = Load("", []string{"WHIPPET_SYSTEM_CACHE_SIZE=0"})
	if err != nil {
		t.Fatal(err)
	}
	if options, err = loaded.Config.ServerOptions(RootCredentials(nil), []int{0}, nil); err != nil || options.CacheBytes >= 0 {
		t.Fatalf("size 0: cache bytes %d, %v; want none (negative)", options.CacheBytes, err)
	}
	if _, err = Load("", []string{"WHIPPET_SYSTEM_CACHE_SIZE=12 parsecs"}); !errors.Is(err, ErrInvalid) ||
		!strings.Contains(err.Error(), "system.cache.size") {
		t.Fatalf("a bad size loaded: %v", err)
	}
}

// TestMemoryLimit: the cgroup's memory.max wins when below MemTotal, "max"
// or a missing file leaves MemTotal. Method: fixture files in a temporary
// directory stand in for /proc and /sys/fs/cgroup.
func TestMemoryLimit(t *testing.T) {
	directory, write := memoryFixture(t)
	memInfoPath = write("meminfo", "MemTotal:       16384 kB\nMemFree: 1 kB\n")
	procSelfCgroupPath = write("cgroup", "0::/box/\n")
	cgroupRootPath = directory
	for _, row := range []struct {
		memoryMax string
		want      uint64
	}{
		{"4096\n", 4096},
		{"max\n", 16384 << 10},
		{"99999999999\n", 16384 << 10},
	} {
		write("box/memory.max", row.memoryMax)
		if got, err := MemoryLimitBytes(); err != nil || got != row.want {
			t.Fatalf("memory.max %q: %d, %v; want %d", row.memoryMax, got, err, row.want)
		}
	}
	procSelfCgroupPath = filepath.Join(directory, "absent")
	if got, err := MemoryLimitBytes(); err != nil || got != 16384<<10 {
		t.Fatalf("no cgroup: %d, %v", got, err)
	}
	memInfoPath = write("meminfo", "MemFree: 1 kB\n")
	if _, err := MemoryLimitBytes(); err == nil {
		t.Fatalf("a meminfo without MemTotal gave a limit")
	}
}

// TestMemoryLimitReadOnce: Load reads the memory limit while validating
// and ServerOptions sizes the "auto" cache from that reading; a limit that
// changes in between (here: meminfo rewritten) is not read again.
func TestMemoryLimitReadOnce(t *testing.T) {
	directory, write := memoryFixture(t)
	memInfoPath = write("meminfo", "MemTotal:       65536 kB\n")
	procSelfCgroupPath = filepath.Join(directory, "absent")
	loaded, err := Load("", []string{"WHIPPET_SYSTEM_CACHE_SIZE=auto"})
	if err != nil {
		t.Fatal(err)
	}
	write("meminfo", "MemFree: 1 kB\n")
	options, err := loaded.Config.ServerOptions(RootCredentials(nil), []int{0}, nil)
	if err != nil || options.CacheBytes != (65536<<10)/cacheAutoDivisor {
		t.Fatalf("cache bytes %d, %v; want a quarter of the limit read by Load", options.CacheBytes, err)
	}
}

// TestMemoryLimitAncestor: a limit set on an ancestor cgroup binds the
// process as well: a leaf whose memory.max is "max" under a parent
// limited to 8 MiB gives 8 MiB, not MemTotal. Method: fixture files for
// /proc/self/cgroup and a two-level cgroup tree.
func TestMemoryLimitAncestor(t *testing.T) {
	directory, write := memoryFixture(t)
	memInfoPath = write("meminfo", "MemTotal:       1048576 kB\n")
	procSelfCgroupPath = write("cgroup", "0::/slice/service\n")
	cgroupRootPath = directory
	write("slice/memory.max", "8388608\n")
	write("slice/service/memory.max", "max\n")
	if got, err := MemoryLimitBytes(); err != nil || got != 8<<20 {
		t.Fatalf("parent limited to 8 MiB, leaf max: %d, %v; want %d", got, err, 8<<20)
	}
	write("slice/service/memory.max", "4194304\n")
	if got, err := MemoryLimitBytes(); err != nil || got != 4<<20 {
		t.Fatalf("leaf 4 MiB under an 8 MiB parent: %d, %v; want %d", got, err, 4<<20)
	}
}

// TestMemoryLimitV1: under the cgroup v1 memory controller (or a hybrid
// host, whose v2 root has no memory.max) the limit is memory.limit_in_bytes
// of the process's memory cgroup or an ancestor; v1's "unlimited" (a huge
// number) leaves MemTotal. Method: fixture files for a hybrid host.
func TestMemoryLimitV1(t *testing.T) {
	directory, write := memoryFixture(t)
	memInfoPath = write("meminfo", "MemTotal:       1048576 kB\n")
	procSelfCgroupPath = write("cgroup", "5:cpu,cpuacct:/\n4:memory:/docker/box\n0::/\n")
	cgroupRootPath = directory
	write("memory/docker/box/memory.limit_in_bytes", "9223372036854771712\n")
	write("memory/memory.limit_in_bytes", "9223372036854771712\n")
	if got, err := MemoryLimitBytes(); err != nil || got != 1<<30 {
		t.Fatalf("v1 unlimited: %d, %v; want MemTotal", got, err)
	}
	write("memory/docker/box/memory.limit_in_bytes", "16777216\n")
	if got, err := MemoryLimitBytes(); err != nil || got != 16<<20 {
		t.Fatalf("v1 limit of 16 MiB: %d, %v; want %d", got, err, 16<<20)
	}
}

// memoryFixture points the /proc and cgroup paths MemoryLimitBytes reads
// at a temporary directory (restored when the test ends) and returns it
// with a function writing a fixture file below it.
func memoryFixture(t *testing.T) (string, func(name, text string) string) {
	t.Helper()
	directory := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(directory, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	saved := [3]string{procSelfCgroupPath, cgroupRootPath, memInfoPath}
	t.Cleanup(func() { procSelfCgroupPath, cgroupRootPath, memInfoPath = saved[0], saved[1], saved[2] })
	return directory, write
}
