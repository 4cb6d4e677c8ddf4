package configs

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/shard"
)

// Limits a configuration may not pass; each is a sanity bound, not a tuning.
const (
	frameBytesMin        = 64 << 10
	frameBytesMax        = 1 << 30
	connectionsMax       = 1 << 20
	openFilesMax         = 1 << 24
	segmentBytesMin      = 1 << 20
	segmentBytesMax      = 1 << 40
	sharedSecretBytesMin = 32
	clusterNodesMax      = 16
	cpuCountMax          = 1024
	tokensPerUserMax     = 10000
	clusterTickMin       = Duration(1_000_000) // 1 ms.
	// clusterHeartbeatTicksMin: a backup must see several ticks without
	// its primary before it starts a view change, or one late tick would
	// depose a healthy primary.
	clusterHeartbeatTicksMin = 4
)

// Validate checks every key; the error names the first bad one.
func (c *Config) Validate() error {
	checks := []func() error{c.validateTCP, c.validateHTTP, c.validateSystem, c.validateMisc, c.validateCluster}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func invalid(key, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, key, fmt.Sprintf(format, args...))
}

func (c *Config) validateTCP() error {
	t := c.TCP
	if err := checkAddress("tcp.address", t.Address); err != nil {
		return err
	}
	if t.MaxFrameSize < frameBytesMin || t.MaxFrameSize > frameBytesMax {
		return invalid("tcp.max_frame_size", "%d bytes is outside [%d, %d]", t.MaxFrameSize, frameBytesMin, frameBytesMax)
	}
	if t.MaxConnections < 1 || t.MaxConnections > connectionsMax {
		return invalid("tcp.max_connections", "%d is outside [1, %d]", t.MaxConnections, connectionsMax)
	}
	return checkTLS("tcp.tls", t.TLS)
}

func (c *Config) validateHTTP() error {
	h := c.HTTP
	if err := checkAddress("http.address", h.Address); err != nil {
		return err
	}
	if h.MaxRequestSize == 0 {
		return invalid("http.max_request_size", "must be above zero")
	}
	if h.Metrics.Enabled && !strings.HasPrefix(h.Metrics.Endpoint, "/") {
		return invalid("http.metrics.endpoint", "%q must start with /", h.Metrics.Endpoint)
	}
	if h.JWT.AccessTokenExpiry <= 0 {
		return invalid("http.jwt.access_token_expiry", "must be above zero")
	}
	if secret := h.JWT.EncodingSecret; secret != "" && len(secret) < 16 {
		return invalid("http.jwt.encoding_secret", "must be empty (random per start) or at least 16 bytes")
	}
	return checkTLS("http.tls", h.TLS)
}

func (c *Config) validateSystem() error {
	s := c.System
	if strings.TrimSpace(s.Path) == "" {
		return invalid("system.path", "must name a directory")
	}
	switch s.Logging.Level {
	case "debug", "info", "warn", "error":
	default:
		return invalid("system.logging.level", "%q is not one of debug, info, warn, error", s.Logging.Level)
	}
	if err := checkCPUAllocation(s.Sharding.CPUAllocation); err != nil {
		return invalid("system.sharding.cpu_allocation", "%v", err)
	}
	switch s.Sharding.Backend {
	case "auto", "io_uring", "epoll":
	default:
		return invalid("system.sharding.backend", "%q is not one of auto, io_uring, epoll", s.Sharding.Backend)
	}
	if s.Topic.SegmentSize < segmentBytesMin || s.Topic.SegmentSize > segmentBytesMax {
		return invalid("system.topic.segment_size", "%d bytes is outside [%d, %d]", s.Topic.SegmentSize, segmentBytesMin, segmentBytesMax)
	}
	if _, err := c.CacheBytes(); err != nil {
		return err
	}
	switch s.Topic.Durability {
	case "memory", "written", "persisted":
	default:
		return invalid("system.topic.durability", "%q is not one of memory, written, persisted", s.Topic.Durability)
	}
	if n := s.OpenFilesMax; n != 0 && (n < engine.OpenFilesMin || n > openFilesMax) {
		return invalid("system.open_files_max", "%d is neither 0 (derived) nor in [%d, %d]", n, engine.OpenFilesMin, openFilesMax)
	}
	return nil
}

func (c *Config) validateMisc() error {
	if c.Heartbeat.Enabled && c.Heartbeat.Interval <= 0 {
		return invalid("heartbeat.interval", "must be above zero when heartbeat.enabled")
	}
	if c.ConsumerGroup.RebalancingTimeout <= 0 {
		return invalid("consumer_group.rebalancing_timeout", "must be above zero")
	}
	if n := c.PersonalAccessToken.MaxTokensPerUser; n < 1 || n > tokensPerUserMax {
		return invalid("personal_access_token.max_tokens_per_user", "%d is outside [1, %d]", n, tokensPerUserMax)
	}
	if c.DataMaintenance.Messages.CleanerEnabled && c.DataMaintenance.Messages.Interval <= 0 {
		return invalid("data_maintenance.messages.interval", "must be above zero when the cleaner is enabled")
	}
	return nil
}

func checkAddress(key, address string) error {
	_, port, err := net.SplitHostPort(address) // A host name is resolved when binding.
	if err != nil {
		return invalid(key, "%q is not host:port", address)
	}
	number, err := strconv.Atoi(port)
	if err != nil || number < 0 || number > 65535 {
		return invalid(key, "%q has no valid port", address)
	}
	return nil
}

func checkTLS(key string, tls TLS) error {
	if !tls.Enabled {
		return nil
	}
	if tls.CertFile == "" {
		return invalid(key+".cert_file", "must name a PEM file when %s.enabled", key)
	}
	if tls.KeyFile == "" {
		return invalid(key+".key_file", "must name a PEM file when %s.enabled", key)
	}
	return nil
}

// checkCPUAllocation accepts "all", a count of CPUs, or a CPU list in the
// runtime's syntax (shard.ParseCPUList), which options.go resolves.
func checkCPUAllocation(text string) error {
	text = strings.TrimSpace(text)
	if text == "all" {
		return nil
	}
	if count, err := strconv.Atoi(text); err == nil {
		if count < 1 || count > cpuCountMax {
			return fmt.Errorf("count %d is outside [1, %d]", count, cpuCountMax)
		}
		return nil
	}
	_, err := shard.ParseCPUList(text)
	return err
}
