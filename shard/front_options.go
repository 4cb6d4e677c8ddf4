package shard

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/whippetio/whippet/engine"
)

// ServerOptions configure the RPC front: the runtime it runs on, where its
// data lives, and the knobs of sessions, groups and tokens. configs builds
// them from the server configuration; tests build them directly.
type ServerOptions struct {
	// Runtime is the shard runtime's configuration; StartServer sets its
	// NewHandler, OnStart, OnMessage and OnStop.
	Runtime Options
	// DataPath is the directory holding metadata/ and the partitions.
	DataPath string
	// RootUsername and RootPassword create the root user (id 0) on the
	// first start, when no user exists yet.
	RootUsername string
	RootPassword string
	// ClusterName is reported by GetClusterMetadata.
	ClusterName string
	// Cluster is the group host in cluster mode (nil: a single node); its
	// transport is set. The metadata plane opens group 0 on it, and every
	// partition's writes replicate through the partition's group.
	Cluster *Cluster
	// HeartbeatInterval: a consumer-group member silent for 1.2 of it is
	// evicted as stale (PROTOCOL.md §5.7); zero never evicts.
	HeartbeatInterval time.Duration
	// TokensPerUserMax caps personal access tokens per user.
	TokensPerUserMax int
	// ConnectionsMax closes connections accepted beyond it (0: no cap
	// beyond the runtime's own).
	ConnectionsMax int
	// RebalancingTimeout bounds how long a partition being handed over
	// in a cooperative rebalance stays with its previous owner.
	RebalancingTimeout time.Duration
	// SegmentBytes and Durability are the topic defaults for options a
	// client did not set.
	SegmentBytes uint64
	Durability   engine.Durability
	// CacheBytes is the recent-batch cache budget all shards share (0:
	// the engine's default; negative: none).
	CacheBytes int
	// OpenFilesMax bounds the data files held open, all shards together
	// (DataOptions.OpenFilesMax); 0 derives it from RLIMIT_NOFILE minus
	// room for ConnectionsMax connections.
	OpenFilesMax int
	// MaintenanceInterval is how often retention runs (0: the data
	// plane's default).
	MaintenanceInterval time.Duration
	// ConnectionAffinityOff keeps every connection on the shard that
	// accepted it. By default a connection whose partition requests settle
	// on another shard's partitions moves to that shard, which spares each
	// request two cross-shard hops (front_affinity.go).
	ConnectionAffinityOff bool
	// SendStreamingOff appends every SendMessages batch once its request is
	// whole. By default a large one is appended while it arrives when its
	// partition is the connection's shard's (front_stream.go).
	SendStreamingOff bool
	// ReadChecksumsUnverified serves batches read from disk without
	// verifying their checksums (system.partition.validate_checksum =
	// false). Appends are verified whatever it says.
	ReadChecksumsUnverified bool
	// AllocateAheadOff: large appends never allocate log space ahead
	// (system.partition.allocate_ahead = false).
	AllocateAheadOff bool
	// FrameBytesMax is the largest request frame accepted (0: 64 MiB,
	// the protocol's cap); a larger one closes the connection.
	FrameBytesMax int
	// Roster is this node's cluster configuration, which cluster metadata
	// reports; the zero value is a single node.
	Roster ClusterConfig
	// ConfigText is the effective configuration, shown in snapshots.
	ConfigText string
	// Fatal is called once, from any shard, when continuing is unsafe (a
	// failed fsync): the main logs reason and exits with its own code.
	// Nil panics, which also stops the process.
	Fatal func(reason error)
	// Logger receives the front's log lines; nil means slog.Default.
	Logger *slog.Logger
}

// Validation errors of ServerOptions.
var (
	ErrServerOptions = errors.New("shard: invalid server options")
)

// ServerRelease is the version string reported to clients at login and in
// stats.
const ServerRelease = "0.9.0-whippet"

func (o *ServerOptions) withDefaults() error {
	if o.DataPath == "" {
		return fmt.Errorf("%w: empty data path", ErrServerOptions)
	}
	if o.RootUsername == "" {
		o.RootUsername = "iggy"
	}
	if o.RootPassword == "" {
		o.RootPassword = "iggy"
	}
	if len(o.RootUsername) < usernameBytesMin || len(o.RootUsername) > usernameBytesMax {
		return fmt.Errorf("%w: root username must be %d..%d bytes", ErrServerOptions, usernameBytesMin, usernameBytesMax)
	}
	if len(o.RootPassword) < passwordBytesMin || len(o.RootPassword) > passwordBytesMax {
		return fmt.Errorf("%w: root password must be %d..%d bytes", ErrServerOptions, passwordBytesMin, passwordBytesMax)
	}
	if err := o.Roster.validate(); err != nil {
		return err
	}
	if o.ClusterName == "" {
		o.ClusterName = "whippet-cluster"
	}
	if o.TokensPerUserMax <= 0 {
		o.TokensPerUserMax = tokensPerUserDefault
	}
	if o.RebalancingTimeout <= 0 {
		o.RebalancingTimeout = 30 * time.Second
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = engine.SegmentBytesDefault
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.FrameBytesMax <= 0 || o.FrameBytesMax > frameBytesMax {
		o.FrameBytesMax = frameBytesMax
	}
	if o.Fatal == nil {
		o.Fatal = func(reason error) { panic("shard: fatal: " + reason.Error()) }
	}
	o.Runtime.Logger = o.Logger
	return nil
}

func (o *ServerOptions) metadataPath() string { return filepath.Join(o.DataPath, "metadata") }

// BackendChoice says which backend a configured name selects and why,
// for the server's startup log line.
func BackendChoice(name string) (backend, why string) {
	switch name {
	case BackendEpoll:
		return BackendEpoll, "set by configuration"
	case BackendIOURing:
		return BackendIOURing, "set by configuration"
	}
	if err := uringAvailable(); err != nil {
		return BackendEpoll, "io_uring unavailable: " + err.Error()
	}
	return BackendIOURing, "auto: the kernel offers io_uring"
}
