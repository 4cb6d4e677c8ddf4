package bench

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestHardwareParsers(t *testing.T) {
	cpuinfo := "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n"
	if got := cpuName(cpuinfo); got != "Intel(R) Xeon(R) CPU @ 2.20GHz" {
		t.Errorf("cpuName = %q", got)
	}
	if got := memoryMB("MemTotal:       24576000 kB\nMemFree: 1 kB\n"); got != 25165 {
		t.Errorf("memoryMB = %d, want 25165 (24576000 KiB)", got)
	}
	name, version := osRelease("NAME=\"Debian GNU/Linux\"\nVERSION_ID=\"13\"\n")
	if name != "Debian GNU/Linux" || version != "13" {
		t.Errorf("osRelease = %q %q", name, version)
	}
	if names := featureNames(1<<0 | 1<<5 | 1<<30); len(names) != 3 || names[1] != "FAST_POLL" || names[2] != "BIT30" {
		t.Errorf("featureNames = %v", names)
	}
	if major, minor := kernelVersion("6.18.0-rc3+"); major != 6 || minor != 18 {
		t.Errorf("kernelVersion = %d.%d", major, minor)
	}
	rows := []struct {
		sysctl, release string
		want            IOURing
	}{
		{"0\n", "6.18.0", IOURing{Disabled: 0, KernelAtLeast511: true, KernelAtLeast61: true, Usable: true}},
		{"2\n", "6.18.0", IOURing{Disabled: 2, KernelAtLeast511: true, KernelAtLeast61: true}},
		{"", "5.15.0", IOURing{Disabled: -1, KernelAtLeast511: true, Usable: true}},
		{"", "5.4.0", IOURing{Disabled: -1}},
	}
	for _, row := range rows {
		if got := ioURing(row.sysctl, row.release); !reflect.DeepEqual(got, row.want) {
			t.Errorf("ioURing(%q, %q) = %+v, want %+v", row.sysctl, row.release, got, row.want)
		}
	}
}

// TestFingerprintHere reads this machine: the fields a report needs are set.
func TestFingerprintHere(t *testing.T) {
	hardware := Fingerprint("")
	if hardware.Identifier == "" || hardware.CPUCores < 1 || hardware.KernelVersion == "" || hardware.GoVersion == "" {
		t.Errorf("fingerprint %+v", hardware)
	}
	if _, err := os.Stat("/proc/sys/kernel/io_uring_disabled"); err == nil && hardware.IOURing.Disabled < 0 {
		t.Error("the io_uring sysctl exists but was not read")
	}
	if !hardware.IOURing.Usable {
		t.Skipf("io_uring_setup refused here (%s): the feature bits cannot be checked", hardware.IOURing.SetupError)
	}
	if hardware.IOURing.Features&1 == 0 || hardware.IOURing.FeatureNames[0] != "SINGLE_MMAP" {
		t.Errorf("a kernel that sets up rings reports SINGLE_MMAP (5.4+): %+v", hardware.IOURing)
	}
}

func TestNames(t *testing.T) {
	if got := lowerSnake("Intel(R) Xeon(R) CPU @ 2.20GHz"); got != "intel_r_xeon_r_cpu_2_20ghz" {
		t.Errorf("lowerSnake = %q", got)
	}
	config := normalized(t, KindBalancedProducer, func(c *Config) {
		c.TotalData, c.MessageBatches = 8_000_000_000, 0
		c.MessageSize = Range{200, 500}
		c.Remark, c.GitRef, c.Identifier = "nightly run", "v1", "box"
	})
	hardware := Hardware{CPUName: "AMD EPYC 7B13"}
	want := "balanced_producer_8_200-500_1000_8GB_tcp_nightly_run_v1_box_amd_epyc_7b13"
	if got := RunName(config, &hardware); got != want {
		t.Errorf("RunName = %q, want %q", got, want)
	}
	if !strings.Contains(PrettyName(config), "8 producers") {
		t.Errorf("PrettyName = %q", PrettyName(config))
	}
}

func TestCPUParsers(t *testing.T) {
	stat := "4242 (whippet server) S 1 2 3 4 5 6 7 8 9 10 250 150 0 0 20 0 9 0\n"
	if seconds, ok := parseProcStat(stat); !ok || seconds != 4 {
		t.Errorf("parseProcStat = %v %v, want 4 s (400 ticks)", seconds, ok)
	}
	if _, ok := parseProcStat("garbage"); ok {
		t.Error("garbage parsed")
	}
	before := parseMachineTicks("cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 1 2\n")
	after := parseMachineTicks("cpu  200 0 200 1300 200 0 0 100 0 0\n")
	steal, idle := machineShares(before, after)
	if steal != 10 || idle != 70 {
		t.Errorf("steal %v idle %v, want 10 and 70", steal, idle)
	}
	seconds := 1.5
	usage := CPUUsage{ServerSeconds: &seconds, ClientSeconds: 0.5, WallSeconds: 2}
	if usage.ServerPct() != 75 || usage.ClientPct() != 25 || (CPUUsage{}).ServerPct() != -1 {
		t.Error("CPU percentages")
	}
}

// TestFindServerBinary checks the explicit path and the missing case.
func TestFindServerBinary(t *testing.T) {
	fake := filepath.Join(t.TempDir(), ServerBinaryName)
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := FindServerBinary(fake); err != nil || got != fake {
		t.Errorf("explicit: %q %v", got, err)
	}
	if _, err := FindServerBinary(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("a missing explicit binary was accepted")
	}
	environment := serverEnvironment("127.0.0.1:5", "/tmp/x", "iggy", "secret")
	joined := strings.Join(environment, "\n")
	for _, want := range []string{"WHIPPET_TCP_ADDRESS=127.0.0.1:5", "WHIPPET_SYSTEM_PATH=/tmp/x",
		"WHIPPET_HTTP_ENABLED=false", "WHIPPET_ROOT_USERNAME=iggy", "WHIPPET_ROOT_PASSWORD=secret"} {
		if !strings.Contains(joined, want) {
			t.Errorf("server environment lacks %s", want)
		}
	}
}
