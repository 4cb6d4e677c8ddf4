package configs

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/shard"
)

// Credentials of the root user created on the first start.
type Credentials struct {
	Username string
	Password string
}

// RootCredentials reads WHIPPET_ROOT_USERNAME and WHIPPET_ROOT_PASSWORD
// from environ; an unset one is Iggy's default, iggy.
func RootCredentials(environ []string) Credentials {
	credentials := Credentials{Username: lookupEnv(environ, EnvRootUsername),
		Password: lookupEnv(environ, EnvRootPassword)}
	if credentials.Username == "" {
		credentials.Username = "iggy"
	}
	if credentials.Password == "" {
		credentials.Password = "iggy"
	}
	return credentials
}

// LogLevel maps system.logging.level to a slog level.
func (c *Config) LogLevel() slog.Level {
	switch c.System.Logging.Level {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// ServerOptions maps a validated configuration to the RPC front's and the
// shard runtime's options. allowedCPUs are the CPUs the process may run
// on: cpu_allocation "all" and a count pick from them.
func (c *Config) ServerOptions(root Credentials, allowedCPUs []int, logger *slog.Logger) (shard.ServerOptions, error) {
	cpus, err := c.cpus(allowedCPUs)
	if err != nil {
		return shard.ServerOptions{}, err
	}
	durability, err := engine.ParseDurability(c.System.Topic.Durability)
	if err != nil {
		return shard.ServerOptions{}, fmt.Errorf("%w: system.topic.durability: %v", ErrInvalid, err)
	}
	listen := ""
	if c.TCP.Enabled && !c.TCP.TLS.Enabled {
		// With tcp.tls, cmd listens and terminates TLS, and hands each
		// connection to the shards in process: no plaintext listener.
		listen = c.TCP.Address
	}
	options := shard.ServerOptions{
		Runtime: shard.Options{CPUs: cpus, Backend: c.System.Sharding.Backend, Listen: listen,
			Spin: c.System.Sharding.Spin.Std(), Unpinned: !c.System.Sharding.PinCores, Logger: logger},
		DataPath:                c.System.Path,
		RootUsername:            root.Username,
		RootPassword:            root.Password,
		ClusterName:             c.Cluster.Name,
		Roster:                  c.ClusterConfig(),
		TokensPerUserMax:        c.PersonalAccessToken.MaxTokensPerUser,
		ConnectionsMax:          c.TCP.MaxConnections,
		OpenFilesMax:            c.System.OpenFilesMax,
		RebalancingTimeout:      c.ConsumerGroup.RebalancingTimeout.Std(),
		SegmentBytes:            uint64(c.System.Topic.SegmentSize),
		Durability:              durability,
		CacheBytes:              -1, // none unless system.cache.size gives some
		FrameBytesMax:           int(c.TCP.MaxFrameSize),
		ConnectionAffinityOff:   !c.System.Sharding.ConnectionAffinity,
		ReadChecksumsUnverified: !c.System.Partition.ValidateChecksum,
		SendStreamingOff:        !c.System.Partition.WriteWhileReceiving,
		AllocateAheadOff:        !c.System.Partition.AllocateAhead,
		Logger:                  logger,
	}
	if bytes, err := c.CacheBytes(); err != nil {
		return options, err
	} else if bytes > 0 {
		options.CacheBytes = int(min(bytes, math.MaxInt))
	}
	if c.Heartbeat.Enabled {
		options.HeartbeatInterval = c.Heartbeat.Interval.Std()
	}
	if c.DataMaintenance.Messages.CleanerEnabled {
		options.MaintenanceInterval = c.DataMaintenance.Messages.Interval.Std()
	}
	return options, nil
}

// cpus resolves system.sharding.cpu_allocation against the allowed CPUs.
func (c *Config) cpus(allowed []int) ([]int, error) {
	text := strings.TrimSpace(c.System.Sharding.CPUAllocation)
	if text == "all" {
		return allowed, nil
	}
	if count, err := strconv.Atoi(text); err == nil {
		if count < 1 || count > len(allowed) {
			return nil, fmt.Errorf("%w: system.sharding.cpu_allocation: %d CPUs asked, %d allowed", ErrInvalid,
				count, len(allowed))
		}
		return allowed[:count], nil
	}
	cpus, err := shard.ParseCPUList(text)
	if err != nil {
		return nil, fmt.Errorf("%w: system.sharding.cpu_allocation: %v", ErrInvalid, err)
	}
	return cpus, nil
}

// Ignored lists enabled settings the server does not act on, one line
// each for the startup log.
func (c *Config) Ignored() []string {
	var ignored []string
	return ignored
}
