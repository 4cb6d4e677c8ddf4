package bench

import (
	"fmt"
	"time"

	"github.com/whippetio/whippet/wire"
)

// Config is one run's parameters: iggy-bench's global, kind, transport and
// output options, plus ours (open loop, durability, local server). Zero
// counts mean "the kind's default"; Normalize fills them in.
type Config struct {
	Kind Kind `json:"-"`

	MessageSize         Range         `json:"-"`
	MessagesPerBatch    Range         `json:"-"`
	MessageBatches      uint64        `json:"message_batches"`
	TotalData           uint64        `json:"total_data_bytes"`
	RateLimit           uint64        `json:"rate_limit_bytes_per_second"`
	Warmup              time.Duration `json:"-"`
	SamplingTime        time.Duration `json:"-"`
	MovingAverageWindow int           `json:"moving_average_window"`
	HighLevelAPI        bool          `json:"high_level_api"`
	Username            string        `json:"username"`
	Password            string        `json:"-"`
	Pretty              bool          `json:"pretty"`
	ReuseStreams        bool          `json:"reuse_streams"`
	EnforceFsync        bool          `json:"enforce_fsync"`

	Streams           int           `json:"streams"`
	Partitions        int           `json:"partitions"`
	Producers         int           `json:"producers"`
	Consumers         int           `json:"consumers"`
	ConsumerGroups    int           `json:"consumer_groups"`
	MaxTopicSize      uint64        `json:"max_topic_size_bytes"`
	MessageExpiry     time.Duration `json:"-"`
	ReadAmplification float64       `json:"read_amplification"`

	Transport     string `json:"transport"`
	ServerAddress string `json:"server_address"`
	NoDelay       bool   `json:"nodelay"`
	ServerBinary  string `json:"server_binary,omitempty"`
	// ServerPID names a remote server's process on this machine, so its
	// CPU is reported (a local server's is known).
	ServerPID int `json:"server_pid,omitempty"`

	OutputDir  string `json:"output_dir,omitempty"`
	Identifier string `json:"identifier,omitempty"`
	Remark     string `json:"remark,omitempty"`
	ExtraInfo  string `json:"extra_info,omitempty"`
	GitRef     string `json:"gitref,omitempty"`
	GitRefDate string `json:"gitref_date,omitempty"`
	OpenCharts bool   `json:"open_charts"`

	// Rate switches to the open loop: the aggregate messages per second
	// sent (or polled) on a fixed schedule, latency measured from each
	// batch's intended start. 0 keeps the closed loop.
	Rate uint64 `json:"rate_messages_per_second"`
	// InFlight bounds the batches an open-loop actor has outstanding.
	InFlight int `json:"open_loop_in_flight"`
	// Durability sets the topics' durability option ("" = server default).
	Durability string `json:"durability,omitempty"`
	// MaxDuration stops starting new batches after this long (0 = none).
	MaxDuration time.Duration `json:"-"`
	// Seed drives payload sizes and batch sizes (0 = from the clock).
	Seed uint64 `json:"seed"`
}

// DefaultConfig returns iggy-bench's defaults for kind; counts stay zero
// until Normalize resolves them for the kind.
func DefaultConfig(kind Kind) Config {
	return Config{
		Kind:                kind,
		MessageSize:         Fixed(MessageSizeDefault),
		MessagesPerBatch:    Fixed(MessagesPerBatchDefault),
		SamplingTime:        SamplingTimeDefault,
		MovingAverageWindow: MovingAverageWindowDefault,
		Username:            "iggy",
		Password:            "iggy",
		Transport:           "tcp",
		NoDelay:             true,
		InFlight:            OpenLoopInFlightDefault,
	}
}

// Normalize fills the kind's default counts and the default batch budget.
func (c *Config) Normalize() {
	kindDefaults(c)
	if c.MessageBatches == 0 && c.TotalData == 0 {
		c.MessageBatches = MessageBatchesDefault
	}
	if c.ReadAmplification == 0 {
		c.ReadAmplification = ReadAmplificationDefault
	}
	if c.InFlight == 0 {
		c.InFlight = OpenLoopInFlightDefault
	}
	if c.SamplingTime == 0 {
		c.SamplingTime = SamplingTimeDefault
	}
	if c.MovingAverageWindow == 0 {
		c.MovingAverageWindow = MovingAverageWindowDefault
	}
}

