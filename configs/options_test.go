package configs

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/whippetio/whippet/engine"
)

// TestServerOptions: every mapped key reaches the server options, from
// the default and from overrides.
func TestServerOptions(t *testing.T) {
	loaded, err := Load("", []string{"WHIPPET_SYSTEM_SHARDING_CPU_ALLOCATION=2", "WHIPPET_SYSTEM_SHARDING_BACKEND=epoll",
		"WHIPPET_TCP_ADDRESS=127.0.0.1:9999", "WHIPPET_SYSTEM_TOPIC_DURABILITY=written", "WHIPPET_HEARTBEAT_ENABLED=false",
		"WHIPPET_SYSTEM_PATH=/srv/whippet", "WHIPPET_PERSONAL_ACCESS_TOKEN_MAX_TOKENS_PER_USER=7",
		"WHIPPET_SYSTEM_SHARDING_SPIN=50 us"})
	if err != nil {
		t.Fatal(err)
	}
	root := RootCredentials([]string{"WHIPPET_ROOT_PASSWORD=hunter22"})
	options, err := loaded.Config.ServerOptions(root, []int{4, 5, 6}, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(options.Runtime.CPUs, []int{4, 5}) || options.Runtime.Backend != "epoll" ||
		options.Runtime.Listen != "127.0.0.1:9999" || options.Runtime.Spin != 50*time.Microsecond {
		t.Fatalf("runtime options %+v", options.Runtime)
	}
	if options.DataPath != "/srv/whippet" || options.Durability != engine.DurabilityWritten ||
		options.SegmentBytes != 1<<30 || options.TokensPerUserMax != 7 || options.HeartbeatInterval != 0 ||
		options.RebalancingTimeout != 30*time.Second || options.CacheBytes != autoCacheBytes(t) || options.ConnectionsMax != 10000 {
		t.Fatalf("server options %+v", options)
	}
	if options.RootUsername != "iggy" || options.RootPassword != "hunter22" {
		t.Fatalf("root %q/%q", options.RootUsername, options.RootPassword)
	}
	defaults, _ := Load("", nil)
	all, err := defaults.Config.ServerOptions(RootCredentials(nil), []int{0, 1, 2}, nil)
	if err != nil || !slices.Equal(all.Runtime.CPUs, []int{0, 1, 2}) || all.HeartbeatInterval != 30*time.Second ||
		all.Runtime.Unpinned || all.ConnectionAffinityOff || all.ReadChecksumsUnverified || all.SendStreamingOff ||
		all.AllocateAheadOff {
		t.Fatalf("defaults: %+v %v", all.Runtime, err)
	}
	unpinned, _ := Load("", []string{"WHIPPET_SYSTEM_SHARDING_PIN_CORES=false"})
	if options, err := unpinned.Config.ServerOptions(RootCredentials(nil), []int{0}, nil); err != nil ||
		!options.Runtime.Unpinned {
		t.Fatalf("pin_cores = false: %+v %v", options.Runtime, err)
	}
	stay, _ := Load("", []string{"WHIPPET_SYSTEM_SHARDING_CONNECTION_AFFINITY=false"})
	if options, err := stay.Config.ServerOptions(RootCredentials(nil), []int{0}, nil); err != nil ||
		!options.ConnectionAffinityOff {
		t.Fatalf("connection_affinity = false: %+v %v", options, err)
	}
	unverified, _ := Load("", []string{"WHIPPET_SYSTEM_PARTITION_VALIDATE_CHECKSUM=false"})
	if options, err := unverified.Config.ServerOptions(RootCredentials(nil), []int{0}, nil); err != nil ||
		!options.ReadChecksumsUnverified {
		t.Fatalf("validate_checksum = false: %+v %v", options, err)
	}
	whole, _ := Load("", []string{"WHIPPET_SYSTEM_PARTITION_WRITE_WHILE_RECEIVING=false"})
	if options, err := whole.Config.ServerOptions(RootCredentials(nil), []int{0}, nil); err != nil ||
		!options.SendStreamingOff {
		t.Fatalf("write_while_receiving = false: %+v %v", options, err)
	}
	appending, _ := Load("", []string{"WHIPPET_SYSTEM_PARTITION_ALLOCATE_AHEAD=false"})
	if options, err := appending.Config.ServerOptions(RootCredentials(nil), []int{0}, nil); err != nil ||
		!options.AllocateAheadOff {
		t.Fatalf("allocate_ahead = false: %+v %v", options, err)
	}
}

// TestServerOptionsRefusals: a CPU count beyond the allowed CPUs names
// the key.
func TestServerOptionsRefusals(t *testing.T) {
	loaded, err := Load("", []string{"WHIPPET_SYSTEM_SHARDING_CPU_ALLOCATION=3"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = loaded.Config.ServerOptions(RootCredentials(nil), []int{0, 1}, nil)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "system.sharding.cpu_allocation") {
		t.Fatalf("err %v", err)
	}
}

// TestOpenFilesMax: system.open_files_max defaults to 0 (derived by the
// data plane), an override reaches the server options, and a value below
// the engine's least budget is refused naming the key.
func TestOpenFilesMax(t *testing.T) {
	defaults, err := Load("", nil)
	if err != nil || defaults.Config.System.OpenFilesMax != 0 {
		t.Fatalf("default open_files_max %d, %v", defaults.Config.System.OpenFilesMax, err)
	}
	loaded, err := Load("", []string{"WHIPPET_SYSTEM_OPEN_FILES_MAX=5000"})
	if err != nil {
		t.Fatal(err)
	}
	options, err := loaded.Config.ServerOptions(RootCredentials(nil), []int{0}, nil)
	if err != nil || options.OpenFilesMax != 5000 {
		t.Fatalf("open_files_max override: %d, %v", options.OpenFilesMax, err)
	}
	_, err = Load("", []string{"WHIPPET_SYSTEM_OPEN_FILES_MAX=3"})
	if err == nil || !strings.Contains(err.Error(), "system.open_files_max") {
		t.Fatalf("open_files_max 3: %v, want an error naming the key", err)
	}
}
