// Command whippet-server runs the Whippet broker: an Apache Iggy
// compatible message-streaming server on a thread-per-core runtime.
//
// Usage:
//
//	whippet-server [--config server.toml] [--replica-id N] [--fresh] [--profile cpu|mem|trace]
//
// The configuration is the embedded default, then the file named by
// --config (or WHIPPET_CONFIG_PATH), then WHIPPET_* environment variables.
// --replica-id sets cluster.replica_id (this node's index into
// cluster.nodes) over the file and WHIPPET_CLUSTER_REPLICA_ID, so that the
// nodes of a cluster can share one configuration file.
// The root user is created on the first start from WHIPPET_ROOT_USERNAME
// and WHIPPET_ROOT_PASSWORD (default iggy/iggy); in a cluster it is created
// once through the metadata group, and a node whose root credentials are
// not the cluster's exits with code 2.
//
// Besides the Iggy TCP listener (tcp.address, with TLS when tcp.tls is
// enabled), it serves Iggy's HTTP REST API, a health check at GET / and
// Prometheus metrics at GET /metrics on http.address (HTTPS when
// http.tls is enabled). TLS clients and HTTP sessions reach the shards
// in process (a socketpair end handed to a shard), so they run the same
// front as plain TCP clients.
//
// Exit codes: 0 after a graceful shutdown, 1 on a startup or runtime
// error, 2 on an invalid configuration or command line, 3 when continuing
// was unsafe (a failed fsync: the data on disk may not be what was
// acknowledged).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/pkg/profile"

	"github.com/whippetio/whippet/configs"
	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/shard"
)

// Exit codes.
const (
	exitOK     = 0
	exitError  = 1
	exitConfig = 2
	exitFatal  = 3
)

// shutdownGrace bounds how long a SIGINT/SIGTERM shutdown waits for
// in-flight requests before it closes the remaining connections.
const shutdownGrace = 30 * time.Second

func main() { os.Exit(run(os.Args[1:], os.Environ())) }

func run(args []string, environ []string) int {
	flags := flag.NewFlagSet("whippet-server", flag.ContinueOnError)
	configPath := flags.String("config", "", "configuration file merged over the embedded default")
	fresh := flags.Bool("fresh", false, "delete system.path before starting (all data is lost)")
	profileKind := flags.String("profile", "", "write a profile on exit: cpu, mem or trace")
	replicaID := flags.Int("replica-id", -1, "this node's index into cluster.nodes (overrides cluster.replica_id)")
	if err := flags.Parse(args); err != nil {
		return exitConfig
	}
	flags.Visit(func(set *flag.Flag) {
		if set.Name == "replica-id" {
			environ = configs.WithReplicaID(environ, *replicaID)
		}
	})
	loaded, err := configs.Load(*configPath, environ)
	if err != nil {
		fmt.Fprintln(os.Stderr, "whippet-server: invalid configuration:", err)
		return exitConfig
	}
	config := &loaded.Config
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: config.LogLevel()}))
	slog.SetDefault(logger)
	for _, warning := range loaded.Warnings {
		logger.Warn(warning)
	}
	for _, ignored := range config.Ignored() {
		logger.Warn("setting ignored", "why", ignored)
	}
	stop, err := startProfile(*profileKind, config.System.Path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "whippet-server:", err)
		return exitConfig
	}
	defer stop()
	return serve(config, loaded.Source, *fresh, environ, logger)
}

