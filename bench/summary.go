package bench

import (
	"fmt"
	"io"
	"strings"
)

// WriteSummary prints a run's table: one row per role (and per actor with
// --pretty), throughput and HdrHistogram latencies, then the ledger.
func WriteSummary(w io.Writer, report *Report, directory string) {
	var out strings.Builder
	fmt.Fprintf(&out, "%s\n", report.Params.PrettyName)
	fmt.Fprintf(&out, "loop: %s", report.Run.Loop)
	if report.Run.CoordinatedOmissionCorrected {
		fmt.Fprintf(&out, " (latency from the scheduled start, %d msg/s, %d in flight)",
			report.Run.RateMessagesPerSecond, report.Run.InFlight)
	}
	fmt.Fprintf(&out, " · durability: %s · wall %.2fs · server %s\n", report.Run.Durability,
		report.Run.WallTimeSecs, report.Params.ServerAddress)
	header := fmt.Sprintf("%-24s %10s %12s %10s %12s %8s %8s %8s %8s %8s %8s %8s %8s\n", "group/actor", "MB/s",
		"msg/s", "wall MB/s", "messages", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "max", "mean")
	out.WriteString(header)
	for _, group := range report.GroupMetrics {
		summary := group.Summary
		row(&out, summary.Kind, summary.TotalMBps, summary.TotalMsgps, summary.WallThroughputMBps,
			summary.Totals.Messages, summary.Latency)
	}
	if report.Config.Pretty {
		for _, actor := range report.IndividualMetrics {
			summary := actor.Summary
			row(&out, "  "+actorLabel(&summary), summary.ThroughputMBps, summary.ThroughputMsgps,
				summary.WallThroughputMBps, summary.Messages, summary.Latency)
		}
	}
	out.WriteString("(MB = 10^6 B of payload; MB/s = mean of the smoothed series, as iggy-bench; latency in ms, HdrHistogram)\n")
	ledger := report.Accounting
	if ledger.MessagesExpected > 0 {
		verdict := "every message read exactly as often as expected"
		switch {
		case !ledger.Exact && report.Run.TruncatedByMaxDuration:
			verdict = "stopped early, partial read"
		case !ledger.Exact:
			verdict = "MISMATCH"
		}
		fmt.Fprintf(&out, "messages: sent %d, consumed %d of %d expected: %s\n", ledger.MessagesSent,
			ledger.MessagesConsumed, ledger.MessagesExpected, verdict)
	}
	if report.Run.TruncatedByMaxDuration {
		out.WriteString("stopped early by --max-duration\n")
	}
	if report.Run.Error != "" {
		fmt.Fprintf(&out, "ERROR: %s\n", report.Run.Error)
	}
	if directory != "" {
		fmt.Fprintf(&out, "results: %s\n", directory)
	}
	_, _ = io.WriteString(w, out.String()) // stdout gone: nothing to do
}

func row(out *strings.Builder, name string, megabytes, messages, wall float64, total uint64, latency LatencySummary) {
	fmt.Fprintf(out, "%-24s %10.1f %12.0f %10.1f %12d %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f\n", name,
		megabytes, messages, wall, total, latency.P50Ms, latency.P90Ms, latency.P95Ms, latency.P99Ms,
		latency.P999Ms, latency.P9999, latency.MaxMs, latency.MeanMs)
}
