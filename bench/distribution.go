package bench

import "math"

// Distribution is the pooled latency distribution of a role: a histogram
// clamped at DistributionClampP99 × P99, a log-normal fit and percentiles.
type Distribution struct {
	Bins        []Bin            `json:"bins"`
	LogNormal   LogNormal        `json:"log_normal_params"`
	Percentiles DistributionTail `json:"percentiles"`
}

// Bin is one histogram bin: its lower edge and its probability density
// (per ms), so the bins integrate to the share of samples below the clamp.
type Bin struct {
	EdgeMs  float64 `json:"edge_ms"`
	Density float64 `json:"density"`
}

// LogNormal holds the mean and standard deviation of ln(latency in ms).
type LogNormal struct {
	Mu    float64 `json:"mu"`
	Sigma float64 `json:"sigma"`
}

// DistributionTail holds pooled interpolated percentiles in ms.
type DistributionTail struct {
	P05Ms float64 `json:"p05_ms"`
	P50Ms float64 `json:"p50_ms"`
	P95Ms float64 `json:"p95_ms"`
	P99Ms float64 `json:"p99_ms"`
}

// distribution builds the distribution of sorted µs samples (nil if none).
func distribution(sorted []float64) *Distribution {
	if len(sorted) == 0 {
		return nil
	}
	ms := func(percentile float64) float64 { return percentileLinear(sorted, percentile) / 1000 }
	result := &Distribution{Percentiles: DistributionTail{P05Ms: ms(5), P50Ms: ms(50), P95Ms: ms(95), P99Ms: ms(99)}}
	upper := DistributionClampP99 * result.Percentiles.P99Ms
	lower := sorted[0] / 1000
	if upper <= lower {
		upper = lower + 0.001
	}
	width := (upper - lower) / DistributionBins
	counts := make([]float64, DistributionBins)
	var logSum, logSquares, positives float64
	for _, micros := range sorted {
		value := micros / 1000
		if value <= upper {
			counts[min(int((value-lower)/width), DistributionBins-1)]++
		}
		if value > 0 {
			logSum += math.Log(value)
			logSquares += math.Log(value) * math.Log(value)
			positives++
		}
	}
	for index, count := range counts {
		result.Bins = append(result.Bins, Bin{EdgeMs: lower + float64(index)*width,
			Density: count / (float64(len(sorted)) * width)})
	}
	if positives > 0 {
		mu := logSum / positives
		result.LogNormal = LogNormal{Mu: mu, Sigma: math.Sqrt(max(logSquares/positives-mu*mu, 0))}
	}
	return result
}
