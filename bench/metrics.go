package bench

import (
	"slices"
	"time"
)

// ActorSummary is one actor's figures. The fields named as iggy-bench
// names them are computed as iggy-bench computes them (throughput = mean of
// the SMA-smoothed series; percentiles interpolated over raw samples;
// min, max and std dev over the per-bucket latency series). Latency holds
// the HdrHistogram figures over every sample, the honest tail; the wall
// throughput is payload over the actor's measured time.
type ActorSummary struct {
	BenchmarkKind string  `json:"benchmark_kind"`
	ActorKind     string  `json:"actor_kind"`
	ActorID       int     `json:"actor_id"`
	TotalTimeSecs float64 `json:"total_time_secs"`
	Totals
	ThroughputMBps      float64        `json:"throughput_megabytes_per_second"`
	ThroughputMsgps     float64        `json:"throughput_messages_per_second"`
	P50Ms               float64        `json:"p50_latency_ms"`
	P90Ms               float64        `json:"p90_latency_ms"`
	P95Ms               float64        `json:"p95_latency_ms"`
	P99Ms               float64        `json:"p99_latency_ms"`
	P999Ms              float64        `json:"p999_latency_ms"`
	P9999Ms             float64        `json:"p9999_latency_ms"`
	AvgMs               float64        `json:"avg_latency_ms"`
	MedianMs            float64        `json:"median_latency_ms"`
	MinMs               float64        `json:"min_latency_ms"`
	MaxMs               float64        `json:"max_latency_ms"`
	StdDevMs            float64        `json:"std_dev_latency_ms"`
	WallThroughputMBps  float64        `json:"wall_throughput_megabytes_per_second"`
	WallThroughputMsgps float64        `json:"wall_throughput_messages_per_second"`
	LatencyBasis        string         `json:"latency_basis"`
	Latency             LatencySummary `json:"latency"`
	SeriesTruncated     bool           `json:"series_truncated,omitempty"`
}

// ActorMetrics is one actor's summary and series.
type ActorMetrics struct {
	Summary      ActorSummary `json:"summary"`
	ThroughputMB Series       `json:"throughput_mb_ts"`
	ThroughputMs Series       `json:"throughput_msg_ts"`
	Latency      Series       `json:"latency_ts"`
	samples      []float64    // µs, sorted; pooled into the group distribution
	recorder     *Recorder
}

// actorMetrics computes an actor's figures from its recorder.
func actorMetrics(recorder *Recorder, kind Kind, plan ActorPlan, basis string, window int) ActorMetrics {
	recorder.mu.Lock()
	defer recorder.mu.Unlock()
	total := recorder.last
	megabytes, messages := recorder.buckets.throughput(total)
	latencies := recorder.buckets.latencies()
	samples := slices.Clone(recorder.samples)
	slices.Sort(samples)
	summary := ActorSummary{
		BenchmarkKind: kind.Enum(), ActorKind: plan.Kind.String(), ActorID: plan.ID,
		TotalTimeSecs: total.Seconds(), Totals: recorder.totals,
		ThroughputMBps:  meanOf(movingAverage(megabytes, window)),
		ThroughputMsgps: meanOf(movingAverage(messages, window)),
		LatencyBasis:    basis, Latency: summarize(recorder.histogram),
		SeriesTruncated: recorder.buckets.truncated,
	}
	if total > 0 {
		summary.WallThroughputMBps = float64(recorder.totals.UserDataBytes) / 1e6 / total.Seconds()
		summary.WallThroughputMsgps = float64(recorder.totals.Messages) / total.Seconds()
	}
	fillPercentiles(&summary, samples)
	summary.MinMs, summary.MaxMs = minMax(values(latencies))
	_, summary.StdDevMs = meanStdDev(values(latencies))
	return ActorMetrics{
		Summary:      summary,
		ThroughputMB: Series{Kind: SeriesThroughputMB, Points: megabytes},
		ThroughputMs: Series{Kind: SeriesThroughputMsg, Points: messages},
		Latency:      Series{Kind: SeriesLatency, Points: latencies},
		samples:      samples, recorder: recorder,
	}
}

// fillPercentiles sets the interpolated percentiles (ms) from sorted µs.
func fillPercentiles(summary *ActorSummary, sorted []float64) {
	ms := func(percentile float64) float64 { return percentileLinear(sorted, percentile) / 1000 }
	summary.P50Ms, summary.P90Ms, summary.P95Ms = ms(50), ms(90), ms(95)
	summary.P99Ms, summary.P999Ms, summary.P9999Ms = ms(99), ms(99.9), ms(99.99)
	summary.MedianMs = summary.P50Ms
	mean, _ := meanStdDev(sorted)
	summary.AvgMs = mean / 1000
}