func serve(config *configs.Config, source string, fresh bool, environ []string, logger *slog.Logger) int {
	allowed, err := shard.AllowedCPUs()
	if err != nil {
		logger.Error("read the CPU affinity", "err", err.Error())
		return exitError
	}
	options, err := config.ServerOptions(configs.RootCredentials(environ), allowed, logger)
	if err != nil {
		fmt.Fprintln(os.Stderr, "whippet-server: invalid configuration:", err)
		return exitConfig
	}
	if code := prepareDataPath(options.DataPath, fresh, logger); code != exitOK {
		return code
	}
	options.ConfigText = configText(*config)
	options.Fatal = func(reason error) { stopFatal(reason, logger) }
	backend, why := shard.BackendChoice(options.Runtime.Backend)
	// Registered before the shards start, so a SIGTERM sent the moment the
	// listener opens still drains gracefully instead of killing the process.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	var view shard.ClusterView
	if options.Roster.Enabled {
		if view, err = startReplication(&options, logger); err != nil {
			fmt.Fprintln(os.Stderr, "whippet-server: invalid cluster configuration:", err)
			return exitConfig
		}
	}
	server, err := shard.StartServer(options)
	if err != nil {
		logger.Error("start", "err", err.Error())
		if errors.Is(err, shard.ErrServerOptions) {
			return exitConfig
		}
		return exitError
	}
	if view != nil {
		server.SetClusterView(view)
	}
	fronts, err := startFronts(config, server, view, configs.RootCredentials(environ), logger)
	if err != nil {
		logger.Error("start the TLS and HTTP listeners", "err", err.Error())
		_ = server.Shutdown(context.Background()) // failing the start anyway
		return exitError
	}
	defer fronts.close()
	address := "none"
	if addr := server.Addr(); addr != nil {
		address = addr.String()
	}
	logger.Info("whippet-server started", "address", address, "backend", backend, "why", why,
		"shards", len(server.Runtime().Shards()), "data", absolute(options.DataPath), "config", source)
	err = server.RunUntil(signals, shutdownGrace)
	var fatal *engine.FatalError
	if errors.As(err, &fatal) || server.Fatal() != nil {
		logger.Error("stopped: continuing was unsafe", "err", fmt.Sprint(err, server.Fatal()))
		return exitFatal
	}
	if err != nil {
		logger.Error("stopped", "err", err.Error())
		return exitError
	}
	logger.Info("whippet-server stopped")
	return exitOK
}

// stopFatal exits when continuing is unsafe: with exitConfig when this
// node's configuration contradicts the cluster's (its root credentials),
// else with exitFatal.
func stopFatal(reason error, logger *slog.Logger) {
	if errors.Is(reason, shard.ErrRootCredentials) {
		fmt.Fprintln(os.Stderr, "whippet-server: invalid configuration:", reason)
		os.Exit(exitConfig)
	}
	logger.Error("stopping: continuing is unsafe", "reason", reason.Error())
	os.Exit(exitFatal)
}

// prepareDataPath creates the data directory, emptied first when fresh.
func prepareDataPath(path string, fresh bool, logger *slog.Logger) int {
	if fresh {
		if err := os.RemoveAll(path); err != nil {
			logger.Error("remove the data directory", "path", path, "err", err.Error())
			return exitError
		}
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		logger.Error("create the data directory", "path", path, "err", err.Error())
		return exitError
	}
	return exitOK
}

// startProfile starts the profile kind names; stop writes it.
func startProfile(kind, dataPath string) (stop func(), err error) {
	directory := filepath.Join(dataPath, "profiles")
	var mode func(*profile.Profile)
	switch kind {
	case "":
		return func() {}, nil
	case "cpu":
		mode = profile.CPUProfile
	case "mem":
		mode = profile.MemProfile
	case "trace":
		mode = profile.TraceProfile
	default:
		return nil, fmt.Errorf("--profile %q is not one of cpu, mem, trace", kind)
	}
	if err := os.MkdirAll(directory, 0o755); err != nil {
		return nil, err
	}
	running := profile.Start(mode, profile.ProfilePath(directory), profile.NoShutdownHook, profile.Quiet)
	return running.Stop, nil
}

// configText is the effective configuration as TOML, secrets redacted,
// for diagnostic snapshots.
func configText(config configs.Config) string {
	if config.Cluster.Auth.SharedSecret != "" {
		config.Cluster.Auth.SharedSecret = "(redacted)"
	}
	if config.HTTP.JWT.EncodingSecret != "" {
		config.HTTP.JWT.EncodingSecret = "(redacted)"
	}
	var out strings.Builder
	if err := toml.NewEncoder(&out).Encode(config); err != nil {
		return "encode the configuration: " + err.Error()
	}
	return out.String()
}

func absolute(path string) string {
	if resolved, err := filepath.Abs(path); err == nil {
		return resolved
	}
	return path
}
