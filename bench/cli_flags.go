package bench

import (
	"flag"
	"fmt"
	"strconv"
)

// rawOptions collects the sections of a command line before the kind is
// known to resolve its defaults.
type rawOptions struct {
	Config
	initialized bool
	transport   string
	output      bool
	remark      string
	extraInfo   string
	gitRef      string
	gitRefDate  string
	profile     string
	batches     uint64
	totalData   uint64
	rateLimit   uint64
	maxTopic    uint64
}

func (o *rawOptions) init() {
	if !o.initialized {
		o.Config = DefaultConfig(0)
		o.Config.NoDelay = false // iggy-bench's tcp default
		o.initialized = true
	}
}

// globalFlags are iggy-bench's options before the kind, plus ours.
func globalFlags(o *rawOptions) *flag.FlagSet {
	o.init()
	set := flag.NewFlagSet("global", flag.ContinueOnError)
	sizes, counts := rangeValue(&o.MessageSize), rangeValue(&o.MessagesPerBatch)
	define(set, sizes, "message-size", "m", "bytes per message, or a range 200..500")
	define(set, counts, "messages-per-batch", "P", "messages per batch, or a range")
	set.Func("message-batches", "batches per actor", o.parseBatches)
	set.Func("b", "batches per actor", o.parseBatches)
	define(set, bytesValue(&o.totalData), "total-data", "T", "aggregate bytes for all actors")
	define(set, bytesValue(&o.totalData), "total-messages-size", "", "alias of --total-data")
	set.Func("rate-limit", "aggregate bytes per second (closed loop)", o.parseRateLimit)
	set.Func("r", "aggregate bytes per second (closed loop)", o.parseRateLimit)
	define(set, durationValue(&o.Warmup), "warmup-time", "w", "send and poll unrecorded for this long")
	define(set, durationValue(&o.SamplingTime), "sampling-time", "t", "time-series bucket width")
	set.IntVar(&o.MovingAverageWindow, "moving-average-window", o.MovingAverageWindow, "SMA window in buckets")
	set.IntVar(&o.MovingAverageWindow, "W", o.MovingAverageWindow, "SMA window in buckets")
	set.BoolVar(&o.HighLevelAPI, "high-level-api", false, "use the high-level API")
	set.BoolVar(&o.HighLevelAPI, "H", false, "use the high-level API")
	set.StringVar(&o.Username, "username", o.Username, "username")
	set.StringVar(&o.Username, "u", o.Username, "username")
	set.StringVar(&o.Password, "password", o.Password, "password")
	set.StringVar(&o.Password, "p", o.Password, "password")
	set.BoolVar(&o.Pretty, "pretty", false, "per-actor rows in the summary")
	set.BoolVar(&o.ReuseStreams, "reuse-streams", false, "keep existing bench streams")
	set.BoolVar(&o.EnforceFsync, "enforce-fsync", false, "topic option enforce_fsync at creation")
	ourFlags(set, o)
	return set
}

// ourFlags are Whippet's options, accepted in every section.
func ourFlags(set *flag.FlagSet, o *rawOptions) {
	set.Uint64Var(&o.Rate, "rate", o.Rate, "open loop: aggregate messages per second on a schedule")
	set.IntVar(&o.InFlight, "in-flight", o.InFlight, "open loop: batches one producer may have outstanding")
	set.StringVar(&o.Durability, "durability", o.Durability, "topic durability: memory, written or persisted")
	define(set, durationValue(&o.MaxDuration), "max-duration", "", "stop starting batches after this long")
	set.Uint64Var(&o.Seed, "seed", o.Seed, "seed of payload and batch sizes (0 = from the clock)")
	set.StringVar(&o.ServerBinary, "server-binary", o.ServerBinary, "whippet-server to start when no address is given")
	set.IntVar(&o.ServerPID, "server-pid", o.ServerPID, "process id of a remote server on this machine (CPU report)")
	set.StringVar(&o.profile, "profile", o.profile, "profile the bench: cpu, mem or trace")
}

func (o *rawOptions) parseBatches(text string) (err error) {
	o.batches, err = strconv.ParseUint(text, 10, 64)
	if err == nil && o.batches == 0 {
		err = fmt.Errorf("must be at least 1")
	}
	return err
}

func (o *rawOptions) parseRateLimit(text string) (err error) {
	o.rateLimit, err = ParseRate(text)
	return err
}

