package bench

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"
)

// SuiteOptions configure the fixed workload set of the peer lab (p1, p2,
// c1, pc1, e2e1): 1000-byte messages, 1000 per batch, pinned layout, one
// connection per actor, each run capped in batches and in time.
type SuiteOptions struct {
	Label            string
	Workloads        []string
	Repeats          int
	MessageSize      uint32
	MessagesPerBatch uint32
	Batches          uint64
	Duration         time.Duration
	Durability       string
	ServerAddress    string
	ServerBinary     string
	ServerPID        int
	OutputDir        string // "" writes no run directories
	Seed             uint64
	// IdlePartitions and IdleConnections are held open on the server while
	// the workloads run (suite_background.go): the scale row.
	IdlePartitions  int
	IdleConnections int
}

// Suite defaults, those of the lab's run-peers.sh.
const (
	SuiteRepeatsDefault  = 3
	SuiteBatchesDefault  = 2000
	SuiteDurationDefault = 10 * time.Second
	SuiteLabelDefault    = "whippet"
)

// SuiteWorkloads lists the lab's workloads in order.
var SuiteWorkloads = []string{"p1", "p2", "c1", "pc1", "e2e1"}

// DefaultSuiteOptions returns the lab's defaults.
func DefaultSuiteOptions() SuiteOptions {
	return SuiteOptions{Label: SuiteLabelDefault, Workloads: SuiteWorkloads, Repeats: SuiteRepeatsDefault,
		MessageSize: MessageSizeDefault, MessagesPerBatch: MessagesPerBatchDefault, Batches: SuiteBatchesDefault,
		Duration: SuiteDurationDefault}
}

func parseSuite(args []string, profile *string) (SuiteOptions, error) {
	options := DefaultSuiteOptions()
	set := flag.NewFlagSet("suite", flag.ContinueOnError)
	set.StringVar(&options.Label, "label", options.Label, "label of the rows")
	workloads := strings.Join(options.Workloads, ",")
	set.StringVar(&workloads, "workloads", workloads, "comma-separated workloads")
	set.IntVar(&options.Repeats, "repeats", options.Repeats, "runs per workload")
	set.Func("message-size", "bytes per message", func(text string) error {
		return parseUint32(text, &options.MessageSize)
	})
	set.Func("messages-per-batch", "messages per batch", func(text string) error {
		return parseUint32(text, &options.MessagesPerBatch)
	})
	set.Uint64Var(&options.Batches, "batches", options.Batches, "batches per producer (a cap)")
	define(set, durationValue(&options.Duration), "duration", "", "producing time per run (a cap)")
	set.StringVar(&options.Durability, "durability", "", "topic durability")
	set.StringVar(&options.ServerAddress, "server-address", "", "server host:port (empty: start a local server)")
	set.StringVar(&options.ServerBinary, "server-binary", "", "whippet-server to start")
	set.IntVar(&options.ServerPID, "server-pid", 0, "process id of a remote server on this machine (CPU report)")
	set.StringVar(&options.OutputDir, "output-dir", "", "write each run's directory here")
	set.Uint64Var(&options.Seed, "seed", 0, "seed (0 = from the clock)")
	set.IntVar(&options.IdlePartitions, "idle-partitions", 0, "partitions held idle on the server during the runs")
	set.IntVar(&options.IdleConnections, "idle-connections", 0, "logged-in idle connections held during the runs")
	set.StringVar(profile, "profile", "", "profile the bench: cpu, mem or trace")
	rest, err := parseSection(set, args)
	if err != nil {
		return options, err
	}
	if len(rest) > 0 {
		return options, fmt.Errorf("%w: unexpected %q", ErrInvalidConfig, strings.Join(rest, " "))
	}
	options.Workloads = strings.Split(workloads, ",")
	for _, name := range options.Workloads {
		if _, err := WorkloadConfig(name, &options); err != nil {
			return options, err
		}
	}
	if options.Repeats < 1 {
		return options, fmt.Errorf("%w: --repeats must be at least 1", ErrInvalidConfig)
	}
	if options.IdlePartitions < 0 || options.IdleConnections < 0 {
		return options, fmt.Errorf("%w: --idle-partitions and --idle-connections must not be negative", ErrInvalidConfig)
	}
	return options, nil
}

func parseUint32(text string, target *uint32) error {
	value, err := ParseRange(text)
	if err != nil || !value.Fixed() {
		return fmt.Errorf("%q is not a positive count", text)
	}
	*target = value.Min
	return nil
}

// WorkloadConfig maps a lab workload to a run configuration.
func WorkloadConfig(name string, options *SuiteOptions) (Config, error) {
	var config Config
	switch name {
	case "p1", "p2":
		config = DefaultConfig(KindPinnedProducer)
		config.Producers = int(name[1] - '0')
	case "c1":
		config = DefaultConfig(KindPinnedConsumer)
		config.Consumers = 1
	case "pc1":
		config = DefaultConfig(KindPinnedProducerAndConsumer)
		config.Producers, config.Consumers = 1, 1
	case "e2e1":
		config = DefaultConfig(KindEndToEndProducingConsumer)
		config.Producers = 1
	default:
		return config, fmt.Errorf("%w: unknown workload %q (%s)", ErrInvalidConfig, name,
			strings.Join(SuiteWorkloads, ", "))
	}
	config.MessageSize, config.MessagesPerBatch = Fixed(options.MessageSize), Fixed(options.MessagesPerBatch)
	config.MessageBatches, config.MaxDuration = options.Batches, options.Duration
	config.Durability, config.ServerAddress, config.Seed = options.Durability, options.ServerAddress, options.Seed
	config.NoDelay = true // the lab's Go clients keep Go's default
	config.OutputDir, config.Remark = options.OutputDir, name
	config.Normalize()
	return config, config.Validate()
}

// RunSuite runs every workload Repeats times against one server (a local
// one started once when no address is given) and prints the lab's table.
func RunSuite(ctx context.Context, options SuiteOptions, environment Environment) ([]SuiteRow, error) {
	server := &Server{Address: options.ServerAddress, PID: options.ServerPID}
	if options.ServerAddress == "" {
		binary, err := FindServerBinary(options.ServerBinary)
		if err != nil {
			return nil, err
		}
		if server, err = StartLocalServer(ctx, binary, "iggy", "iggy"); err != nil {
			return nil, err
		}
		defer stopServer(server, discardLogger(environment.Logger))
	}
	held, err := startBackground(ctx, server, &options, discardLogger(environment.Logger))
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := held.stop(ctx); err != nil {
			discardLogger(environment.Logger).Warn("bench: background teardown", "err", err.Error())
		}
	}()
	var samples []suiteSample
	for repeat := range options.Repeats {
		for _, name := range options.Workloads {
			config, err := WorkloadConfig(name, &options)
			if err != nil {
				return nil, err
			}
			run := environment
			run.Server, run.Stdout, run.NoFiles, run.Prefill = server, nil, options.OutputDir == "", true
			result, err := Run(ctx, config, run)
			if err != nil {
				return nil, fmt.Errorf("bench: %s run %d: %w", name, repeat+1, err)
			}
			sides := sidesOf(name, result.Report)
			for _, side := range sides {
				discardLogger(environment.Logger).Info("suite run", "workload", name, "repeat", repeat+1,
					"side", side.side, "MB/s", int(side.mbps), "p50_ms", side.latency.P50Ms)
			}
			samples = append(samples, sides...)
		}
	}
	rows := summarizeSuite(options.Label, samples)
	if environment.Stdout != nil {
		WriteSuiteTable(environment.Stdout, rows)
	}
	return rows, nil
}