// kindDefaults resolves zero counts to the kind's defaults.
func kindDefaults(c *Config) {
	orDefault := func(value *int, fallback int) {
		if *value == 0 {
			*value = fallback
		}
	}
	if c.Kind.HasProducers() {
		orDefault(&c.Producers, ProducersDefault)
	}
	if c.Kind.HasConsumers() && c.Kind != KindEndToEndProducingConsumer {
		orDefault(&c.Consumers, ConsumersDefault)
	}
	if c.Kind.UsesGroups() {
		orDefault(&c.ConsumerGroups, ConsumerGroupsDefault)
	}
	switch c.Kind {
	case KindPinnedProducer, KindPinnedProducerAndConsumer, KindEndToEndProducingConsumer:
		orDefault(&c.Streams, c.Producers)
		orDefault(&c.Partitions, 1)
	case KindPinnedConsumer:
		orDefault(&c.Streams, c.Consumers)
		orDefault(&c.Partitions, 1)
	default:
		orDefault(&c.Streams, BalancedStreamsDefault)
		orDefault(&c.Partitions, BalancedPartitionsDefault)
	}
	if c.Kind == KindEndToEndProducingConsumer {
		c.Consumers = c.Producers
	}
	if !c.Kind.HasProducers() {
		c.Producers = 0
	}
	if !c.Kind.HasConsumers() {
		c.Consumers = 0
	}
	if !c.Kind.UsesGroups() {
		c.ConsumerGroups = 0
	}
}

// Validate reports the first parameter out of range, naming its flag.
func (c *Config) Validate() error {
	checks := []func() error{c.validateGlobal, c.validateCounts, c.validateKind, c.validateOurs}
	for _, check := range checks {
		if err := check(); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
		}
	}
	return nil
}

func (c *Config) validateGlobal() error {
	switch {
	case !c.Kind.Valid():
		return fmt.Errorf("unknown benchmark kind")
	case c.MessageSize.Min == 0 || c.MessageSize.Max > MessageSizeMax:
		return fmt.Errorf("--message-size must be 1..%d", MessageSizeMax)
	case c.MessagesPerBatch.Min == 0 || c.MessagesPerBatch.Max > MessagesPerBatchMax:
		return fmt.Errorf("--messages-per-batch must be 1..%d", MessagesPerBatchMax)
	case uint64(c.MessageSize.Max)*uint64(c.MessagesPerBatch.Max) > BatchBytesMax:
		return fmt.Errorf("--message-size × --messages-per-batch exceeds %d bytes per batch", BatchBytesMax)
	case c.MessageBatches != 0 && c.TotalData != 0:
		return fmt.Errorf("--message-batches and --total-data are mutually exclusive")
	case c.SamplingTime < SamplingTimeMin:
		return fmt.Errorf("--sampling-time must be at least %v", SamplingTimeMin)
	case c.MovingAverageWindow < 1 || c.MovingAverageWindow > MovingAverageWindowMax:
		return fmt.Errorf("--moving-average-window must be 1..%d", MovingAverageWindowMax)
	case c.HighLevelAPI:
		return fmt.Errorf("--high-level-api is not supported: our client has no background-batching producer")
	case c.Transport != "tcp":
		return fmt.Errorf("transport %q is not supported: Whippet speaks TCP", c.Transport)
	case c.Warmup < 0 || c.MaxDuration < 0:
		return fmt.Errorf("--warmup-time and --max-duration must not be negative")
	}
	return nil
}

func (c *Config) validateCounts() error {
	switch {
	case c.Producers < 0 || c.Producers > ActorsMax || c.Consumers < 0 || c.Consumers > ActorsMax:
		return fmt.Errorf("--producers and --consumers must be 1..%d", ActorsMax)
	case c.Kind.HasProducers() && c.Producers == 0:
		return fmt.Errorf("--producers must be at least 1")
	case c.Kind.HasConsumers() && c.Consumers == 0:
		return fmt.Errorf("--consumers must be at least 1")
	case c.Streams < 1 || c.Streams > StreamsMax:
		return fmt.Errorf("--streams must be 1..%d", StreamsMax)
	case c.Partitions < 1 || c.Partitions > PartitionsMax:
		return fmt.Errorf("--partitions must be 1..%d", PartitionsMax)
	case c.ConsumerGroups < 0 || c.ConsumerGroups > ConsumerGroupsMax:
		return fmt.Errorf("--consumer-groups must be 1..%d", ConsumerGroupsMax)
	case c.Kind.UsesGroups() && c.ConsumerGroups == 0:
		return fmt.Errorf("--consumer-groups must be at least 1")
	case c.ReadAmplification < 1:
		return fmt.Errorf("--read-amplification must be at least 1")
	}
	return nil
}

