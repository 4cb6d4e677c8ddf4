package bench

import (
	"slices"
	"time"

	"github.com/whippetio/whippet/internal/invariant"
)

// buckets accumulates one actor's traffic and latencies into fixed-width
// time buckets, as iggy-bench's time series do: the bytes and messages of a
// record are spread over the buckets its interval overlaps, in proportion;
// a latency lands in the bucket of the record's end.
type buckets struct {
	width        time.Duration
	bytes        []float64
	messages     []float64
	latencySum   []float64 // µs
	latencyCount []uint32
	truncated    bool
}

func newBuckets(width time.Duration) buckets {
	invariant.Assert(width > 0, "bucket width must be positive")
	return buckets{width: width}
}

// grow makes room for bucket index, or reports that the series is full.
func (b *buckets) grow(index int) bool {
	if index >= SeriesBucketsMax {
		b.truncated = true
		return false
	}
	for len(b.bytes) <= index {
		b.bytes = append(b.bytes, 0)
		b.messages = append(b.messages, 0)
		b.latencySum = append(b.latencySum, 0)
		b.latencyCount = append(b.latencyCount, 0)
	}
	return true
}

// addTraffic spreads bytes and messages over [from, to).
func (b *buckets) addTraffic(from, to time.Duration, bytes, messages float64) {
	invariant.Assert(from <= to, "a traffic interval must not end before it starts")
	if to == from {
		index := int(to / b.width)
		if b.grow(index) {
			b.bytes[index] += bytes
			b.messages[index] += messages
		}
		return
	}
	span := float64(to - from)
	for start := from; start < to; {
		index := int(start / b.width)
		end := min(time.Duration(index+1)*b.width, to)
		if !b.grow(index) {
			return
		}
		share := float64(end-start) / span
		b.bytes[index] += bytes * share
		b.messages[index] += messages * share
		start = end
	}
}

// addLatency counts one latency in the bucket of at.
func (b *buckets) addLatency(at, latency time.Duration) {
	index := int(at / b.width)
	if b.grow(index) {
		b.latencySum[index] += float64(latency.Microseconds())
		b.latencyCount[index]++
	}
}

// Point is one value of a time series.
type Point struct {
	TimeS float64 `json:"time_s"`
	Value float64 `json:"value"`
}

// Series is a time series as report.json holds it.
type Series struct {
	Kind   string  `json:"kind"`
	Points []Point `json:"points"`
}

// Series kinds, as report.json spells them.
const (
	SeriesThroughputMB  = "ThroughputMB"
	SeriesThroughputMsg = "ThroughputMsg"
	SeriesLatency       = "Latency"
)

// throughput returns MB/s and msg/s per bucket up to total (the last bucket
// may be partial and is scaled by the part of it the run covered).
func (b *buckets) throughput(total time.Duration) (megabytes, messages []Point) {
	count := min(len(b.bytes), int((total+b.width-1)/b.width))
	for index := range count {
		start := time.Duration(index) * b.width
		covered := min(b.width, total-start).Seconds()
		if covered <= 0 {
			break
		}
		at := (start + b.width).Seconds()
		megabytes = append(megabytes, Point{TimeS: at, Value: b.bytes[index] / 1e6 / covered})
		messages = append(messages, Point{TimeS: at, Value: b.messages[index] / covered})
	}
	return megabytes, messages
}

// latencies returns the mean latency (ms) of each bucket that has one.
func (b *buckets) latencies() []Point {
	var points []Point
	for index, count := range b.latencyCount {
		if count == 0 {
			continue
		}
		at := (time.Duration(index+1) * b.width).Seconds()
		points = append(points, Point{TimeS: at, Value: b.latencySum[index] / float64(count) / 1000})
	}
	return points
}

// movingAverage smooths points with a trailing simple moving average of
// window points (fewer at the start).
func movingAverage(points []Point, window int) []Point {
	invariant.Assert(window >= 1, "a moving average needs a window of at least one")
	smoothed := make([]Point, len(points))
	var sum float64
	for index, point := range points {
		sum += point.Value
		if index >= window {
			sum -= points[index-window].Value
		}
		smoothed[index] = Point{TimeS: point.TimeS, Value: sum / float64(min(index+1, window))}
	}
	return smoothed
}

// meanOf is the mean of the points' values.
func meanOf(points []Point) float64 {
	if len(points) == 0 {
		return 0
	}
	var sum float64
	for _, point := range points {
		sum += point.Value
	}
	return sum / float64(len(points))
}

// values returns the points' values.
func values(points []Point) []float64 {
	out := make([]float64, len(points))
	for index, point := range points {
		out[index] = point.Value
	}
	return out
}

// averageSeries averages several actors' series at each bucket time, over
// the actors that have a point there (iggy-bench's group series).
func averageSeries(all [][]Point) []Point {
	type accumulator struct {
		sum   float64
		count int
	}
	byTime := map[float64]*accumulator{}
	for _, points := range all {
		for _, point := range points {
			entry := byTime[point.TimeS]
			if entry == nil {
				entry = &accumulator{}
				byTime[point.TimeS] = entry
			}
			entry.sum += point.Value
			entry.count++
		}
	}
	times := make([]float64, 0, len(byTime))
	for at := range byTime {
		times = append(times, at)
	}
	slices.Sort(times)
	average := make([]Point, len(times))
	for index, at := range times {
		average[index] = Point{TimeS: at, Value: byTime[at].sum / float64(byTime[at].count)}
	}
	return average
}
