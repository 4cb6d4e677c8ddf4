package configs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaultLoads(t *testing.T) {
	loaded, err := Load("", nil)
	if err != nil {
		t.Fatalf("embedded default does not load: %v", err)
	}
	c := loaded.Config
	if c.TCP.Address != "0.0.0.0:8090" || c.System.Path != "local_data" || c.HTTP.Address != "0.0.0.0:3000" {
		t.Fatalf("defaults differ from Iggy's: tcp %q path %q http %q", c.TCP.Address, c.System.Path, c.HTTP.Address)
	}
	if c.TCP.MaxFrameSize != 64<<20 || c.System.Topic.SegmentSize != 1<<30 {
		t.Fatalf("sizes: frame %d segment %d", c.TCP.MaxFrameSize, c.System.Topic.SegmentSize)
	}
	if c.Heartbeat.Interval.Std() != 30*time.Second || c.System.Sharding.Spin.Std() != 0 {
		t.Fatalf("durations: heartbeat %v spin %v", c.Heartbeat.Interval.Std(), c.System.Sharding.Spin.Std())
	}
	if c.System.Topic.Durability != "persisted" || c.Cluster.Enabled {
		t.Fatalf("durability %q cluster %v", c.System.Topic.Durability, c.Cluster.Enabled)
	}
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFileMergesOverDefault(t *testing.T) {
	path := writeFile(t, "[tcp]\naddress = \"127.0.0.1:9999\"\n[system.sharding]\ncpu_allocation = \"0-1\"\n")
	loaded, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Config.TCP.Address != "127.0.0.1:9999" || loaded.Source != path {
		t.Fatalf("file not applied: %+v", loaded.Config.TCP)
	}
	if !loaded.Config.TCP.Enabled || loaded.Config.TCP.MaxConnections != 10000 {
		t.Fatal("keys absent from the file lost their defaults")
	}
}

func TestConfigPathFromEnvironment(t *testing.T) {
	path := writeFile(t, "[system]\npath = \"elsewhere\"\n")
	loaded, err := Load("", []string{EnvConfigPath + "=" + path})
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Config.System.Path != "elsewhere" {
		t.Fatalf("system.path = %q", loaded.Config.System.Path)
	}
}

func TestEnvironmentOverrides(t *testing.T) {
	environ := []string{
		"WHIPPET_TCP_ADDRESS=127.0.0.1:1234",
		"WHIPPET_TCP_TLS_ENABLED=false",
		"WHIPPET_SYSTEM_SHARDING_CPU_ALLOCATION=1",
		"WHIPPET_SYSTEM_TOPIC_SEGMENT_SIZE=16 MiB",
		"WHIPPET_HEARTBEAT_INTERVAL=5 s",
		"WHIPPET_CLUSTER_NODES_0_ADDRESS=127.0.0.1:8090",
		"WHIPPET_CLUSTER_NODES_0_NAME=one",
		"WHIPPET_NOT_A_KEY=1",
		"WHIPPET_ROOT_PASSWORD=secret",
		"HOME=/root",
	}
	loaded, err := Load("", environ)
	if err != nil {
		t.Fatal(err)
	}
	c := loaded.Config
	if c.TCP.Address != "127.0.0.1:1234" || c.System.Sharding.CPUAllocation != "1" {
		t.Fatalf("tcp.address %q cpu_allocation %q", c.TCP.Address, c.System.Sharding.CPUAllocation)
	}
	if c.System.Topic.SegmentSize != 16<<20 || c.Heartbeat.Interval.Std() != 5*time.Second {
		t.Fatalf("segment_size %d interval %v", c.System.Topic.SegmentSize, c.Heartbeat.Interval.Std())
	}
	if len(c.Cluster.Nodes) != 1 || c.Cluster.Nodes[0].Name != "one" || c.Cluster.Nodes[0].Address != "127.0.0.1:8090" {
		t.Fatalf("cluster.nodes = %+v", c.Cluster.Nodes)
	}
	if len(loaded.Warnings) != 1 || !strings.Contains(loaded.Warnings[0], "WHIPPET_NOT_A_KEY") {
		t.Fatalf("warnings = %q", loaded.Warnings)
	}
}

// TestErrorsNameTheKey is the operator's contract: a bad config stops the
// server with a message that points at the key to fix.
func TestErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		name, file string
		environ    []string
		key        string
	}{
		{"unknown key", "[tcp]\nadress = \"x\"\n", nil, "tcp.adress"},
		{"bad address", "[tcp]\naddress = \"nope\"\n", nil, "tcp.address"},
		{"bad size", "[tcp]\nmax_frame_size = \"lots\"\n", nil, "tcp.max_frame_size"},
		{"small frame", "[tcp]\nmax_frame_size = \"1 KiB\"\n", nil, "tcp.max_frame_size"},
		{"bad durability", "[system.topic]\ndurability = \"maybe\"\n", nil, "system.topic.durability"},
		{"bad backend", "", []string{"WHIPPET_SYSTEM_SHARDING_BACKEND=kqueue"}, "system.sharding.backend"},
		{"bad cpus", "[system.sharding]\ncpu_allocation = \"3-1\"\n", nil, "system.sharding.cpu_allocation"},
		// Keys the runtime does not read are refused, never silently kept.
		{"ring entries", "[system.sharding]\nring_entries = 4096\n", nil, "system.sharding.ring_entries"},
		{"inbox capacity", "[system.sharding]\ninbox_capacity = 1024\n", nil, "system.sharding.inbox_capacity"},
		{"in flight", "[tcp]\nmax_in_flight_per_connection = 8\n", nil, "tcp.max_in_flight_per_connection"},
		{"bad env bool", "", []string{"WHIPPET_TCP_ENABLED=yes please"}, "WHIPPET_TCP_ENABLED"},
		{"tls without cert", "[tcp.tls]\nenabled = true\n", nil, "tcp.tls.cert_file"},
		{"cluster without secret", "[cluster]\nenabled = true\n[[cluster.nodes]]\nname = \"a\"\naddress = \"127.0.0.1:1\"\nreplica_address = \"127.0.0.1:2\"\n", nil, "cluster.auth.shared_secret"},
		{"cluster bad replica id", "[cluster]\nenabled = true\nreplica_id = 3\n[[cluster.nodes]]\nname = \"a\"\naddress = \"127.0.0.1:1\"\nreplica_address = \"127.0.0.1:2\"\n", nil, "cluster.replica_id"},
		{"syntax", "[tcp\n", nil, "server.toml: line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.file != "" {
				path = writeFile(t, tc.file)
			}
			_, err := Load(path, tc.environ)
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("error %q does not name %q", err, tc.key)
			}
		})
	}
}