// validateKind applies iggy-bench's per-kind topology rules.
func (c *Config) validateKind() error {
	switch c.Kind {
	case KindPinnedProducer:
		return require(c.Streams == c.Producers, "pinned producer: --streams (%d) must equal --producers (%d)",
			c.Streams, c.Producers)
	case KindPinnedConsumer:
		return require(c.Streams <= c.Consumers, "pinned consumer: --streams (%d) must be <= --consumers (%d)",
			c.Streams, c.Consumers)
	case KindPinnedProducerAndConsumer:
		if c.Partitions != 1 {
			return fmt.Errorf("pinned producer and consumer: --partitions must be 1")
		}
		return require(c.Streams == c.Producers, "pinned producer and consumer: --streams (%d) must equal --producers (%d)",
			c.Streams, c.Producers)
	case KindBalancedProducer:
		return require(c.Partitions >= 2, "balanced producer: --partitions (%d) must be at least 2", c.Partitions, 0)
	case KindBalancedConsumerGroup:
		return require(c.ConsumerGroups >= c.Streams, "balanced consumer group: --consumer-groups (%d) must be >= --streams (%d)",
			c.ConsumerGroups, c.Streams)
	case KindBalancedProducerAndConsumerGroup:
		if c.Partitions < c.Consumers {
			return fmt.Errorf("balanced producer and consumer group: --partitions (%d) must be >= --consumers (%d)",
				c.Partitions, c.Consumers)
		}
		return require(c.ConsumerGroups >= c.Streams, "balanced producer and consumer group: --consumer-groups (%d) must be >= --streams (%d)",
			c.ConsumerGroups, c.Streams)
	case KindEndToEndProducingConsumer:
		if c.Partitions != 1 {
			return fmt.Errorf("producing consumer: --partitions must be 1")
		}
		return require(c.Streams <= c.Producers, "producing consumer: --streams (%d) must be <= --producing-consumers (%d)",
			c.Streams, c.Producers)
	case KindEndToEndProducingConsumerGroup:
		if c.ConsumerGroups < c.Streams {
			return fmt.Errorf("producing consumer group: --consumer-groups (%d) must be >= --streams (%d)",
				c.ConsumerGroups, c.Streams)
		}
		return require(c.Streams <= c.Producers, "producing consumer group: --streams (%d) must be <= --producers (%d)",
			c.Streams, c.Producers)
	}
	return nil
}

func (c *Config) validateOurs() error {
	switch c.Durability {
	case "", wire.DurabilityMemory, wire.DurabilityWritten, wire.DurabilityPersisted, wire.DurabilityReplicated:
	default:
		return fmt.Errorf("--durability must be memory, written, persisted or replicated")
	}
	switch {
	case c.Rate != 0 && c.RateLimit != 0:
		return fmt.Errorf("--rate (open loop) and --rate-limit (closed loop) are mutually exclusive")
	case c.InFlight < 1 || c.InFlight > OpenLoopInFlightMax:
		return fmt.Errorf("--in-flight must be 1..%d", OpenLoopInFlightMax)
	case c.Rate != 0 && c.Rate < uint64(c.actorCount()):
		return fmt.Errorf("--rate (%d msg/s) is below one message per second per actor", c.Rate)
	}
	return nil
}

func require(ok bool, format string, first, second int) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, first, second)
}

// OpenLoop reports whether batches follow a fixed schedule.
func (c *Config) OpenLoop() bool { return c.Rate != 0 }

// actorCount is the number of connections that drive load; rates split
// evenly over them.
func (c *Config) actorCount() int {
	switch c.Kind {
	case KindEndToEndProducingConsumer:
		return c.Producers
	case KindEndToEndProducingConsumerGroup:
		return max(c.Producers, c.Consumers)
	}
	return c.Producers + c.Consumers
}

// ActorsLabel is the actor count as run names give it.
func (c *Config) ActorsLabel() int { return c.actorCount() }

// StreamName names the bench stream of a 0-based index as iggy-bench does.
func StreamName(index int) string { return fmt.Sprintf("bench-stream-%d", index+1) }

// TopicName is the one topic of every bench stream.
const TopicName = "topic-1"

// GroupName names a consumer group of a 0-based index.
func GroupName(index int) string { return fmt.Sprintf("cg-%d", index+1) }
