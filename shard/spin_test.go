package shard

import (
	"context"
	"testing"
	"time"
)

// TestSpinningShards: with Options.Spin the shards poll before they sleep;
// echoes still arrive, and a shutdown whose wake-up lands while a shard
// spins (and so is consumed by a poll) still stops every shard.
func TestSpinningShards(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		for range 5 {
			server := startEcho(t, Options{Backend: backend, Spin: 50 * time.Microsecond}, 0)
			roundTrips(t, server.dial(t), [][]byte{makeFrame(1<<20, 1), makeFrame(10, 2)})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := server.runtime.Shutdown(ctx)
			cancel()
			if err != nil {
				t.Fatalf("shutdown of spinning shards: %v", err)
			}
		}
	})
}
