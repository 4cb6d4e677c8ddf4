package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// syntheticReport builds a report as Run does, from recorders fed a known
// load instead of a server: two producers and two consumers of ppc.
func syntheticReport(t *testing.T) *Report {
	t.Helper()
	config := normalized(t, KindPinnedProducerAndConsumer, func(c *Config) {
		c.Producers, c.Consumers, c.Durability, c.Rate = 2, 2, "written", 4000
	})
	state := &runState{config: config, plan: NewPlan(config), targets: make([]target, config.Streams)}
	state.produced = make([]atomic.Uint64, config.Streams)
	start := time.Unix(1000, 0)
	var actors []*actor
	for _, plan := range state.plan.Actors {
		recorder := NewRecorder(config.SamplingTime)
		recorder.Start(start)
		for batch := 1; batch <= 50; batch++ {
			recorder.Batch(start.Add(time.Duration(batch)*5*time.Millisecond), time.Duration(batch)*100*time.Microsecond,
				100, 100_000, batchWireBytes(100, 100_000))
		}
		actor := &actor{run: state, plan: plan, recorder: recorder, reader: reader{stream: plan.Stream}}
		if plan.Produces {
			state.produced[plan.Stream].Add(5000)
		} else {
			actor.reader.consumed = 5000
		}
		actors = append(actors, actor)
	}
	hardware := Fingerprint("test-box")
	report := &Report{SchemaVersion: ReportSchemaVersion, UUID: newUUID(), Timestamp: start.UTC().Format(time.RFC3339),
		Hardware: hardware, Params: newParams(config, []string{"whippet-bench", "ppc"}, &hardware),
		Config: reportConfig(config), Accounting: account(state, actors),
		Run: RunFacts{Loop: "open", CoordinatedOmissionCorrected: true, Durability: config.Durability}}
	report.IndividualMetrics, report.GroupMetrics = collectMetrics(config, actors)
	return report
}

// TestReportSchema checks report.json's keys: iggy-bench's names where it
// has them (so its dashboard and scripts read ours), then ours.
func TestReportSchema(t *testing.T) {
	encoded, err := json.Marshal(syntheticReport(t))
	if err != nil {
		t.Fatal(err)
	}
	var document map[string]any
	if err := json.Unmarshal(encoded, &document); err != nil {
		t.Fatal(err)
	}
	requireKeys(t, "report", document, "uuid", "timestamp", "hardware", "params", "group_metrics",
		"individual_metrics", "schema_version", "config", "run", "accounting", "cpu")
	requireKeys(t, "hardware", document["hardware"], "identifier", "cpu_name", "cpu_cores", "total_memory_mb",
		"os_name", "os_version", "kernel_version", "io_uring")
	requireKeys(t, "params", document["params"], "benchmark_kind", "transport", "server_address",
		"messages_per_batch", "message_batches", "message_size", "producers", "consumers", "streams", "partitions",
		"consumer_groups", "pretty_name", "bench_command", "params_identifier")
	groups := document["group_metrics"].([]any)
	if len(groups) != 3 {
		t.Fatalf("%d groups, want producers, consumers and producers_and_consumers", len(groups))
	}
	requireKeys(t, "group_metrics[0]", groups[0], "summary", "avg_throughput_mb_ts", "avg_throughput_msg_ts",
		"avg_latency_ts", "latency_distribution")
	requireKeys(t, "group summary", groups[0].(map[string]any)["summary"], "kind",
		"total_throughput_megabytes_per_second", "total_throughput_messages_per_second",
		"average_throughput_megabytes_per_second", "average_throughput_messages_per_second",
		"average_p50_latency_ms", "average_p90_latency_ms", "average_p95_latency_ms", "average_p99_latency_ms",
		"average_p999_latency_ms", "average_p9999_latency_ms", "average_latency_ms", "average_median_latency_ms",
		"min_latency_ms", "max_latency_ms", "std_dev_latency_ms", "latency")
	requireKeys(t, "distribution", groups[0].(map[string]any)["latency_distribution"], "bins", "log_normal_params",
		"percentiles")
	actors := document["individual_metrics"].([]any)
	requireKeys(t, "individual_metrics[0]", actors[0], "summary", "throughput_mb_ts", "throughput_msg_ts", "latency_ts")
	requireKeys(t, "actor summary", actors[0].(map[string]any)["summary"], "benchmark_kind", "actor_kind", "actor_id",
		"total_time_secs", "total_user_data_bytes", "total_bytes", "total_messages", "total_message_batches",
		"throughput_megabytes_per_second", "throughput_messages_per_second", "p50_latency_ms", "p90_latency_ms",
		"p95_latency_ms", "p99_latency_ms", "p999_latency_ms", "p9999_latency_ms", "avg_latency_ms",
		"median_latency_ms", "min_latency_ms", "max_latency_ms", "std_dev_latency_ms", "latency")
	requireKeys(t, "hdr latency", actors[0].(map[string]any)["summary"].(map[string]any)["latency"], "p50_ms", "p90_ms",
		"p95_ms", "p99_ms", "p999_ms", "p9999_ms", "max_ms", "min_ms", "mean_ms", "std_dev_ms")
	series := actors[0].(map[string]any)["throughput_mb_ts"].(map[string]any)
	if series["kind"] != SeriesThroughputMB || len(series["points"].([]any)) == 0 {
		t.Errorf("throughput series %v", series)
	}
	requireKeys(t, "point", series["points"].([]any)[0], "time_s", "value")
	if document["params"].(map[string]any)["benchmark_kind"] != "pinned_producer_and_consumer" {
		t.Errorf("benchmark_kind %v", document["params"].(map[string]any)["benchmark_kind"])
	}
}

