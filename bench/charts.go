package bench

import (
	"fmt"
	"io"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/components"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/whippetio/whippet/internal/invariant"
)

// Chart file names of a run directory.
const (
	ThroughputChartFile   = "throughput.html"
	LatencyChartFile      = "latency.html"
	DistributionChartFile = "latency_distribution.html"
)

// chartLine is one named series of a chart.
type chartLine struct {
	name   string
	points []Point
}

// WriteThroughputChart writes MB/s and msg/s over time: each role's
// average, then each actor.
func WriteThroughputChart(w io.Writer, report *Report) error {
	page := components.NewPage().SetPageTitle("Throughput: " + report.Params.PrettyName)
	megabytes, messages := throughputLines(report)
	page.AddCharts(
		lineChart("Throughput (MB/s)", report.Params.PrettyName, "MB/s", megabytes),
		lineChart("Throughput (msg/s)", report.Params.PrettyName, "msg/s", messages),
	)
	return page.Render(w)
}

// WriteLatencyChart writes per-bucket mean latency over time.
func WriteLatencyChart(w io.Writer, report *Report) error {
	page := components.NewPage().SetPageTitle("Latency: " + report.Params.PrettyName)
	var lines []chartLine
	for _, group := range report.GroupMetrics {
		lines = append(lines, chartLine{"average " + group.Summary.Kind, group.Latency.Points})
	}
	for _, actor := range report.IndividualMetrics {
		lines = append(lines, chartLine{actorLabel(&actor.Summary), actor.Latency.Points})
	}
	page.AddCharts(lineChart("Latency (ms, mean per bucket)", report.Params.PrettyName, "ms", lines))
	return page.Render(w)
}

// WriteDistributionChart writes each role's pooled latency distribution.
func WriteDistributionChart(w io.Writer, report *Report) error {
	page := components.NewPage().SetPageTitle("Latency distribution: " + report.Params.PrettyName)
	for _, group := range report.GroupMetrics {
		if group.Distribution == nil {
			continue
		}
		points := make([]Point, len(group.Distribution.Bins))
		for index, bin := range group.Distribution.Bins {
			points[index] = Point{TimeS: bin.EdgeMs, Value: bin.Density}
		}
		tail := group.Distribution.Percentiles
		subtitle := fmt.Sprintf("p05 %.3f ms · p50 %.3f ms · p95 %.3f ms · p99 %.3f ms", tail.P05Ms, tail.P50Ms,
			tail.P95Ms, tail.P99Ms)
		chart := lineChart("Latency distribution: "+group.Summary.Kind, subtitle, "density",
			[]chartLine{{group.Summary.Kind, points}})
		chart.SetGlobalOptions(charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "ms"}))
		page.AddCharts(chart)
	}
	return page.Render(w)
}

func throughputLines(report *Report) (megabytes, messages []chartLine) {
	for _, group := range report.GroupMetrics {
		megabytes = append(megabytes, chartLine{"average " + group.Summary.Kind, group.ThroughputMB.Points})
		messages = append(messages, chartLine{"average " + group.Summary.Kind, group.ThroughputMs.Points})
	}
	for _, actor := range report.IndividualMetrics {
		megabytes = append(megabytes, chartLine{actorLabel(&actor.Summary), actor.ThroughputMB.Points})
		messages = append(messages, chartLine{actorLabel(&actor.Summary), actor.ThroughputMs.Points})
	}
	return megabytes, messages
}

func actorLabel(summary *ActorSummary) string {
	return fmt.Sprintf("%s %d", summary.ActorKind, summary.ActorID)
}

// lineChart draws lines on numeric axes, each downsampled to
// ChartPointsMax points.
func lineChart(title, subtitle, unit string, lines []chartLine) *charts.Line {
	chart := charts.NewLine()
	chart.SetGlobalOptions(
		charts.WithInitializationOpts(opts.Initialization{Width: "1200px", Height: "600px"}),
		charts.WithTitleOpts(opts.Title{Title: title, Subtitle: subtitle}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "scroll", Top: "bottom"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "s"}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: unit}),
		charts.WithDataZoomOpts(opts.DataZoom{Type: "inside"}, opts.DataZoom{Type: "slider"}),
	)
	for _, line := range lines {
		sampled := downsample(line.points, ChartPointsMax)
		data := make([]opts.LineData, len(sampled))
		for index, point := range sampled {
			data[index] = opts.LineData{Value: []float64{point.TimeS, point.Value}}
		}
		chart.AddSeries(line.name, data, charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}))
	}
	return chart
}

// downsample keeps at most threshold points with Largest-Triangle-Three-
// Buckets: first and last kept, and in each bucket the point that spans
// the largest triangle with the previous pick and the next bucket's mean.
func downsample(points []Point, threshold int) []Point {
	if threshold < 3 || len(points) <= threshold {
		return points
	}
	sampled := make([]Point, 0, threshold)
	sampled = append(sampled, points[0])
	every := float64(len(points)-2) / float64(threshold-2)
	previous := 0
	for bucket := range threshold - 2 {
		start := int(float64(bucket)*every) + 1
		end := min(int(float64(bucket+1)*every)+1, len(points)-1)
		nextEnd := min(int(float64(bucket+2)*every)+1, len(points))
		var meanTime, meanValue float64
		for _, point := range points[end:nextEnd] {
			meanTime += point.TimeS
			meanValue += point.Value
		}
		count := float64(max(nextEnd-end, 1))
		meanTime, meanValue = meanTime/count, meanValue/count
		best, bestArea := start, -1.0
		for index := start; index < end; index++ {
			area := math.Abs((points[previous].TimeS-meanTime)*(points[index].Value-points[previous].Value) -
				(points[previous].TimeS-points[index].TimeS)*(meanValue-points[previous].Value))
			if area > bestArea {
				best, bestArea = index, area
			}
		}
		sampled = append(sampled, points[best])
		previous = best
	}
	sampled = append(sampled, points[len(points)-1])
	invariant.Assert(len(sampled) <= threshold, "downsampling keeps at most threshold points")
	return sampled
}
