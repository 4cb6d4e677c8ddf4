package bench

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/whippetio/whippet/wire"
)

// ReportSchemaVersion is bumped when a field of report.json changes
// meaning or is removed (adding fields keeps it).
const ReportSchemaVersion = 1

// Report is report.json: iggy-bench's report (server_stats, hardware,
// params, group_metrics, individual_metrics, same names and meanings),
// plus the full configuration, the run facts (loop, durability, server),
// the message ledger and the CPU the run cost.
type Report struct {
	SchemaVersion     int            `json:"schema_version"`
	UUID              string         `json:"uuid"`
	Timestamp         string         `json:"timestamp"`
	ServerStats       *ServerStats   `json:"server_stats,omitempty"`
	Hardware          Hardware       `json:"hardware"`
	Params            Params         `json:"params"`
	Config            ReportConfig   `json:"config"`
	Run               RunFacts       `json:"run"`
	GroupMetrics      []GroupMetrics `json:"group_metrics"`
	IndividualMetrics []ActorMetrics `json:"individual_metrics"`
	Accounting        Accounting     `json:"accounting"`
	CPU               CPUUsage       `json:"cpu"`
}

// Params are iggy-bench's run parameters.
type Params struct {
	BenchmarkKind    string `json:"benchmark_kind"`
	Transport        string `json:"transport"`
	ServerAddress    string `json:"server_address"`
	Remark           string `json:"remark,omitempty"`
	ExtraInfo        string `json:"extra_info,omitempty"`
	GitRef           string `json:"gitref,omitempty"`
	GitRefDate       string `json:"gitref_date,omitempty"`
	MessagesPerBatch string `json:"messages_per_batch"`
	MessageBatches   uint64 `json:"message_batches"`
	MessageSize      string `json:"message_size"`
	Producers        int    `json:"producers"`
	Consumers        int    `json:"consumers"`
	Streams          int    `json:"streams"`
	Partitions       int    `json:"partitions"`
	ConsumerGroups   int    `json:"consumer_groups"`
	RateLimit        string `json:"rate_limit,omitempty"`
	PrettyName       string `json:"pretty_name"`
	BenchCommand     string `json:"bench_command"`
	ParamsIdentifier string `json:"params_identifier"`
}

// ReportConfig is the whole configuration with units spelled out.
type ReportConfig struct {
	Config
	Kind                string   `json:"kind"`
	MessageSize         string   `json:"message_size"`
	MessagesPerBatch    string   `json:"messages_per_batch"`
	WarmupSecs          float64  `json:"warmup_secs"`
	SamplingTimeMs      float64  `json:"sampling_time_ms"`
	MessageExpirySecs   float64  `json:"message_expiry_secs"`
	MaxDurationSecs     float64  `json:"max_duration_secs"`
	TopicOptionsApplied []string `json:"topic_options"`
}

// RunFacts say how the load was applied and what stopped it.
type RunFacts struct {
	Loop string `json:"loop"` // closed or open
	// CoordinatedOmissionCorrected holds in the open loop: latencies run
	// from each batch's scheduled start, not its actual one.
	CoordinatedOmissionCorrected bool    `json:"coordinated_omission_corrected"`
	RateMessagesPerSecond        uint64  `json:"rate_messages_per_second,omitempty"`
	InFlight                     int     `json:"in_flight"`
	Durability                   string  `json:"durability"`
	LocalServer                  bool    `json:"local_server"`
	Prefilled                    bool    `json:"prefilled,omitempty"`
	WallTimeSecs                 float64 `json:"wall_time_secs"`
	TruncatedByMaxDuration       bool    `json:"truncated_by_max_duration"`
	Seed                         uint64  `json:"seed"`
	Error                        string  `json:"error,omitempty"`
}

// ServerStats is the server's GetStats reply after the run.
type ServerStats struct {
	ProcessID           uint32  `json:"process_id"`
	CPUUsage            float32 `json:"cpu_usage"`
	TotalCPUUsage       float32 `json:"total_cpu_usage"`
	MemoryUsage         uint64  `json:"memory_usage"`
	TotalMemory         uint64  `json:"total_memory"`
	AvailableMemory     uint64  `json:"available_memory"`
	RunTime             uint64  `json:"run_time"`
	StartTime           uint64  `json:"start_time"`
	ReadBytes           uint64  `json:"read_bytes"`
	WrittenBytes        uint64  `json:"written_bytes"`
	MessagesSizeBytes   uint64  `json:"messages_size_bytes"`
	StreamsCount        uint32  `json:"streams_count"`
	TopicsCount         uint32  `json:"topics_count"`
	PartitionsCount     uint32  `json:"partitions_count"`
	SegmentsCount       uint32  `json:"segments_count"`
	MessagesCount       uint64  `json:"messages_count"`
	ClientsCount        uint32  `json:"clients_count"`
	ConsumerGroupsCount uint32  `json:"consumer_groups_count"`
	Hostname            string  `json:"hostname"`
	OSName              string  `json:"os_name"`
	OSVersion           string  `json:"os_version"`
	KernelVersion       string  `json:"kernel_version"`
	ServerVersion       string  `json:"iggy_server_version"`
	ServerSemver        uint32  `json:"iggy_server_semver"`
}

