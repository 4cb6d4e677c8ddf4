package bench

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// buildServer builds cmd/whippet-server, or skips the test saying why.
func buildServer(t *testing.T) string {
	t.Helper()
	root := ".."
	if _, err := os.Stat(filepath.Join(root, "cmd", "whippet-server")); err != nil {
		t.Skip("cmd/whippet-server is not in this tree, so there is no real server to run against")
	}
	binary := filepath.Join(t.TempDir(), ServerBinaryName)
	build := exec.Command("go", "build", "-o", binary, "./cmd/whippet-server")
	build.Dir = root
	if output, err := build.CombinedOutput(); err != nil {
		t.Skipf("go build ./cmd/whippet-server failed, so there is no real server to run against: %v\n%s", err, output)
	}
	return binary
}

// startTestServer builds and starts a local whippet-server for the test,
// with a context that ends after timeout; both end with the test.
func startTestServer(t *testing.T, timeout time.Duration) (context.Context, *Server) {
	t.Helper()
	binary := buildServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	server, err := StartLocalServer(ctx, binary, "iggy", "iggy")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := server.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return ctx, server
}

// TestKindsAgainstServer runs every kind briefly against a real local
// whippet-server and checks the reports and that counts add up.
func TestKindsAgainstServer(t *testing.T) {
	ctx, server := startTestServer(t, 5*time.Minute)
	checkKinds(t, server)
	t.Run("durability", func(t *testing.T) { checkDurability(t, ctx, server) })
	t.Run("background", func(t *testing.T) { checkBackground(t, ctx, server) })
}

// checkDurability runs with --durability memory and reads the option back.
func checkDurability(t *testing.T, ctx context.Context, server *Server) {
	config := smallConfig(KindPinnedProducer, server.Address)
	config.Durability = wire.DurabilityMemory
	runSmall(t, config, server)
	admin, err := client.Dial(ctx, client.Options{Address: server.Address, Username: "iggy", Password: "iggy"})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	topic, err := admin.GetTopic(ctx, wire.NamedID(StreamName(0)), wire.NamedID(TopicName))
	if err != nil {
		t.Fatal(err)
	}
	value, ok := topic.Options.Lookup(wire.OptionDurability)
	if !ok || string(value.Value) != wire.DurabilityMemory {
		t.Errorf("topic durability %q (%v), want memory", value.Value, ok)
	}
}

// TestLocalServerMode runs the way a user does with no --server-address:
// Run starts the server, writes the run directory with its log, stops it.
func TestLocalServerMode(t *testing.T) {
	binary := buildServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	config := smallConfig(KindPinnedProducer, "")
	config.ServerBinary, config.OutputDir = binary, t.TempDir()
	result, err := Run(ctx, config, Environment{})
	if err != nil {
		t.Fatal(err)
	}
	if !result.Report.Run.LocalServer || result.Report.ServerStats == nil || !result.Report.Accounting.Exact {
		t.Errorf("run %+v stats %v", result.Report.Run, result.Report.ServerStats)
	}
	// The server bound an ephemeral port and named it in its started line.
	if _, port, err := net.SplitHostPort(result.Report.Params.ServerAddress); err != nil || port == "0" {
		t.Errorf("server address %q, want the port the server bound", result.Report.Params.ServerAddress)
	}
	for _, name := range []string{ReportFile, ThroughputChartFile, LatencyChartFile, DistributionChartFile, ServerLogFile} {
		if _, err := os.Stat(filepath.Join(result.Directory, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestLocalServerThatExits checks that a server dying at start fails fast
// with a pointer to its log, instead of waiting out the start timeout.
func TestLocalServerThatExits(t *testing.T) {
	script := filepath.Join(t.TempDir(), ServerBinaryName)
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho no storage >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	_, err := StartLocalServer(context.Background(), script, "iggy", "iggy")
	if err == nil || time.Since(started) > ServerStartTimeout/2 {
		t.Fatalf("err %v after %v", err, time.Since(started))
	}
	config := smallConfig(KindPinnedProducer, "")
	config.ServerBinary = filepath.Join(t.TempDir(), "absent")
	if _, err := Run(context.Background(), config, Environment{NoFiles: true}); !errors.Is(err, ErrNoServerBinary) {
		t.Errorf("missing binary: %v", err)
	}
}

// checkBackground runs p1 with idle partitions and connections held open
// and checks that the background stream is gone afterwards.
func checkBackground(t *testing.T, ctx context.Context, server *Server) {
	options := DefaultSuiteOptions()
	options.Workloads, options.Repeats, options.Batches, options.MessagesPerBatch, options.MessageSize = []string{"p1"}, 1, 5, 50, 100
	options.ServerAddress, options.ServerPID = server.Address, server.PID
	options.IdlePartitions, options.IdleConnections = 10, 5
	if !testing.Short() {
		options.IdlePartitions = 1001 // two topics, the second of one partition
	}
	rows, err := RunSuite(ctx, options, Environment{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].MBps <= 0 {
		t.Fatalf("rows %+v", rows)
	}
	admin, err := client.Dial(ctx, client.Options{Address: server.Address, Username: "iggy", Password: "iggy"})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.GetStream(ctx, wire.NamedID(BackgroundStreamName)); client.StatusOf(err) != wire.StatusStreamIDNotFound {
		t.Fatalf("background stream after the suite: %v, want StreamIDNotFound", err)
	}
}
