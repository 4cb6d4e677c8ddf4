package bench

import (
	"context"
	"strings"
	"testing"
	"time"
)

// smallConfig is a short run of kind: 20 messages of 64 B per batch, 10
// batches per actor, two producers and two consumers where the kind has
// them, four partitions where it balances.
func smallConfig(kind Kind, address string) Config {
	config := DefaultConfig(kind)
	config.MessageSize, config.MessagesPerBatch, config.MessageBatches = Fixed(64), Fixed(20), 10
	config.ServerAddress, config.NoDelay, config.Seed = address, true, 1
	if kind.HasProducers() {
		config.Producers = 2
	}
	if kind.HasConsumers() && kind != KindEndToEndProducingConsumer {
		config.Consumers = 2
	}
	if !kind.Pinned() {
		config.Partitions = 4
	}
	return config
}

// runSmall runs config against server and fails the test on any error.
func runSmall(t *testing.T, config Config, server *Server) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	environment := Environment{NoFiles: true, Server: server}
	if server.process == nil {
		environment.Server = nil // a remote server: Run connects to config.ServerAddress
	}
	result, err := Run(ctx, config, environment)
	if err != nil {
		t.Fatalf("%s: %v", config.Kind, err)
	}
	return result.Report
}

// checkKinds runs each kind briefly against server and checks the report:
// its fields, the actors, and that message counts add up (every message
// sent is read exactly once by each reader of its stream). Consumer-only
// kinds read what their producer kind wrote just before (a local server
// is prefilled by Run itself).
func checkKinds(t *testing.T, server *Server) {
	for _, kind := range Kinds() {
		t.Run(kind.String(), func(t *testing.T) {
			config := smallConfig(kind, server.Address)
			if kind.ConsumerOnly() && server.process == nil {
				writer := smallConfig(kind.ProducerKind(), server.Address)
				writer.Producers = config.Consumers
				runSmall(t, writer, server)
			}
			report := runSmall(t, config, server)
			checkReport(t, kind, report)
		})
	}
}

func checkReport(t *testing.T, kind Kind, report *Report) {
	t.Helper()
	config := report.Config.Config
	plan := NewPlan(&config)
	if report.Params.BenchmarkKind != kind.Enum() || report.UUID == "" || report.Hardware.CPUCores < 1 {
		t.Errorf("params %+v uuid %q", report.Params, report.UUID)
	}
	if len(report.IndividualMetrics) != len(plan.Actors) || len(report.GroupMetrics) == 0 {
		t.Fatalf("%d actors reported, plan has %d; %d groups", len(report.IndividualMetrics), len(plan.Actors),
			len(report.GroupMetrics))
	}
	ledger := report.Accounting
	if !ledger.Exact {
		t.Errorf("accounting not exact: %+v", ledger)
	}
	var sent uint64
	for index, actor := range report.IndividualMetrics {
		summary := actor.Summary
		// An actor that draws from a shared budget, or reads through a
		// group, may find nothing left for it; every other actor moves data.
		shares := (plan.Actors[index].Produces && plan.SharedProducerBudget) || plan.Actors[index].Group >= 0
		if !shares && (summary.Messages == 0 || summary.Latency.Count == 0 || summary.ThroughputMBps <= 0) {
			t.Errorf("%s %d moved %d messages, %d latencies, %.3f MB/s", summary.ActorKind, summary.ActorID,
				summary.Messages, summary.Latency.Count, summary.ThroughputMBps)
		}
		if summary.ActorKind == ActorProducer.String() {
			sent += summary.Messages
		}
	}
	want := uint64(config.Producers) * config.MessageBatches * uint64(config.MessagesPerBatch.Min)
	if kind.HasProducers() && ledger.MessagesSent != want {
		t.Errorf("sent %d messages, the budget is %d", ledger.MessagesSent, want)
	}
	if kind.HasProducers() && sent != 0 && sent != ledger.MessagesSent {
		t.Errorf("producers recorded %d messages, acknowledged %d", sent, ledger.MessagesSent)
	}
	if kind.HasConsumers() && (ledger.MessagesExpected == 0 || ledger.MessagesConsumed != ledger.MessagesExpected) {
		t.Errorf("consumed %d of %d", ledger.MessagesConsumed, ledger.MessagesExpected)
	}
	if kind.ConsumerOnly() && ledger.MessagesConsumed < uint64(config.Consumers)*config.MessageBatches*
		uint64(config.MessagesPerBatch.Min) && !kind.UsesGroups() {
		t.Errorf("pinned consumers read %d messages, fewer than their budget", ledger.MessagesConsumed)
	}
}

// TestKindsAgainstBroker runs every kind over TCP against the in-test
// broker.
func TestKindsAgainstBroker(t *testing.T) {
	checkKinds(t, &Server{Address: startBroker(t).address()})
}

