package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// TestInvalidConfigurationExitsTwo: a bad key stops the server before it
// starts, with exit code 2 and a message naming the key.
func TestInvalidConfigurationExitsTwo(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"bad backend", nil, []string{"WHIPPET_SYSTEM_SHARDING_BACKEND=bogus"}, "system.sharding.backend"},
		{"bad size", nil, []string{"WHIPPET_SYSTEM_TOPIC_SEGMENT_SIZE=12 parsecs"}, "WHIPPET_SYSTEM_TOPIC_SEGMENT_SIZE"},
		{"bad durability", nil, []string{"WHIPPET_SYSTEM_TOPIC_DURABILITY=carved"}, "system.topic.durability"},
		{"missing file", []string{"--config", "/nonexistent/server.toml"}, nil, "/nonexistent/server.toml"},
		{"bad profile", []string{"--profile", "heap"}, nil, "--profile"},
		{"tls asked", nil, []string{"WHIPPET_TCP_TLS_ENABLED=true"}, "tcp.tls.enabled"},
		{"cluster secret too short", nil, []string{"WHIPPET_CLUSTER_ENABLED=true", "WHIPPET_CLUSTER_AUTH_SHARED_SECRET=short",
			"WHIPPET_CLUSTER_NODES_0_NAME=a", "WHIPPET_CLUSTER_NODES_0_ADDRESS=127.0.0.1:1", "WHIPPET_CLUSTER_NODES_0_REPLICA_ADDRESS=127.0.0.1:2"},
			"cluster.auth.shared_secret"},
		// The flag overrides the environment, which named a valid replica.
		{"replica id flag", []string{"--replica-id", "3"}, []string{"WHIPPET_CLUSTER_ENABLED=true",
			"WHIPPET_CLUSTER_REPLICA_ID=0", "WHIPPET_CLUSTER_AUTH_SHARED_SECRET=0123456789abcdef0123456789abcdef",
			"WHIPPET_CLUSTER_NODES_0_NAME=a", "WHIPPET_CLUSTER_NODES_0_ADDRESS=127.0.0.1:1", "WHIPPET_CLUSTER_NODES_0_REPLICA_ADDRESS=127.0.0.1:2"},
			"cluster.replica_id: 3"},
	}
	binary := serverBinary(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			command := exec.Command(binary, tc.args...)
			command.Env = append([]string{"WHIPPET_SYSTEM_PATH=" + t.TempDir(), "WHIPPET_TCP_ADDRESS=127.0.0.1:0"},
				tc.env...)
			output, err := command.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitConfig {
				t.Fatalf("exit %v, want code %d\n%s", err, exitConfig, output)
			}
			if !strings.Contains(string(output), tc.want) {
				t.Fatalf("message does not name %q:\n%s", tc.want, output)
			}
		})
	}
}

// TestConfigFile: WHIPPET_CONFIG_PATH names a file merged over the
// default; the startup line names it, and its keys take effect.
func TestConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.toml")
	text := "[system.sharding]\nbackend = \"epoll\"\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "WHIPPET_CONFIG_PATH="+path)
	logs := s.logs.String()
	if !strings.Contains(logs, "config="+path) || !strings.Contains(logs, "backend=epoll") {
		t.Fatalf("the file did not take effect:\n%s", logs)
	}
	check(t, "ping", s.dial(t).Ping(ctxTimeout(t)))
}

// TestProfileAndFresh: --profile cpu writes a profile under system.path at
// exit; --fresh starts over on an empty data directory.
func TestProfileAndFresh(t *testing.T) {
	s := startServer(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "stream")(s.dial(t).CreateStream(ctx, "old", nil))
	s.stop()
	s.args = []string{"--profile", "cpu"}
	s.start()
	if streams := must[wire.StreamList](t, "streams")(s.dial(t).GetStreams(ctx)); len(streams) != 1 {
		t.Fatalf("streams after a plain restart %+v", streams)
	}
	s.stop()
	if _, err := os.Stat(filepath.Join(s.dataDir, "profiles", "cpu.pprof")); err != nil {
		t.Fatalf("cpu profile: %v", err)
	}
	s.args = []string{"--fresh"}
	s.start()
	if streams := must[wire.StreamList](t, "streams")(s.dial(t).GetStreams(ctx)); len(streams) != 0 {
		t.Fatalf("streams after --fresh %+v", streams)
	}
}

// TestPinCores: system.sharding.pin_cores was accepted and ignored. With
// it on (the default) some thread of the server is bound to one CPU;
// with it off none is. Read from /proc/<pid>/task/*/status.
func TestPinCores(t *testing.T) {
	allowed, err := os.ReadFile("/proc/self/status")
	if err != nil || !strings.Contains(string(allowed), "Cpus_allowed_list:") {
		t.Skip("/proc/<pid>/status with Cpus_allowed_list not available")
	}
	if shardCount(t) < 2 {
		t.Skip("pinning is only visible with at least two CPUs")
	}
	for _, pinned := range []bool{true, false} {
		s := startServer(t, "WHIPPET_SYSTEM_SHARDING_PIN_CORES="+strconv.FormatBool(pinned))
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", s.command.Process.Pid))
		single := 0
		for _, task := range tasks {
			status, err := os.ReadFile(task)
			if err != nil {
				continue // the thread ended
			}
			for _, line := range strings.Split(string(status), "\n") {
				if list, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok &&
					!strings.ContainsAny(strings.TrimSpace(list), ",-") {
					single++
				}
			}
		}
		if pinned != (single > 0) {
			t.Fatalf("pin_cores = %v: %d of %d threads bound to one CPU", pinned, single, len(tasks))
		}
		s.stop()
	}
}

// TestHTTPAddressTakenFailsStart: an enabled HTTP API whose address is
// taken stops the start with a message naming http.address, instead of a
// broker that serves TCP while its health checks and metrics are dark.
func TestHTTPAddressTakenFailsStart(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	command := exec.Command(serverBinary(t))
	command.Env = []string{"WHIPPET_SYSTEM_PATH=" + t.TempDir(), "WHIPPET_TCP_ADDRESS=127.0.0.1:0",
		"WHIPPET_HTTP_ENABLED=true", "WHIPPET_HTTP_ADDRESS=" + taken.Addr().String()}
	output, err := command.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitError {
		t.Fatalf("exit = %v, want code %d; output:\n%s", err, exitError, output)
	}
	if !strings.Contains(string(output), "http.address") {
		t.Fatalf("output does not name http.address:\n%s", output)
	}
}