// GroupSummary aggregates the actors of one role as iggy-bench does: total
// throughput is the sum, averages are means over actors (average_pXX is the
// mean of the actors' percentiles, not a pooled one). Latency is the
// HdrHistogram of every sample of every actor, pooled.
type GroupSummary struct {
	Kind                string         `json:"kind"`
	Actors              int            `json:"actors"`
	TotalMBps           float64        `json:"total_throughput_megabytes_per_second"`
	TotalMsgps          float64        `json:"total_throughput_messages_per_second"`
	AverageMBps         float64        `json:"average_throughput_megabytes_per_second"`
	AverageMsgps        float64        `json:"average_throughput_messages_per_second"`
	AverageP50Ms        float64        `json:"average_p50_latency_ms"`
	AverageP90Ms        float64        `json:"average_p90_latency_ms"`
	AverageP95Ms        float64        `json:"average_p95_latency_ms"`
	AverageP99Ms        float64        `json:"average_p99_latency_ms"`
	AverageP999Ms       float64        `json:"average_p999_latency_ms"`
	AverageP9999Ms      float64        `json:"average_p9999_latency_ms"`
	AverageMs           float64        `json:"average_latency_ms"`
	AverageMedianMs     float64        `json:"average_median_latency_ms"`
	MinMs               float64        `json:"min_latency_ms"`
	MaxMs               float64        `json:"max_latency_ms"`
	StdDevMs            float64        `json:"std_dev_latency_ms"`
	WallThroughputMBps  float64        `json:"wall_throughput_megabytes_per_second"`
	WallThroughputMsgps float64        `json:"wall_throughput_messages_per_second"`
	WallTimeSecs        float64        `json:"wall_time_secs"`
	Totals              Totals         `json:"totals"`
	Latency             LatencySummary `json:"latency"`
}

// GroupMetrics is one role's summary, averaged series and distribution.
type GroupMetrics struct {
	Summary      GroupSummary  `json:"summary"`
	ThroughputMB Series        `json:"avg_throughput_mb_ts"`
	ThroughputMs Series        `json:"avg_throughput_msg_ts"`
	Latency      Series        `json:"avg_latency_ts"`
	Distribution *Distribution `json:"latency_distribution,omitempty"`
}

// groupMetrics aggregates actors (at least one) under the name kind.
func groupMetrics(kind string, actors []ActorMetrics) GroupMetrics {
	histogram := newHistogram()
	var summary GroupSummary
	var megabytes, messages, latencies [][]Point
	var pooled []float64
	var longest time.Duration
	for index := range actors {
		actor := &actors[index]
		addActor(&summary, &actor.Summary)
		histogram.Merge(actor.recorder.histogram)
		megabytes = append(megabytes, actor.ThroughputMB.Points)
		messages = append(messages, actor.ThroughputMs.Points)
		latencies = append(latencies, actor.Latency.Points)
		pooled = append(pooled, actor.samples...)
		longest = max(longest, time.Duration(actor.Summary.TotalTimeSecs*float64(time.Second)))
	}
	count := float64(len(actors))
	summary.Kind, summary.Actors = kind, len(actors)
	summary.AverageMBps, summary.AverageMsgps = summary.TotalMBps/count, summary.TotalMsgps/count
	for _, field := range []*float64{&summary.AverageP50Ms, &summary.AverageP90Ms, &summary.AverageP95Ms,
		&summary.AverageP99Ms, &summary.AverageP999Ms, &summary.AverageP9999Ms, &summary.AverageMs,
		&summary.AverageMedianMs} {
		*field /= count
	}
	averageLatency := averageSeries(latencies)
	summary.MinMs, summary.MaxMs = minMax(values(averageLatency))
	_, summary.StdDevMs = meanStdDev(values(averageLatency))
	summary.WallTimeSecs = longest.Seconds()
	if longest > 0 {
		summary.WallThroughputMBps = float64(summary.Totals.UserDataBytes) / 1e6 / longest.Seconds()
		summary.WallThroughputMsgps = float64(summary.Totals.Messages) / longest.Seconds()
	}
	summary.Latency = summarize(histogram)
	slices.Sort(pooled)
	return GroupMetrics{
		Summary:      summary,
		ThroughputMB: Series{Kind: SeriesThroughputMB, Points: averageSeries(megabytes)},
		ThroughputMs: Series{Kind: SeriesThroughputMsg, Points: averageSeries(messages)},
		Latency:      Series{Kind: SeriesLatency, Points: averageLatency},
		Distribution: distribution(pooled),
	}
}

// addActor adds an actor's figures to the group's sums.
func addActor(group *GroupSummary, actor *ActorSummary) {
	group.TotalMBps += actor.ThroughputMBps
	group.TotalMsgps += actor.ThroughputMsgps
	group.AverageP50Ms += actor.P50Ms
	group.AverageP90Ms += actor.P90Ms
	group.AverageP95Ms += actor.P95Ms
	group.AverageP99Ms += actor.P99Ms
	group.AverageP999Ms += actor.P999Ms
	group.AverageP9999Ms += actor.P9999Ms
	group.AverageMs += actor.AvgMs
	group.AverageMedianMs += actor.MedianMs
	group.Totals.Messages += actor.Messages
	group.Totals.Batches += actor.Batches
	group.Totals.UserDataBytes += actor.UserDataBytes
	group.Totals.TotalBytes += actor.TotalBytes
}
