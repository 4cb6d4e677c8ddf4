package bench

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// TestLargeRunAgainstBroker moves 300 MB per kind at the default sizes
// (1000 B × 1000 messages per batch) through the test broker: the ledger
// must stay exact at scale and every series must cover the run. It also
// shows the bench's own ceiling on this machine (a Go peer that keeps
// everything in memory), printed with -v.
func TestLargeRunAgainstBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("moves about a gigabyte: long mode only")
	}
	b := startBroker(t)
	for _, kind := range []Kind{KindPinnedProducer, KindPinnedProducerAndConsumer, KindEndToEndProducingConsumer} {
		config := DefaultConfig(kind)
		config.Producers, config.MessageBatches, config.ServerAddress, config.NoDelay = 1, 300, b.address(), true
		if kind.HasConsumers() && kind != KindEndToEndProducingConsumer {
			config.Consumers = 1
		}
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		result, err := Run(ctx, config, Environment{Stdout: &out, NoFiles: true})
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		t.Logf("\n%s", out.String())
		report := result.Report
		if !report.Accounting.Exact || report.Accounting.MessagesSent != 300_000 {
			t.Errorf("%s: ledger %+v", kind, report.Accounting)
		}
		for _, actor := range report.IndividualMetrics {
			points := actor.ThroughputMB.Points
			if len(points) == 0 {
				t.Fatalf("%s %s: no throughput series", kind, actor.Summary.ActorKind)
			}
			covered := points[len(points)-1].TimeS
			if covered < actor.Summary.TotalTimeSecs || covered > actor.Summary.TotalTimeSecs+0.011 {
				t.Errorf("%s %s: series ends at %vs, the actor ran %vs", kind, actor.Summary.ActorKind, covered,
					actor.Summary.TotalTimeSecs)
			}
		}
	}
}