// TestOpenLoopAndDurability checks that --rate paces the run and marks it
// corrected, and that --durability reaches the topic as an option.
func TestOpenLoopAndDurability(t *testing.T) {
	b := startBroker(t)
	config := smallConfig(KindPinnedProducer, b.address())
	config.Rate, config.Durability, config.EnforceFsync = 8000, "written", true // 4000 msg/s per producer
	started := time.Now()
	report := runSmall(t, config, &Server{Address: b.address()})
	// 200 messages per producer at 4000 msg/s: the last batch is due at 47.5 ms.
	if elapsed := time.Since(started); elapsed < 45*time.Millisecond {
		t.Errorf("an open loop at 4000 msg/s per actor sent 200 messages in %v", elapsed)
	}
	if !report.Run.CoordinatedOmissionCorrected || report.Run.Loop != "open" ||
		report.IndividualMetrics[0].Summary.LatencyBasis != "send_from_schedule" {
		t.Errorf("run %+v basis %q", report.Run, report.IndividualMetrics[0].Summary.LatencyBasis)
	}
	if value, ok := b.topicOption(StreamName(0), "durability"); !ok || value != "written" {
		t.Errorf("durability option %q %v", value, ok)
	}
	if _, ok := b.topicOption(StreamName(1), "enforce_fsync"); !ok {
		t.Error("enforce_fsync was not sent")
	}
	config.InFlight = 4
	report = runSmall(t, config, &Server{Address: b.address()})
	if !report.Accounting.Exact || report.Accounting.MessagesSent != 400 {
		t.Errorf("pipelined open loop: %+v", report.Accounting)
	}
}

// TestMaxDurationAndWarmup checks that --max-duration stops the producers
// and the consumers still read everything written, and that the warmup is
// sent but not measured.
func TestMaxDurationAndWarmup(t *testing.T) {
	b := startBroker(t)
	config := smallConfig(KindPinnedProducerAndConsumer, b.address())
	config.MessageBatches, config.MaxDuration, config.Rate = 1_000_000, 150*time.Millisecond, 40000
	config.Warmup = 50 * time.Millisecond
	report := runSmall(t, config, &Server{Address: b.address()})
	if !report.Run.TruncatedByMaxDuration || !report.Accounting.Exact {
		t.Fatalf("run %+v accounting %+v", report.Run, report.Accounting)
	}
	var measured uint64
	for _, group := range report.GroupMetrics {
		if group.Summary.Kind == "producers" {
			measured = group.Summary.Totals.Messages
		}
	}
	if measured == 0 || measured >= report.Accounting.MessagesSent {
		t.Errorf("measured %d of %d sent: the warmup must be sent but not measured", measured,
			report.Accounting.MessagesSent)
	}
}

// TestRateLimit checks the closed loop's token bucket paces a whole run:
// 12,800 B per producer at 50,000 B/s each, one batch of burst.
func TestRateLimit(t *testing.T) {
	b := startBroker(t)
	config := smallConfig(KindPinnedProducer, b.address())
	config.RateLimit = 100_000 // aggregate, split over 2 producers
	started := time.Now()
	report := runSmall(t, config, &Server{Address: b.address()})
	if elapsed := time.Since(started); elapsed < 200*time.Millisecond {
		t.Errorf("12,800 B per producer at 50,000 B/s took %v, want at least 230 ms less one batch of burst", elapsed)
	}
	if report.Run.Loop != "closed" || report.IndividualMetrics[0].Summary.LatencyBasis != "send" {
		t.Errorf("run %+v", report.Run)
	}
}

// TestServerFailsMidRun checks that a refused send stops every actor, and
// that the report of what was measured is still returned and written, with
// the producer's error in it.
func TestServerFailsMidRun(t *testing.T) {
	b := startBroker(t)
	b.mu.Lock()
	b.sendsLeft = 5
	b.mu.Unlock()
	config := smallConfig(KindPinnedProducerAndConsumer, b.address())
	config.OutputDir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	result, err := Run(ctx, config, Environment{})
	if err == nil || result == nil || result.Report == nil || result.Directory == "" {
		t.Fatalf("err %v result %+v", err, result)
	}
	if !strings.Contains(err.Error(), "producer") || result.Report.Run.Error != err.Error() {
		t.Errorf("error %q, report error %q", err, result.Report.Run.Error)
	}
	// The ledger counts acknowledged messages: a send the broker took but
	// whose reply the cancelled run stopped waiting for is not among them.
	if sent := result.Report.Accounting.MessagesSent; sent > 5*20 || sent < 4*20 || sent%20 != 0 {
		t.Errorf("the ledger counts %d messages sent; the broker accepted 5 batches of 20", sent)
	}
}
