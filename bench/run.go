package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Environment is what a run may touch besides the server.
type Environment struct {
	// Stdout receives the summary table; Stderr the progress bar.
	Stdout io.Writer
	Stderr io.Writer
	// Progress draws a progress bar on Stderr (set it when Stderr is a
	// terminal).
	Progress bool
	// Command is the command line, saved as bench_command.
	Command []string
	// Logger reports setup steps (nil: discarded).
	Logger *slog.Logger
	// NoFiles skips the run directory (report.json and charts).
	NoFiles bool
	// Server, when set, is a server already started (by a suite) that
	// the run uses instead of the configured address; Run leaves it running.
	Server *Server
	// Prefill makes a consumer-only kind write what it reads first even on
	// a remote server (a local one is always prefilled: it starts empty).
	Prefill bool
}

// Result is a finished run: its report and where it was written.
type Result struct {
	Report    *Report
	Directory string
}

// Run executes one benchmark: it starts a local server when no address is
// given (stopping it afterwards), prefills the streams a consumer-only
// kind reads from a fresh local server, measures, writes the run directory
// and prints the summary. A failed run still returns (and writes) the
// report of what was measured, with the error in it; an interrupted one
// (ctx cancelled) writes nothing.
func Run(ctx context.Context, config Config, environment Environment) (*Result, error) {
	config.Normalize()
	if err := config.Validate(); err != nil {
		return nil, err
	}
	if config.Seed == 0 {
		config.Seed = uint64(time.Now().UnixNano())
	}
	logger := discardLogger(environment.Logger)
	server := environment.Server
	if server == nil {
		var err error
		if server, err = targetServer(ctx, &config, logger); err != nil {
			return nil, err
		}
		defer stopServer(server, logger)
	}
	config.ServerAddress = server.Address
	prefilled := false
	if config.Kind.ConsumerOnly() && (server.process != nil || environment.Prefill) {
		if err := prefill(ctx, &config, server, logger); err != nil {
			return nil, err
		}
		prefilled = true
	}
	var bar *progressBar
	watch := func(measured *phase) {
		if environment.Progress && environment.Stderr != nil {
			bar = startProgress(environment.Stderr, measured)
		}
	}
	measured, runErr := execute(ctx, &config, *server, config.Seed, watch)
	bar.stop()
	if measured == nil || ctx.Err() != nil {
		return nil, errors.Join(runErr, ctx.Err()) // interrupted: no partial run directory, as iggy-bench
	}
	report := buildReport(ctx, &config, server, measured, environment.Command)
	report.Run.Prefilled = prefilled
	if runErr != nil {
		report.Run.Error = runErr.Error()
	}
	result := &Result{Report: report}
	if !environment.NoFiles {
		var err error
		if result.Directory, err = WriteRun(report, config.OutputDir, server.ReadLog()); err != nil {
			return result, errors.Join(runErr, err)
		}
	}
	if environment.Stdout != nil {
		WriteSummary(environment.Stdout, report, result.Directory)
	}
	return result, runErr
}

// discardLogger returns logger, or one that drops everything.
func discardLogger(logger *slog.Logger) *slog.Logger {
	if logger == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return logger
}

// targetServer is the configured address, or a local server started for
// the run.
func targetServer(ctx context.Context, config *Config, logger *slog.Logger) (*Server, error) {
	if config.ServerAddress != "" {
		return &Server{Address: config.ServerAddress, PID: config.ServerPID}, nil
	}
	binary, err := FindServerBinary(config.ServerBinary)
	if err != nil {
		return nil, err
	}
	logger.Info("starting local server", "binary", binary)
	server, err := StartLocalServer(ctx, binary, config.Username, config.Password)
	if err != nil {
		return nil, err
	}
	logger.Info("local server ready", "address", server.Address, "pid", server.PID, "data", server.DataDir)
	return server, nil
}

func stopServer(server *Server, logger *slog.Logger) {
	if err := server.Stop(); err != nil {
		logger.Warn("stopping the local server", "error", err)
	}
}

