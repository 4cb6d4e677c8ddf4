package shard

import (
	"runtime"
	"sync"
)

// A shard thread sleeps in a blocking syscall (epoll_wait, io_uring_enter)
// entered through Syscall6, which leaves its P in the syscall state; the Go
// runtime hands such a P to other goroutines only when sysmon notices, after
// 20 µs to 10 ms. With GOMAXPROCS at the CPU count, sleeping shards would
// make every other goroutine of the process (the main, metrics, tests'
// clients) wait for sysmon. So while shards run, GOMAXPROCS is raised by
// their number, and restored when the last runtime stops.
var procs struct {
	sync.Mutex
	shards int // shards of running runtimes
	base   int // GOMAXPROCS before the first of them started
}

func addShardProcs(count int) {
	procs.Lock()
	defer procs.Unlock()
	if procs.shards == 0 {
		procs.base = runtime.GOMAXPROCS(0)
	}
	procs.shards += count
	runtime.GOMAXPROCS(procs.base + procs.shards)
}

func removeShardProcs(count int) {
	procs.Lock()
	defer procs.Unlock()
	procs.shards -= count
	runtime.GOMAXPROCS(procs.base + procs.shards)
}