func serverStats(stats *wire.Stats) *ServerStats {
	return &ServerStats{ProcessID: stats.ProcessID, CPUUsage: stats.CPUUsage, TotalCPUUsage: stats.TotalCPUUsage,
		MemoryUsage: stats.MemoryUsage, TotalMemory: stats.TotalMemory, AvailableMemory: stats.AvailableMemory,
		RunTime: stats.RunTime, StartTime: stats.StartTime, ReadBytes: stats.ReadBytes,
		WrittenBytes: stats.WrittenBytes, MessagesSizeBytes: stats.MessagesSizeBytes,
		StreamsCount: stats.StreamsCount, TopicsCount: stats.TopicsCount, PartitionsCount: stats.PartitionsCount,
		SegmentsCount: stats.SegmentsCount, MessagesCount: stats.MessagesCount, ClientsCount: stats.ClientsCount,
		ConsumerGroupsCount: stats.ConsumerGroupsCount, Hostname: stats.Hostname, OSName: stats.OSName,
		OSVersion: stats.OSVersion, KernelVersion: stats.KernelVersion, ServerVersion: stats.ServerVersion,
		ServerSemver: stats.ServerSemver}
}

// newUUID returns a random version-4 UUID.
func newUUID() string {
	var bytes [16]byte
	_, _ = rand.Read(bytes[:]) // crypto/rand.Read never fails on Linux
	bytes[6] = bytes[6]&0x0f | 0x40
	bytes[8] = bytes[8]&0x3f | 0x80
	text := hex.EncodeToString(bytes[:])
	return text[0:8] + "-" + text[8:12] + "-" + text[12:16] + "-" + text[16:20] + "-" + text[20:]
}

// newParams fills iggy-bench's params block.
func newParams(config *Config, command []string, hardware *Hardware) Params {
	params := Params{
		BenchmarkKind: config.Kind.Enum(), Transport: config.Transport, ServerAddress: config.ServerAddress,
		Remark: config.Remark, ExtraInfo: config.ExtraInfo, GitRef: config.GitRef, GitRefDate: config.GitRefDate,
		MessagesPerBatch: config.MessagesPerBatch.String(), MessageBatches: config.MessageBatches,
		MessageSize: config.MessageSize.String(), Producers: config.Producers, Consumers: config.Consumers,
		Streams: config.Streams, Partitions: config.Partitions, ConsumerGroups: config.ConsumerGroups,
		PrettyName: PrettyName(config), BenchCommand: strings.Join(command, " "),
		ParamsIdentifier: paramsIdentifier(config),
	}
	if config.RateLimit != 0 {
		params.RateLimit = FormatBytes(config.RateLimit) + "/s"
	}
	if params.ServerAddress == "" {
		params.ServerAddress = "local"
	}
	return params
}

// PrettyName describes the run in one line.
func PrettyName(config *Config) string {
	var actors string
	switch config.Kind {
	case KindEndToEndProducingConsumer:
		actors = fmt.Sprintf("%d producing consumers", config.Producers)
	default:
		var parts []string
		if config.Producers > 0 {
			parts = append(parts, fmt.Sprintf("%d producers", config.Producers))
		}
		if config.Consumers > 0 {
			parts = append(parts, fmt.Sprintf("%d consumers", config.Consumers))
		}
		actors = strings.Join(parts, ", ")
	}
	name := fmt.Sprintf("%s (%s, %d streams × %d partitions, %s B × %s msgs/batch × %s)", config.Kind, actors,
		config.Streams, config.Partitions, config.MessageSize, config.MessagesPerBatch, budgetLabel(config))
	if config.OpenLoop() {
		name += fmt.Sprintf(", open loop at %d msg/s", config.Rate)
	}
	if config.Durability != "" {
		name += ", " + config.Durability
	}
	return name
}

func budgetLabel(config *Config) string {
	if config.TotalData != 0 {
		return FormatBytes(config.TotalData)
	}
	return fmt.Sprintf("%d batches", config.MessageBatches)
}

// reportConfig spells out a config's units.
func reportConfig(config *Config) ReportConfig {
	var applied []string
	for _, option := range topicOptions(config) {
		applied = append(applied, string(option.Key.Value))
	}
	return ReportConfig{Config: *config, Kind: config.Kind.Enum(), MessageSize: config.MessageSize.String(),
		MessagesPerBatch: config.MessagesPerBatch.String(), WarmupSecs: config.Warmup.Seconds(),
		SamplingTimeMs:    float64(config.SamplingTime) / float64(time.Millisecond),
		MessageExpirySecs: config.MessageExpiry.Seconds(), MaxDurationSecs: config.MaxDuration.Seconds(),
		TopicOptionsApplied: applied}
}