// prefill writes what a consumer-only kind reads into a fresh local server:
// the matching producer kind with the same sizes and budget, unmeasured.
func prefill(ctx context.Context, config *Config, server *Server, logger *slog.Logger) error {
	writer := *config
	writer.Kind = config.Kind.ProducerKind()
	writer.Rate, writer.RateLimit, writer.Warmup = 0, 0, 0
	writer.Producers = config.Consumers
	if writer.Kind == KindPinnedProducer {
		writer.Producers = config.Streams
	}
	writer.Consumers, writer.ConsumerGroups = 0, 0
	if err := writer.Validate(); err != nil {
		return fmt.Errorf("bench: prefill for %s: %w", config.Kind, err)
	}
	logger.Info("prefilling streams", "kind", writer.Kind.String(), "producers", writer.Producers)
	if _, err := execute(ctx, &writer, *server, config.Seed^0x9e3779b97f4a7c15, nil); err != nil {
		return fmt.Errorf("bench: prefill for %s: %w", config.Kind, err)
	}
	return nil
}

// buildReport turns a measured phase into the report.
func buildReport(ctx context.Context, config *Config, server *Server, measured *phase, command []string) *Report {
	hardware := Fingerprint(config.Identifier)
	report := &Report{
		SchemaVersion: ReportSchemaVersion, UUID: newUUID(), Timestamp: time.Now().UTC().Format(time.RFC3339),
		Hardware: hardware, Params: newParams(config, command, &hardware), Config: reportConfig(config),
		Accounting: measured.accounts, CPU: measured.cpu,
		Run: RunFacts{Loop: "closed", InFlight: 1, Durability: config.Durability, LocalServer: server.process != nil,
			WallTimeSecs: measured.wall.Seconds(), TruncatedByMaxDuration: measured.state.truncated.Load(),
			Seed: config.Seed},
	}
	if config.OpenLoop() {
		report.Run.Loop, report.Run.CoordinatedOmissionCorrected = "open", true
		report.Run.RateMessagesPerSecond, report.Run.InFlight = config.Rate, config.InFlight
	}
	if report.Run.Durability == "" {
		report.Run.Durability = "server default"
	}
	report.IndividualMetrics, report.GroupMetrics = collectMetrics(config, measured.actors)
	report.ServerStats = fetchStats(ctx, measured.state)
	return report
}

// collectMetrics computes every actor's figures and the role groups.
func collectMetrics(config *Config, actors []*actor) ([]ActorMetrics, []GroupMetrics) {
	individual := make([]ActorMetrics, 0, len(actors))
	byRole := map[ActorKind][]ActorMetrics{}
	for _, actor := range actors {
		metrics := actorMetrics(actor.recorder, config.Kind, actor.plan, latencyBasis(config, actor.plan),
			config.MovingAverageWindow)
		individual = append(individual, metrics)
		byRole[actor.plan.Kind] = append(byRole[actor.plan.Kind], metrics)
	}
	names := map[ActorKind]string{ActorProducer: "producers", ActorConsumer: "consumers",
		ActorProducingConsumer: "producing_consumers"}
	var groups []GroupMetrics
	for _, role := range groupKinds {
		if members := byRole[role]; len(members) > 0 {
			groups = append(groups, groupMetrics(names[role], members))
		}
	}
	if len(byRole[ActorProducer]) > 0 && len(byRole[ActorConsumer]) > 0 {
		groups = append(groups, groupMetrics("producers_and_consumers", individual))
	}
	return individual, groups
}

// latencyBasis names what an actor's latency measures.
func latencyBasis(config *Config, plan ActorPlan) string {
	basis := "send"
	if plan.Consumes {
		basis = "poll"
		if config.Kind.EndToEnd() {
			basis = "end_to_end"
		}
	}
	if config.OpenLoop() && basis != "end_to_end" {
		basis += "_from_schedule"
	}
	return basis
}

// fetchStats reads the server's statistics after the run (nil if it
// cannot).
func fetchStats(ctx context.Context, state *runState) *ServerStats {
	ctx, cancel := context.WithTimeout(ctx, SetupTimeout)
	defer cancel()
	admin, err := state.dial(ctx)
	if err != nil {
		return nil
	}
	defer admin.Close()
	stats, err := admin.GetStats(ctx)
	if err != nil {
		return nil
	}
	return serverStats(stats)
}
