package bench

import (
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// LatencySummary is what an HdrHistogram of per-batch latencies says, in
// milliseconds: every sample counted, at three significant digits.
type LatencySummary struct {
	Count  int64   `json:"count"`
	MinMs  float64 `json:"min_ms"`
	MeanMs float64 `json:"mean_ms"`
	StdDev float64 `json:"std_dev_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P95Ms  float64 `json:"p95_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	P9999  float64 `json:"p9999_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// newHistogram returns a histogram sized by the package limits (µs).
func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistogramLatencyMinMicros, HistogramLatencyMaxMicros, HistogramSignificantDigits)
}

// recordLatency records d in µs, clamped into the histogram's range so an
// outlier is counted at the edge rather than lost.
func recordLatency(histogram *hdrhistogram.Histogram, d time.Duration) {
	micros := min(max(d.Microseconds(), HistogramLatencyMinMicros), HistogramLatencyMaxMicros)
	_ = histogram.RecordValue(micros) // within range by the clamp above
}

// summarize reads the figures out of a histogram of µs values.
func summarize(histogram *hdrhistogram.Histogram) LatencySummary {
	if histogram.TotalCount() == 0 {
		return LatencySummary{}
	}
	ms := func(micros int64) float64 { return float64(micros) / 1000 }
	return LatencySummary{
		Count:  histogram.TotalCount(),
		MinMs:  ms(histogram.Min()),
		MeanMs: histogram.Mean() / 1000,
		StdDev: histogram.StdDev() / 1000,
		P50Ms:  ms(histogram.ValueAtPercentile(50)),
		P90Ms:  ms(histogram.ValueAtPercentile(90)),
		P95Ms:  ms(histogram.ValueAtPercentile(95)),
		P99Ms:  ms(histogram.ValueAtPercentile(99)),
		P999Ms: ms(histogram.ValueAtPercentile(99.9)),
		P9999:  ms(histogram.ValueAtPercentile(99.99)),
		MaxMs:  ms(histogram.Max()),
	}
}

// percentileLinear is iggy-bench's percentile: linear interpolation
// between the closest ranks of sorted, rank = p/100 × (n−1).
func percentileLinear(sorted []float64, percentile float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := percentile / 100 * float64(len(sorted)-1)
	low := int(math.Floor(rank))
	high := int(math.Ceil(rank))
	if low == high {
		return sorted[low]
	}
	weight := rank - float64(low)
	return sorted[low]*(1-weight) + sorted[high]*weight
}

// meanStdDev returns the mean and population standard deviation.
func meanStdDev(values []float64) (mean, stdDev float64) {
	if len(values) == 0 {
		return 0, 0
	}
	for _, value := range values {
		mean += value
	}
	mean /= float64(len(values))
	for _, value := range values {
		stdDev += (value - mean) * (value - mean)
	}
	return mean, math.Sqrt(stdDev / float64(len(values)))
}

// minMax returns the smallest and largest value (0, 0 when empty).
func minMax(values []float64) (low, high float64) {
	if len(values) == 0 {
		return 0, 0
	}
	low, high = values[0], values[0]
	for _, value := range values {
		low, high = min(low, value), max(high, value)
	}
	return low, high
}
