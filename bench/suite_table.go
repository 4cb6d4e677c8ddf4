package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// suiteSample is one side of one run, in the lab's terms.
type suiteSample struct {
	workload  string
	side      string
	mbps      float64
	msgps     float64
	latency   LatencySummary
	serverPct float64 // -1 when unknown
	clientPct float64
	stealPct  float64
}

// SuiteRow is one line of the lab's table: medians over the repeats of a
// workload's side, with the throughput's spread.
type SuiteRow struct {
	Label     string  `json:"label"`
	Workload  string  `json:"workload"`
	Side      string  `json:"side"`
	Runs      int     `json:"n"`
	MBps      float64 `json:"mb_per_s"`
	MBpsMin   float64 `json:"mb_per_s_min"`
	MBpsMax   float64 `json:"mb_per_s_max"`
	Msgps     float64 `json:"msg_per_s"`
	P50Ms     float64 `json:"p50_ms"`
	P90Ms     float64 `json:"p90_ms"`
	P99Ms     float64 `json:"p99_ms"`
	P999Ms    float64 `json:"p999_ms"`
	MaxMs     float64 `json:"max_ms"`
	ServerPct float64 `json:"server_cpu_pct"` // -1 when unknown
	ClientPct float64 `json:"client_cpu_pct"`
	StealPct  float64 `json:"steal_pct"`
}

// sideRoles maps the lab's sides to our role groups.
var sideRoles = []struct{ side, group string }{
	{"produce", "producers"}, {"consume", "consumers"}, {"e2e", "producing_consumers"},
}

// sidesOf turns a report into the lab's sides. Throughput is payload over
// the role's wall time, as the lab measures it; a producing consumer's
// totals count each message twice (sent and read), so its side halves them.
func sidesOf(workload string, report *Report) []suiteSample {
	var samples []suiteSample
	for _, role := range sideRoles {
		for _, group := range report.GroupMetrics {
			summary := group.Summary
			if summary.Kind != role.group || summary.WallTimeSecs <= 0 {
				continue
			}
			bytes, messages := float64(summary.Totals.UserDataBytes), float64(summary.Totals.Messages)
			if role.side == "e2e" {
				bytes, messages = bytes/2, messages/2
			}
			samples = append(samples, suiteSample{workload: workload, side: role.side,
				mbps: bytes / 1e6 / summary.WallTimeSecs, msgps: messages / summary.WallTimeSecs,
				latency: summary.Latency, serverPct: report.CPU.ServerPct(), clientPct: report.CPU.ClientPct(),
				stealPct: report.CPU.StealPct})
		}
	}
	return samples
}

// summarizeSuite folds samples into rows, in order of first appearance.
func summarizeSuite(label string, samples []suiteSample) []SuiteRow {
	type key struct{ workload, side string }
	var order []key
	grouped := map[key][]suiteSample{}
	for _, sample := range samples {
		k := key{sample.workload, sample.side}
		if _, seen := grouped[k]; !seen {
			order = append(order, k)
		}
		grouped[k] = append(grouped[k], sample)
	}
	rows := make([]SuiteRow, 0, len(order))
	for _, k := range order {
		runs := grouped[k]
		pick := func(field func(*suiteSample) float64) []float64 {
			picked := make([]float64, len(runs))
			for index := range runs {
				picked[index] = field(&runs[index])
			}
			return picked
		}
		throughput := pick(func(s *suiteSample) float64 { return s.mbps })
		low, high := minMax(throughput)
		rows = append(rows, SuiteRow{Label: label, Workload: k.workload, Side: k.side, Runs: len(runs),
			MBps: median(throughput), MBpsMin: low, MBpsMax: high,
			Msgps:     median(pick(func(s *suiteSample) float64 { return s.msgps })),
			P50Ms:     median(pick(func(s *suiteSample) float64 { return s.latency.P50Ms })),
			P90Ms:     median(pick(func(s *suiteSample) float64 { return s.latency.P90Ms })),
			P99Ms:     median(pick(func(s *suiteSample) float64 { return s.latency.P99Ms })),
			P999Ms:    median(pick(func(s *suiteSample) float64 { return s.latency.P999Ms })),
			MaxMs:     median(pick(func(s *suiteSample) float64 { return s.latency.MaxMs })),
			ServerPct: median(pick(func(s *suiteSample) float64 { return s.serverPct })),
			ClientPct: median(pick(func(s *suiteSample) float64 { return s.clientPct })),
			StealPct:  median(pick(func(s *suiteSample) float64 { return s.stealPct })),
		})
	}
	return rows
}

// median of values (0 when empty).
func median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	middle := len(sorted) / 2
	if len(sorted)%2 == 1 {
		return sorted[middle]
	}
	return (sorted[middle-1] + sorted[middle]) / 2
}

// SuiteTableHeader is the lab's table header, column for column.
const SuiteTableHeader = "| peer (label) | workload | side | n | MB/s median [min–max] | msg/s | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | server CPU % | client CPU % | steal % |\n" +
	"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"

// WriteSuiteTable prints rows in the lab's markdown table.
func WriteSuiteTable(w io.Writer, rows []SuiteRow) {
	var out strings.Builder
	out.WriteString(SuiteTableHeader)
	for _, row := range rows {
		spread := ""
		if row.Runs > 1 {
			spread = fmt.Sprintf(" [%.0f–%.0f]", row.MBpsMin, row.MBpsMax)
			if row.MBps > 0 && (row.MBpsMax-row.MBpsMin)/row.MBps > 0.25 {
				spread += " noisy"
			}
		}
		server := "–"
		if row.ServerPct >= 0 {
			server = fmt.Sprintf("%.0f", row.ServerPct)
		}
		fmt.Fprintf(&out, "| %s | %s | %s | %d | %.0f%s | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %s | %.0f | %.1f |\n",
			row.Label, row.Workload, row.Side, row.Runs, row.MBps, spread, row.Msgps, row.P50Ms, row.P90Ms, row.P99Ms,
			row.P999Ms, row.MaxMs, server, row.ClientPct, row.StealPct)
	}
	_, _ = io.WriteString(w, out.String()) // stdout gone: nothing to do
}