func TestUnits(t *testing.T) {
	durations := map[string]time.Duration{"500 ms": 500 * time.Millisecond, "30 s": 30 * time.Second,
		"1 m": time.Minute, "7 days": 7 * 24 * time.Hour, "1m30s": 90 * time.Second, "0": 0, "50us": 50 * time.Microsecond}
	for text, want := range durations {
		if got, err := ParseDuration(text); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	sizes := map[string]uint64{"4096 B": 4096, "64 KiB": 64 << 10, "2 MB": 2_000_000, "1 GiB": 1 << 30, "7": 7, "1.5 KiB": 1536}
	for text, want := range sizes {
		if got, err := ParseSize(text); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for _, bad := range []string{"", "ms", "-1 s", "5 fortnights"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"", "KiB", "-5 B", "3 bytes", "99999999999 TiB"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

func TestCheckCPUAllocation(t *testing.T) {
	for _, good := range []string{"all", "2", "0-2,5", " 1 "} {
		if err := checkCPUAllocation(good); err != nil {
			t.Errorf("checkCPUAllocation(%q) = %v", good, err)
		}
	}
	for _, bad := range []string{"0,0", "a", "-1", "0-", "0", "3-1"} {
		if err := checkCPUAllocation(bad); err == nil {
			t.Errorf("checkCPUAllocation(%q) accepted", bad)
		}
	}
}
