package bench

import (
	"math"
	"testing"
	"time"
)

func near(got, want, tolerance float64) bool { return math.Abs(got-want) <= tolerance }

// TestPercentileLinear checks iggy-bench's rank = p/100 × (n−1) against
// hand-computed values.
func TestPercentileLinear(t *testing.T) {
	sorted := []float64{10, 20, 30, 40, 50}
	rows := map[float64]float64{0: 10, 50: 30, 90: 46, 99: 49.6, 100: 50, 25: 20}
	for percentile, want := range rows {
		if got := percentileLinear(sorted, percentile); !near(got, want, 1e-9) {
			t.Errorf("p%v = %v, want %v", percentile, got, want)
		}
	}
	if percentileLinear(nil, 50) != 0 || percentileLinear([]float64{7}, 99) != 7 {
		t.Error("empty and single-sample percentiles")
	}
	mean, std := meanStdDev([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	if mean != 5 || std != 2 {
		t.Errorf("mean %v std %v, want 5 and 2", mean, std)
	}
}

// TestSummarizeHistogram checks the HdrHistogram figures on 1..1000 ms.
func TestSummarizeHistogram(t *testing.T) {
	histogram := newHistogram()
	for value := 1; value <= 1000; value++ {
		recordLatency(histogram, time.Duration(value)*time.Millisecond)
	}
	recordLatency(histogram, 0)             // clamped to the minimum, not lost
	recordLatency(histogram, 200*time.Hour) // clamped to the maximum, not lost
	summary := summarize(histogram)
	if summary.Count != 1002 {
		t.Fatalf("count %d, want 1002 (out-of-range samples are clamped, not dropped)", summary.Count)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"p50", summary.P50Ms, 500}, {"p90", summary.P90Ms, 900}, {"p95", summary.P95Ms, 950},
		{"p99", summary.P99Ms, 990}, {"min", summary.MinMs, 0.001},
		{"max", summary.MaxMs, float64(HistogramLatencyMaxMicros) / 1000},
	}
	for _, check := range checks {
		if !near(check.got, check.want, check.want*0.002+0.001) {
			t.Errorf("%s = %v, want %v within 0.2%%", check.name, check.got, check.want)
		}
	}
	if empty := summarize(newHistogram()); empty.Count != 0 || empty.MaxMs != 0 {
		t.Errorf("empty histogram: %+v", empty)
	}
}

// TestBucketsSpreadTraffic checks that a record's bytes are spread over
// the buckets its interval overlaps, in proportion.
func TestBucketsSpreadTraffic(t *testing.T) {
	b := newBuckets(10 * time.Millisecond)
	b.addTraffic(5*time.Millisecond, 25*time.Millisecond, 2000, 20)
	want := []float64{500, 1000, 500}
	for index, bytes := range want {
		if !near(b.bytes[index], bytes, 1e-6) || !near(b.messages[index], bytes/100, 1e-9) {
			t.Errorf("bucket %d: %v bytes %v messages, want %v", index, b.bytes[index], b.messages[index], bytes)
		}
	}
	megabytes, messages := b.throughput(25 * time.Millisecond)
	if len(megabytes) != 3 || !near(megabytes[0].Value, 500/1e6/0.01, 1e-9) || !near(messages[2].Value, 5/0.005, 1e-9) {
		t.Errorf("throughput %v %v (the last bucket is scaled by the 5 ms it covers)", megabytes, messages)
	}
	b.addLatency(12*time.Millisecond, 2*time.Millisecond)
	b.addLatency(18*time.Millisecond, 4*time.Millisecond)
	latencies := b.latencies()
	if len(latencies) != 1 || latencies[0].Value != 3 || !near(latencies[0].TimeS, 0.02, 1e-12) {
		t.Errorf("latencies %v, want one bucket of 3 ms ending at 20 ms", latencies)
	}
}

func TestMovingAverageAndAverageSeries(t *testing.T) {
	points := []Point{{1, 2}, {2, 4}, {3, 6}, {4, 8}}
	smoothed := movingAverage(points, 2)
	want := []float64{2, 3, 5, 7}
	for index := range want {
		if smoothed[index].Value != want[index] {
			t.Errorf("SMA[%d] = %v, want %v", index, smoothed[index].Value, want[index])
		}
	}
	average := averageSeries([][]Point{{{1, 2}, {3, 4}}, {{1, 4}, {2, 10}}})
	wantPoints := []Point{{1, 3}, {2, 10}, {3, 4}}
	if len(average) != len(wantPoints) {
		t.Fatalf("average %v, want %v", average, wantPoints)
	}
	for index := range wantPoints {
		if average[index] != wantPoints[index] {
			t.Errorf("average %v, want %v (aligned by time, over the actors present)", average, wantPoints)
		}
	}
}

// TestActorAndGroupMetrics records a known load into recorders and checks
// every figure the report derives from it.
func TestActorAndGroupMetrics(t *testing.T) {
	start := time.Unix(1000, 0)
	first, second := NewRecorder(10*time.Millisecond), NewRecorder(10*time.Millisecond)
	first.Start(start)
	second.Start(start)
	// 100 batches of 1000 messages × 1000 B, one every 10 ms: 100 MB/s.
	for index := 1; index <= 100; index++ {
		at := start.Add(time.Duration(index) * 10 * time.Millisecond)
		first.Batch(at, time.Duration(index)*time.Millisecond, 1000, 1_000_000, batchWireBytes(1000, 1_000_000))
		second.Batch(at, 2*time.Millisecond, 1000, 1_000_000, batchWireBytes(1000, 1_000_000))
	}
	plan := ActorPlan{ID: 1, Kind: ActorProducer}
	metrics := actorMetrics(first, KindPinnedProducer, plan, "send", 20)
	summary := metrics.Summary
	if summary.Messages != 100_000 || summary.Batches != 100 || summary.UserDataBytes != 100_000_000 ||
		summary.TotalBytes != 100*batchWireBytes(1000, 1_000_000) {
		t.Errorf("totals %+v", summary.Totals)
	}
	if !near(summary.ThroughputMBps, 100, 0.5) || !near(summary.WallThroughputMBps, 100, 1e-9) ||
		!near(summary.ThroughputMsgps, 100_000, 500) {
		t.Errorf("throughput %v MB/s (SMA) %v MB/s (wall) %v msg/s, want 100 MB/s", summary.ThroughputMBps,
			summary.WallThroughputMBps, summary.ThroughputMsgps)
	}
	if !near(summary.P50Ms, 50.5, 1e-9) || !near(summary.P99Ms, 99.01, 1e-9) || summary.AvgMs != 50.5 {
		t.Errorf("p50 %v p99 %v avg %v, want 50.5, 99.01, 50.5 (interpolated)", summary.P50Ms, summary.P99Ms, summary.AvgMs)
	}
	if summary.Latency.Count != 100 || !near(summary.Latency.MaxMs, 100, 0.1) || !near(summary.Latency.MinMs, 1, 0.001) {
		t.Errorf("HdrHistogram %+v", summary.Latency)
	}
	group := groupMetrics("producers", []ActorMetrics{metrics, actorMetrics(second, KindPinnedProducer,
		ActorPlan{ID: 2, Kind: ActorProducer}, "send", 20)})
	if group.Summary.Actors != 2 || !near(group.Summary.TotalMBps, 2*summary.ThroughputMBps, 1e-6) ||
		!near(group.Summary.AverageP50Ms, (50.5+2)/2, 1e-9) || group.Summary.Latency.Count != 200 {
		t.Errorf("group %+v", group.Summary)
	}
	if group.Distribution == nil || len(group.Distribution.Bins) != DistributionBins {
		t.Fatalf("distribution %+v", group.Distribution)
	}
	var mass float64
	for _, bin := range group.Distribution.Bins {
		mass += bin.Density * (group.Distribution.Bins[1].EdgeMs - group.Distribution.Bins[0].EdgeMs)
	}
	if !near(mass, 1, 1e-9) {
		t.Errorf("distribution mass %v, want 1 (every sample is below 1.5 × P99)", mass)
	}
}
