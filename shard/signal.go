package shard

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// RunUntilSignal blocks until SIGINT or SIGTERM arrives (or the runtime
// stops on its own, e.g. after a fatal backend error), then shuts down
// gracefully, giving in-flight work up to grace to drain. It returns
// Shutdown's result, or the error that stopped the runtime. The main of a
// server calls it after Start.
func (rt *Runtime) RunUntilSignal(grace time.Duration) error {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	return rt.RunUntil(signals, grace)
}

// RunUntil is RunUntilSignal on a channel the caller registered, so a
// main can catch SIGINT/SIGTERM from before the runtime starts: a signal
// that arrives while the shards start still shuts them down gracefully.
func (rt *Runtime) RunUntil(signals <-chan os.Signal, grace time.Duration) error {
	select {
	case received := <-signals:
		rt.logger.Info("shard: shutting down", "signal", received.String(), "grace", grace.String())
	case <-rt.done:
		return rt.Err()
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return rt.Shutdown(ctx)
}
