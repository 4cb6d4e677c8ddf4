package shard

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTicksPerSecond is USER_HZ, the unit of /proc CPU times (100 on
// every Linux architecture Go supports).
const clockTicksPerSecond = 100

// cpuSampler turns /proc's cumulative CPU times into usage percentages
// over the interval since the previous GetStats (since the start for the
// first). Any shard may ask, so a mutex guards the last sample.
type cpuSampler struct {
	mu          sync.Mutex
	at          time.Time
	processTick uint64
	hostBusy    uint64
	hostTotal   uint64
}

// usage returns the process's CPU use (percent of one CPU) and the host's
// (percent of all CPUs) since the previous call.
func (c *cpuSampler) usage(now time.Time, started time.Time) (process, host float32) {
	processTick := processCPUTicks()
	hostBusy, hostTotal := hostCPUTicks()
	c.mu.Lock()
	defer c.mu.Unlock()
	since := c.at
	if since.IsZero() {
		since = started
	}
	if elapsed := now.Sub(since).Seconds(); elapsed > 0 && processTick >= c.processTick {
		process = float32(float64(processTick-c.processTick) / clockTicksPerSecond / elapsed * 100)
	}
	if hostTotal > c.hostTotal && hostBusy >= c.hostBusy {
		host = float32(float64(hostBusy-c.hostBusy) / float64(hostTotal-c.hostTotal) * 100)
	}
	c.at, c.processTick, c.hostBusy, c.hostTotal = now, processTick, hostBusy, hostTotal
	return process, host
}

// processCPUTicks reads utime + stime of /proc/self/stat.
func processCPUTicks() uint64 {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	text := string(stat)
	end := strings.LastIndexByte(text, ')') // the command name may hold spaces
	if end < 0 {
		return 0
	}
	fields := strings.Fields(text[end+1:])
	const utimeField, stimeField = 11, 12 // fields 14 and 15, counted after the name
	if len(fields) <= stimeField {
		return 0
	}
	utime, _ := strconv.ParseUint(fields[utimeField], 10, 64) // malformed reads as 0
	stime, _ := strconv.ParseUint(fields[stimeField], 10, 64)
	return utime + stime
}

// hostCPUTicks reads the busy and total ticks of /proc/stat's cpu line.
func hostCPUTicks() (busy, total uint64) {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(stat), "\n")
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0
	}
	for i, field := range fields[1:] {
		value, _ := strconv.ParseUint(field, 10, 64) // malformed reads as 0
		total += value
		if i != 3 && i != 4 { // idle and iowait are not busy
			busy += value
		}
	}
	return busy, total
}
