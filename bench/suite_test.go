package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSuiteWorkloads maps the lab's workloads to kinds and counts.
func TestSuiteWorkloads(t *testing.T) {
	options := DefaultSuiteOptions()
	rows := []struct {
		name                 string
		kind                 Kind
		producers, consumers int
	}{
		{"p1", KindPinnedProducer, 1, 0}, {"p2", KindPinnedProducer, 2, 0}, {"c1", KindPinnedConsumer, 0, 1},
		{"pc1", KindPinnedProducerAndConsumer, 1, 1}, {"e2e1", KindEndToEndProducingConsumer, 1, 1},
	}
	for _, row := range rows {
		config, err := WorkloadConfig(row.name, &options)
		if err != nil {
			t.Fatalf("%s: %v", row.name, err)
		}
		if config.Kind != row.kind || config.Producers != row.producers || config.Consumers != row.consumers ||
			config.MessageBatches != 2000 || config.MaxDuration != SuiteDurationDefault || !config.NoDelay ||
			config.MessageSize != Fixed(1000) || config.MessagesPerBatch != Fixed(1000) {
			t.Errorf("%s: %+v", row.name, config)
		}
	}
}

// TestSuiteTable checks the medians and that the header is the lab's own,
// read from the lab's summary.
func TestSuiteTable(t *testing.T) {
	samples := []suiteSample{
		{workload: "p1", side: "produce", mbps: 100, msgps: 1e5, latency: LatencySummary{P50Ms: 1}, serverPct: 80},
		{workload: "p1", side: "produce", mbps: 300, msgps: 3e5, latency: LatencySummary{P50Ms: 3}, serverPct: 90},
		{workload: "p1", side: "produce", mbps: 200, msgps: 2e5, latency: LatencySummary{P50Ms: 2}, serverPct: 70},
		{workload: "e2e1", side: "e2e", mbps: 50, serverPct: -1},
	}
	rows := summarizeSuite("whippet", samples)
	if len(rows) != 2 || rows[0].Workload != "p1" || rows[0].Runs != 3 || rows[0].MBps != 200 ||
		rows[0].MBpsMin != 100 || rows[0].MBpsMax != 300 || rows[0].P50Ms != 2 || rows[0].ServerPct != 80 {
		t.Fatalf("rows %+v", rows)
	}
	var out bytes.Buffer
	WriteSuiteTable(&out, rows)
	lines := strings.Split(out.String(), "\n")
	if !strings.Contains(lines[2], "| whippet | p1 | produce | 3 | 200 [100–300] noisy | 200000 | 2.00 |") {
		t.Errorf("row %q", lines[2])
	}
	if !strings.Contains(lines[3], "| – |") {
		t.Errorf("unknown server CPU must print –: %q", lines[3])
	}
	summary, err := os.ReadFile(filepath.Join("..", "..", "shared", "lab", "results", "summary.md"))
	if err != nil {
		t.Skipf("lab summary not found (%v): the header cannot be compared", err)
	}
	header, _, _ := strings.Cut(SuiteTableHeader, "\n")
	if !strings.Contains(string(summary), header+"\n") {
		t.Errorf("our header %q is not the lab's", header)
	}
}

// TestSidesOf checks how a report becomes the lab's sides.
func TestSidesOf(t *testing.T) {
	report := &Report{GroupMetrics: []GroupMetrics{
		{Summary: GroupSummary{Kind: "producing_consumers", WallTimeSecs: 2,
			Totals: Totals{Messages: 4000, UserDataBytes: 4_000_000}}},
	}}
	sides := sidesOf("e2e1", report)
	if len(sides) != 1 || sides[0].side != "e2e" || sides[0].mbps != 1 || sides[0].msgps != 1000 {
		t.Errorf("sides %+v: a producing consumer's totals count each message twice", sides)
	}
}

// TestRunSuiteAgainstBroker runs the lab's five workloads once, briefly,
// and checks the table has the lab's six rows (pc1 has two sides).
func TestRunSuiteAgainstBroker(t *testing.T) {
	b := startBroker(t)
	options := DefaultSuiteOptions()
	options.Repeats, options.Batches, options.MessagesPerBatch, options.MessageSize = 1, 5, 50, 100
	options.ServerAddress = b.address()
	var out bytes.Buffer
	rows, err := RunSuite(context.Background(), options, Environment{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"p1/produce", "p2/produce", "c1/consume", "pc1/produce", "pc1/consume", "e2e1/e2e"}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d:\n%s", len(rows), len(want), out.String())
	}
	for index, row := range rows {
		if got := row.Workload + "/" + row.Side; got != want[index] || row.Runs != 1 || row.MBps <= 0 || row.P50Ms <= 0 {
			t.Errorf("row %d: %+v, want %s", index, row, want[index])
		}
	}
	if !strings.HasPrefix(out.String(), SuiteTableHeader) {
		t.Errorf("table:\n%s", out.String())
	}
}
