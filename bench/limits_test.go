package bench

import (
	"testing"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// TestLimits asserts the relations between the named limits, each with the
// reason it must hold.
func TestLimits(t *testing.T) {
	checks := []struct {
		ok  bool
		why string
	}{
		{BatchBytesMax+MessagesPerBatchMax*wire.MessageHeaderBytes+wire.BatchHeaderBytes < wire.BodyBytesMax,
			"the largest batch with its headers fits one request frame"},
		{MessagesPerBatchMax <= wire.MessagesPerBatchMax, "a batch never holds more messages than the protocol allows"},
		{MessageSizeMax <= wire.PayloadBytesMax, "a payload never exceeds the protocol's cap"},
		{MessageSizeMax <= PayloadPoolBytes, "every payload is a slice of the pool"},
		{MessageSizeDefault*MessagesPerBatchDefault <= BatchBytesMax, "the default batch is valid"},
		{PartitionsMax <= wire.PartitionsPerRequestMax, "a topic's partitions are created in one request"},
		{BalancedPartitionsDefault <= PartitionsMax, "the default layout is valid"},
		{PinnedStreamsDefault <= StreamsMax && ProducersDefault <= ActorsMax && ConsumersDefault <= ActorsMax,
			"the default actor counts are valid"},
		{OpenLoopInFlightMax <= client.PipelineDepthMax, "an open-loop actor's batches fit the client's pipeline"},
		{OpenLoopInFlightDefault >= 1 && OpenLoopInFlightDefault <= OpenLoopInFlightMax, "the default in-flight is valid"},
		{SamplingTimeDefault >= SamplingTimeMin, "the default bucket width is valid"},
		{MovingAverageWindowDefault <= MovingAverageWindowMax, "the default SMA window is valid"},
		{HistogramLatencyMinMicros >= 1 && HistogramLatencyMaxMicros > HistogramLatencyMinMicros,
			"the histogram range is positive and non-empty"},
		{HistogramSignificantDigits >= 1 && HistogramSignificantDigits <= 5, "HdrHistogram accepts 1..5 digits"},
		{ChartPointsMax >= 3, "LTTB keeps the first and last point plus at least one"},
		{DistributionBins >= 1 && DistributionClampP99 >= 1, "the distribution covers at least the P99"},
		{IdlePollBackoff < ConsumerStallMax, "a consumer polls many times before it is called stalled"},
		{ServerProbeInterval < ServerStartTimeout, "a local server is probed more than once"},
		{HeartbeatInterval < ConsumerStallMax, "a waiting reader pings before it could be called stalled"},
		{ProgressInterval < SamplingTimeDefault*100, "the bar redraws several times a second"},
	}
	for _, check := range checks {
		if !check.ok {
			t.Errorf("limit relation broken: %s", check.why)
		}
	}
}
