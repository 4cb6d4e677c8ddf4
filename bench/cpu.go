package bench

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CPUUsage is the CPU a run cost, as the lab table reports it: the server's
// and this process's CPU seconds, and the machine's steal and idle shares.
type CPUUsage struct {
	ServerSeconds *float64 `json:"server_cpu_seconds,omitempty"`
	ClientSeconds float64  `json:"client_cpu_seconds"`
	WallSeconds   float64  `json:"wall_seconds"`
	StealPct      float64  `json:"machine_steal_pct"`
	IdlePct       float64  `json:"machine_idle_pct"`
}

// ServerPct is the server's CPU as a share of one core (-1 if unknown).
func (u CPUUsage) ServerPct() float64 {
	if u.ServerSeconds == nil || u.WallSeconds <= 0 {
		return -1
	}
	return *u.ServerSeconds / u.WallSeconds * 100
}

// ClientPct is this process's CPU as a share of one core.
func (u CPUUsage) ClientPct() float64 {
	if u.WallSeconds <= 0 {
		return 0
	}
	return u.ClientSeconds / u.WallSeconds * 100
}

// clockTicksPerSecond is USER_HZ, 100 on every Linux architecture Go runs on.
const clockTicksPerSecond = 100

// cpuSampler reads the counters at the start of a phase and diffs them at
// its end.
type cpuSampler struct {
	pid         int
	began       time.Time
	server      float64
	serverKnown bool
	client      float64
	machine     []float64
}

func startCPU(pid int) *cpuSampler {
	sampler := &cpuSampler{pid: pid, began: time.Now(), client: selfCPUSeconds(), machine: machineTicks()}
	sampler.server, sampler.serverKnown = processCPUSeconds(pid)
	return sampler
}

func (s *cpuSampler) stop() CPUUsage {
	usage := CPUUsage{ClientSeconds: selfCPUSeconds() - s.client, WallSeconds: time.Since(s.began).Seconds()}
	if server, ok := processCPUSeconds(s.pid); ok && s.serverKnown {
		spent := server - s.server
		usage.ServerSeconds = &spent
	}
	usage.StealPct, usage.IdlePct = machineShares(s.machine, machineTicks())
	return usage
}

// processCPUSeconds reads utime+stime of pid from /proc (false if pid is
// 0 or gone).
func processCPUSeconds(pid int) (float64, bool) {
	if pid <= 0 {
		return 0, false
	}
	text, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	return parseProcStat(string(text))
}

// parseProcStat reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line, whose command name may hold spaces.
func parseProcStat(text string) (float64, bool) {
	closing := strings.LastIndexByte(text, ')')
	if closing < 0 {
		return 0, false
	}
	fields := strings.Fields(text[closing+1:])
	if len(fields) < 13 {
		return 0, false
	}
	user, errUser := strconv.ParseFloat(fields[11], 64)
	system, errSystem := strconv.ParseFloat(fields[12], 64)
	if errUser != nil || errSystem != nil {
		return 0, false
	}
	return (user + system) / clockTicksPerSecond, true
}

func selfCPUSeconds() float64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	seconds := func(value syscall.Timeval) float64 { return float64(value.Sec) + float64(value.Usec)/1e6 }
	return seconds(usage.Utime) + seconds(usage.Stime)
}

// machineTicks reads the aggregate cpu line of /proc/stat: user nice
// system idle iowait irq softirq steal.
func machineTicks() []float64 {
	text, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil
	}
	return parseMachineTicks(string(text))
}

func parseMachineTicks(text string) []float64 {
	line, _, _ := strings.Cut(text, "\n")
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return nil
	}
	ticks := make([]float64, 8)
	for index := range ticks {
		ticks[index], _ = strconv.ParseFloat(fields[index+1], 64)
	}
	return ticks
}

// machineShares returns the steal and idle (idle + iowait) percentages of
// the ticks between two readings.
func machineShares(before, after []float64) (steal, idle float64) {
	if len(before) != 8 || len(after) != 8 {
		return 0, 0
	}
	var total float64
	delta := make([]float64, 8)
	for index := range delta {
		delta[index] = after[index] - before[index]
		total += delta[index]
	}
	if total <= 0 {
		return 0, 0
	}
	return delta[7] / total * 100, (delta[3] + delta[4]) / total * 100
}
