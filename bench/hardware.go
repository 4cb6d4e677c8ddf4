package bench

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/whippetio/whippet/internal/meminfo"
)

// Hardware is the fingerprint of the machine a run measured: enough to
// tell whether two reports are comparable.
type Hardware struct {
	Identifier    string  `json:"identifier"`
	CPUName       string  `json:"cpu_name"`
	CPUCores      int     `json:"cpu_cores"`
	TotalMemoryMB uint64  `json:"total_memory_mb"`
	OSName        string  `json:"os_name"`
	OSVersion     string  `json:"os_version"`
	KernelVersion string  `json:"kernel_version"`
	Architecture  string  `json:"architecture"`
	GoVersion     string  `json:"go_version"`
	IOURing       IOURing `json:"io_uring"`
	GitRevision   string  `json:"git_revision,omitempty"`
}

// IOURing is what the machine offers of io_uring: the sysctl that disables
// it, the kernel release, and the features a probe ring reports.
type IOURing struct {
	// Disabled is /proc/sys/kernel/io_uring_disabled: 0 enabled, 1 only
	// for the io_uring group, 2 disabled; -1 when the file is absent (a
	// kernel older than 6.6 without the knob).
	Disabled int `json:"disabled_sysctl"`
	// KernelAtLeast511 and KernelAtLeast61 mark the releases that brought
	// the features the server uses (registered buffers and multishot
	// accept by 5.11 and 5.19, DEFER_TASKRUN in 6.1).
	KernelAtLeast511 bool `json:"kernel_at_least_5_11"`
	KernelAtLeast61  bool `json:"kernel_at_least_6_1"`
	// SetupError is why a probe ring could not be set up ("" when it
	// could); Features are the IORING_FEAT_* bits the kernel reported.
	SetupError   string   `json:"setup_error,omitempty"`
	Features     uint32   `json:"features"`
	FeatureNames []string `json:"feature_names"`
	// Usable is the verdict: a probe ring was set up (or, without a probe,
	// the sysctl and the kernel release allow one).
	Usable bool `json:"usable"`
}

// Fingerprint reads the machine's description from /proc, uname and git.
func Fingerprint(identifier string) Hardware {
	hardware := Hardware{Identifier: identifier, CPUCores: runtime.NumCPU(), Architecture: runtime.GOARCH,
		GoVersion: runtime.Version()}
	if hardware.Identifier == "" {
		hardware.Identifier, _ = os.Hostname() // an empty identifier is acceptable
	}
	hardware.CPUName = cpuName(readText("/proc/cpuinfo"))
	hardware.TotalMemoryMB = memoryMB(readText(meminfo.Path))
	hardware.OSName, hardware.OSVersion = osRelease(readText("/etc/os-release"))
	hardware.KernelVersion = kernelRelease()
	hardware.IOURing = ioURing(readText("/proc/sys/kernel/io_uring_disabled"), hardware.KernelVersion)
	features, errno := probeIOURing()
	hardware.IOURing.Features, hardware.IOURing.FeatureNames = features, featureNames(features)
	hardware.IOURing.Usable = errno == 0
	if errno != 0 {
		hardware.IOURing.SetupError = errno.Error()
	}
	hardware.GitRevision = gitRevision()
	return hardware
}

func readText(path string) string {
	text, _ := os.ReadFile(path) // a missing file leaves the field empty
	return string(text)
}

// cpuName returns the first "model name" of /proc/cpuinfo.
func cpuName(cpuinfo string) string {
	scanner := bufio.NewScanner(strings.NewReader(cpuinfo))
	for scanner.Scan() {
		key, value, ok := strings.Cut(scanner.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
}

// memoryMB reads MemTotal (kB) of /proc/meminfo as MB; 0 when absent.
func memoryMB(text string) uint64 {
	bytes, _ := meminfo.MemTotalBytes(text) // no MemTotal leaves the field 0
	return bytes / 1_000_000
}

// osRelease reads NAME and VERSION_ID of /etc/os-release.
func osRelease(text string) (name, version string) {
	name = runtime.GOOS
	for _, line := range strings.Split(text, "\n") {
		key, value, ok := strings.Cut(line, "=")
		value = strings.Trim(value, `"`)
		switch {
		case ok && key == "NAME":
			name = value
		case ok && key == "VERSION_ID":
			version = value
		}
	}
	return name, version
}

func kernelRelease() string {
	var name syscall.Utsname
	if err := syscall.Uname(&name); err != nil {
		return "unknown"
	}
	var builder strings.Builder
	for _, char := range name.Release {
		if char == 0 {
			break
		}
		builder.WriteByte(byte(char))
	}
	return builder.String()
}

// ioURing judges io_uring from the sysctl text and the kernel release.
func ioURing(sysctl, release string) IOURing {
	state := IOURing{Disabled: -1}
	if value, err := strconv.Atoi(strings.TrimSpace(sysctl)); err == nil {
		state.Disabled = value
	}
	major, minor := kernelVersion(release)
	state.KernelAtLeast511 = major > 5 || (major == 5 && minor >= 11)
	state.KernelAtLeast61 = major > 6 || (major == 6 && minor >= 1)
	state.Usable = state.KernelAtLeast511 && state.Disabled != 2
	return state
}

// kernelVersion parses "6.18.0-foo" into 6, 18.
func kernelVersion(release string) (major, minor int) {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return 0, 0
	}
	major, _ = strconv.Atoi(parts[0])
	digits := strings.IndexFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' })
	if digits >= 0 {
		parts[1] = parts[1][:digits]
	}
	minor, _ = strconv.Atoi(parts[1])
	return major, minor
}

// gitRevision is the checkout's HEAD, with "-dirty" when it has changes;
// empty outside a git work tree.
func gitRevision() string {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return buildRevision()
	}
	revision := strings.TrimSpace(string(head))
	if status, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil &&
		len(strings.TrimSpace(string(status))) > 0 {
		revision += "-dirty"
	}
	return revision
}

// buildRevision is the revision stamped into the binary by go build, for a
// bench run outside its checkout ("" when the build carried none).
func buildRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	revision, modified := "", false
	for _, setting := range info.Settings {
		switch setting.Key {
		case "vcs.revision":
			revision = setting.Value
		case "vcs.modified":
			modified = setting.Value == "true"
		}
	}
	if revision != "" && modified {
		revision += "-dirty"
	}
	return revision
}
