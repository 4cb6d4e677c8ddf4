package configs

// Config is the whole server configuration. Field tags are the TOML keys;
// the environment variable of a key is WHIPPET_ plus its path upper-cased
// with dots as underscores.
type Config struct {
	TCP                 TCP                 `toml:"tcp"`
	HTTP                HTTP                `toml:"http"`
	System              System              `toml:"system"`
	Heartbeat           Heartbeat           `toml:"heartbeat"`
	ConsumerGroup       ConsumerGroup       `toml:"consumer_group"`
	PersonalAccessToken PersonalAccessToken `toml:"personal_access_token"`
	DataMaintenance     DataMaintenance     `toml:"data_maintenance"`
	Cluster             Cluster             `toml:"cluster"`

	// memory is the memory limit as first read (by Validate), so that
	// ServerOptions resolves the cache against the same reading instead of
	// reading /proc and the cgroup files again.
	memory memoryReading
}

// TCP is the client listener.
type TCP struct {
	Enabled        bool   `toml:"enabled"`
	Address        string `toml:"address"`
	MaxFrameSize   Size   `toml:"max_frame_size"`
	MaxConnections int    `toml:"max_connections"`
	TLS            TLS    `toml:"tls"`
}

// TLS names a certificate and key in PEM files.
type TLS struct {
	Enabled  bool   `toml:"enabled"`
	CertFile string `toml:"cert_file"`
	KeyFile  string `toml:"key_file"`
}

// HTTP is the REST API, health check and metrics listener.
type HTTP struct {
	Enabled        bool    `toml:"enabled"`
	Address        string  `toml:"address"`
	MaxRequestSize Size    `toml:"max_request_size"`
	Metrics        Metrics `toml:"metrics"`
	JWT            JWT     `toml:"jwt"`
	TLS            TLS     `toml:"tls"`
}

// JWT signs the HTTP API's login tokens (HS256).
type JWT struct {
	// EncodingSecret is the signing key; empty draws a random one at each
	// start, so tokens do not survive a restart.
	EncodingSecret    string   `toml:"encoding_secret"`
	AccessTokenExpiry Duration `toml:"access_token_expiry"`
}

// Metrics is the Prometheus endpoint.
type Metrics struct {
	Enabled  bool   `toml:"enabled"`
	Endpoint string `toml:"endpoint"`
}

// System holds storage, logging and the shard runtime.
type System struct {
	Path string `toml:"path"`
	// OpenFilesMax bounds the data files held open at once (0: derived
	// from RLIMIT_NOFILE minus room for tcp.max_connections).
	OpenFilesMax int       `toml:"open_files_max"`
	Logging      Logging   `toml:"logging"`
	Sharding     Sharding  `toml:"sharding"`
	Cache        Cache     `toml:"cache"`
	Partition    Partition `toml:"partition"`
	Topic        Topic     `toml:"topic"`
}

// Logging sets the log level.
type Logging struct {
	Level string `toml:"level"`
}

// Sharding shapes the thread-per-core runtime.
type Sharding struct {
	CPUAllocation string   `toml:"cpu_allocation"`
	PinCores      bool     `toml:"pin_cores"`
	Backend       string   `toml:"backend"`
	Spin          Duration `toml:"spin"`
	// ConnectionAffinity moves a client connection to the shard owning the
	// partitions its requests settle on (shard.ServerOptions).
	ConnectionAffinity bool `toml:"connection_affinity"`
}

// Cache is the memory for recent batches, shared by all shards: "auto"
// (a share of the memory limit), "0" (none) or a size.
type Cache struct {
	Size string `toml:"size"`
}

// Partition holds partition-wide switches.
type Partition struct {
	ValidateChecksum bool `toml:"validate_checksum"`
	// WriteWhileReceiving appends a large batch of a send while it is
	// still arriving (shard ServerOptions.SendStreamingOff when false).
	WriteWhileReceiving bool `toml:"write_while_receiving"`
	// AllocateAhead allocates a segment's disk space ahead of large
	// appends (shard ServerOptions.AllocateAheadOff when false).
	AllocateAhead bool `toml:"allocate_ahead"`
}

// Topic holds the defaults of per-topic options.
type Topic struct {
	SegmentSize Size   `toml:"segment_size"`
	Durability  string `toml:"durability"`
}

// Heartbeat evicts silent consumer-group members.
type Heartbeat struct {
	Enabled  bool     `toml:"enabled"`
	Interval Duration `toml:"interval"`
}

// ConsumerGroup tunes rebalancing.
type ConsumerGroup struct {
	RebalancingTimeout Duration `toml:"rebalancing_timeout"`
}

// PersonalAccessToken limits tokens.
type PersonalAccessToken struct {
	MaxTokensPerUser int `toml:"max_tokens_per_user"`
}

// DataMaintenance schedules retention.
type DataMaintenance struct {
	Messages MessagesMaintenance `toml:"messages"`
}

// MessagesMaintenance is the expired-segment cleaner.
type MessagesMaintenance struct {
	CleanerEnabled bool     `toml:"cleaner_enabled"`
	Interval       Duration `toml:"interval"`
}

// Cluster configures replication; off by default.
type Cluster struct {
	Enabled          bool          `toml:"enabled"`
	Name             string        `toml:"name"`
	ReplicaID        int           `toml:"replica_id"`
	HeartbeatTimeout Duration      `toml:"heartbeat_timeout"`
	Tick             Duration      `toml:"tick"`
	Auth             ClusterAuth   `toml:"auth"`
	Nodes            []ClusterNode `toml:"nodes"`
}

// ClusterAuth is the replica handshake secret.
type ClusterAuth struct {
	SharedSecret string `toml:"shared_secret"`
}

// ClusterNode is one replica of the roster.
type ClusterNode struct {
	Name           string `toml:"name"`
	Address        string `toml:"address"`
	ReplicaAddress string `toml:"replica_address"`
}