// kindFlags are the options after the kind.
func kindFlags(o *rawOptions, kind Kind) *flag.FlagSet {
	set := flag.NewFlagSet(kind.String(), flag.ContinueOnError)
	set.IntVar(&o.Streams, "streams", 0, "number of streams")
	set.IntVar(&o.Streams, "s", 0, "number of streams")
	set.IntVar(&o.Partitions, "partitions", 0, "partitions per stream")
	set.IntVar(&o.Partitions, "a", 0, "partitions per stream")
	set.IntVar(&o.Producers, "producers", 0, "number of producers")
	set.IntVar(&o.Producers, "p", 0, "number of producers")
	set.IntVar(&o.Producers, "producing-consumers", 0, "number of producing consumers")
	set.IntVar(&o.Consumers, "consumers", 0, "number of consumers")
	set.IntVar(&o.Consumers, "c", 0, "number of consumers")
	set.IntVar(&o.ConsumerGroups, "consumer-groups", 0, "number of consumer groups")
	set.IntVar(&o.ConsumerGroups, "g", 0, "number of consumer groups")
	define(set, bytesValue(&o.maxTopic), "max-topic-size", "T", "topic size cap, e.g. 1GiB")
	define(set, durationValue(&o.MessageExpiry), "message-expiry", "e", "message expiry, e.g. 5min")
	set.Float64Var(&o.ReadAmplification, "read-amplification", 0, "consumer rate over producer rate")
	set.Float64Var(&o.ReadAmplification, "R", 0, "consumer rate over producer rate")
	ourFlags(set, o)
	return set
}

// transportFlags are the tcp section's options.
func transportFlags(o *rawOptions) *flag.FlagSet {
	set := flag.NewFlagSet("tcp", flag.ContinueOnError)
	set.StringVar(&o.ServerAddress, "server-address", "", "server host:port (empty: start a local server)")
	set.BoolVar(&o.NoDelay, "nodelay", o.NoDelay, "disable Nagle's algorithm")
	set.BoolFunc("tls", "TLS (not supported by the bench)", func(string) error {
		return fmt.Errorf("TLS is not supported by the bench")
	})
	set.Func("tls-domain", "TLS domain", func(string) error { return fmt.Errorf("TLS is not supported by the bench") })
	set.Func("tls-ca-file", "TLS CA file", func(string) error { return fmt.Errorf("TLS is not supported by the bench") })
	set.Func("tls-validate-certificate", "TLS validation", func(string) error {
		return fmt.Errorf("TLS is not supported by the bench")
	})
	ourFlags(set, o)
	return set
}

// outputFlags are the output section's options.
func outputFlags(o *rawOptions) *flag.FlagSet {
	set := flag.NewFlagSet("output", flag.ContinueOnError)
	set.StringVar(&o.OutputDir, "output-dir", OutputDirDefault, "results directory")
	set.StringVar(&o.OutputDir, "o", OutputDirDefault, "results directory")
	set.StringVar(&o.Identifier, "identifier", "", "machine identifier (default: hostname)")
	set.StringVar(&o.remark, "remark", "", "remark in the run name")
	set.StringVar(&o.extraInfo, "extra-info", "", "free text saved in the report")
	set.StringVar(&o.gitRef, "gitref", "", "git ref measured")
	set.StringVar(&o.gitRefDate, "gitref-date", "", "date of the git ref")
	set.BoolVar(&o.OpenCharts, "open-charts", false, "open the charts when done")
	set.BoolVar(&o.OpenCharts, "c", false, "open the charts when done")
	ourFlags(set, o)
	return set
}

// config resolves the sections into a normalized, validated Config.
func (o *rawOptions) config(kind Kind) (Config, error) {
	config := o.Config
	config.Kind = kind
	config.MessageBatches, config.TotalData = o.batches, o.totalData
	config.RateLimit, config.MaxTopicSize = o.rateLimit, o.maxTopic
	config.Remark, config.ExtraInfo, config.GitRef, config.GitRefDate = o.remark, o.extraInfo, o.gitRef, o.gitRefDate
	if o.transport != "" {
		config.Transport = o.transport
	}
	if config.Transport == "ws" {
		config.Transport = "websocket"
	}
	config.Normalize()
	return config, config.Validate()
}