func requireKeys(t *testing.T, where string, value any, keys ...string) {
	t.Helper()
	object, ok := value.(map[string]any)
	if !ok {
		t.Fatalf("%s is %T, not an object", where, value)
	}
	for _, key := range keys {
		if _, ok := object[key]; !ok {
			t.Errorf("%s: missing %q", where, key)
		}
	}
}

// TestWriteRun writes a run directory and reads it back.
func TestWriteRun(t *testing.T) {
	report := syntheticReport(t)
	parent := t.TempDir()
	directory, err := WriteRun(report, parent, []byte("server says hi\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ReportFile, ThroughputChartFile, LatencyChartFile, DistributionChartFile, ServerLogFile} {
		info, err := os.Stat(filepath.Join(directory, name))
		if err != nil || info.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if !strings.HasPrefix(filepath.Base(directory), "pinned_producer_and_consumer_4_1000_1000_1000_tcp_rate4000_written_") {
		t.Errorf("run directory %q", filepath.Base(directory))
	}
	again, err := WriteRun(report, parent, nil)
	if err != nil || again != directory+"_2" {
		t.Errorf("second run of the same name went to %q (%v), want %q", again, err, directory+"_2")
	}
	read, err := ReadReport(filepath.Join(directory, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if read.UUID != report.UUID || len(read.IndividualMetrics) != 4 ||
		read.GroupMetrics[0].Summary.Latency.Count != report.GroupMetrics[0].Summary.Latency.Count {
		t.Errorf("report did not round-trip: %+v", read.Params)
	}
}

// TestCharts checks that each chart names its series and carries data.
func TestCharts(t *testing.T) {
	report := syntheticReport(t)
	for name, write := range map[string]func(*bytes.Buffer) error{
		"throughput":   func(b *bytes.Buffer) error { return WriteThroughputChart(b, report) },
		"latency":      func(b *bytes.Buffer) error { return WriteLatencyChart(b, report) },
		"distribution": func(b *bytes.Buffer) error { return WriteDistributionChart(b, report) },
	} {
		var buffer bytes.Buffer
		if err := write(&buffer); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		html := buffer.String()
		if !strings.Contains(html, "echarts") || !strings.Contains(html, "producers") {
			t.Errorf("%s chart lacks echarts or the producers series", name)
		}
		if name != "distribution" && !strings.Contains(html, "consumer 2") {
			t.Errorf("%s chart lacks the per-actor series", name)
		}
	}
}

// TestDownsample checks LTTB keeps the ends, the bound and a spike.
func TestDownsample(t *testing.T) {
	points := make([]Point, 10_000)
	for index := range points {
		points[index] = Point{TimeS: float64(index), Value: 1}
	}
	points[5000].Value = 1000
	sampled := downsample(points, 100)
	if len(sampled) != 100 || sampled[0] != points[0] || sampled[99] != points[9999] {
		t.Fatalf("%d points, ends %v %v", len(sampled), sampled[0], sampled[len(sampled)-1])
	}
	spike := false
	for _, point := range sampled {
		spike = spike || point.Value == 1000
	}
	if !spike {
		t.Error("LTTB dropped the spike it exists to keep")
	}
	if short := downsample(points[:10], 100); len(short) != 10 {
		t.Error("short series are kept whole")
	}
}

// TestSummaryTable checks the stdout table's rows and ledger line.
func TestSummaryTable(t *testing.T) {
	report := syntheticReport(t)
	report.Config.Pretty = true
	var out bytes.Buffer
	WriteSummary(&out, report, "/tmp/run")
	text := out.String()
	for _, want := range []string{"producers", "consumers", "producer 1", "consumer 2", "p99.99", "loop: open",
		"every message read exactly as often as expected", "results: /tmp/run"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
}

// TestProgressEstimate checks the bar's total for group readers (one target
// per group, not per member) and producing consumers (both directions).
func TestProgressEstimate(t *testing.T) {
	config := normalized(t, KindBalancedConsumerGroup, func(c *Config) { c.Consumers = 3 })
	group := &groupState{target: 600}
	state := &runState{config: config}
	var actors []*actor
	for index := range 3 {
		actors = append(actors, &actor{run: state, plan: ActorPlan{ID: index + 1, Consumes: true, Group: 0},
			reader: reader{group: group}})
	}
	if got := expectedMessages(&phase{state: state, actors: actors}); got != 600 {
		t.Errorf("group readers expect %v, want 600", got)
	}
	config = normalized(t, KindEndToEndProducingConsumer, func(c *Config) { c.Producers, c.MessageBatches = 2, 10 })
	state = &runState{config: config}
	actors = []*actor{{run: state, plan: ActorPlan{Produces: true, Consumes: true}},
		{run: state, plan: ActorPlan{Produces: true, Consumes: true}}}
	if got := expectedMessages(&phase{state: state, actors: actors}); got != 2*2*10*1000 {
		t.Errorf("producing consumers expect %v, want 40000", got)
	}
}

// TestProgressBarDraws runs a short job with the bar on (under -race this
// checks the bar reads nothing the actors write unguarded).
func TestProgressBarDraws(t *testing.T) {
	b := startBroker(t)
	config := smallConfig(KindPinnedProducer, b.address())
	config.Rate = 1000 // about 400 ms: the bar draws at least once
	var bar bytes.Buffer
	if _, err := Run(context.Background(), config, Environment{NoFiles: true, Progress: true, Stderr: &bar}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(bar.String(), "msgs") || !strings.Contains(bar.String(), "MB/s") {
		t.Errorf("progress output %q", bar.String())
	}
}
