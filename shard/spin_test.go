package shard

import (
	"bytes"
	"context"
	"os"
	"os/signal"
	"syscall"
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

// TestRunUntilSignal: SIGTERM to the process makes RunUntilSignal drain
// and stop the runtime, answering the request in flight first.
func TestRunUntilSignal(t *testing.T) {
	server := startEcho(t, Options{Backend: BackendEpoll}, 50*time.Millisecond)
	conn := server.dial(t)
	frame := makeFrame(100, 3)
	if _, err := conn.Write(frame); err != nil {
		t.Fatal(err)
	}
	waitFrames(t, server.runtime, 1)
	// The test's own registration keeps SIGTERM from killing the process;
	// the signal repeats until RunUntilSignal, registered at some point, sees one.
	guard := make(chan os.Signal, 16)
	signal.Notify(guard, syscall.SIGTERM)
	defer signal.Stop(guard)
	result := make(chan error, 1)
	go func() { result <- server.runtime.RunUntilSignal(10 * time.Second) }()
	stop, stopped := make(chan struct{}), make(chan struct{})
	defer func() {
		close(stop)
		<-stopped // no SIGTERM may follow the guard's removal
	}()
	go func() {
		defer close(stopped)
		for ticker := time.NewTicker(20 * time.Millisecond); ; {
			_ = syscall.Kill(os.Getpid(), syscall.SIGTERM) // to ourselves: cannot fail
			select {
			case <-stop:
				ticker.Stop()
				return
			case <-ticker.C:
			}
		}
	}()
	if got, err := readFrame(conn, make([]byte, len(frame))); err != nil || !bytes.Equal(got, frame) {
		t.Fatalf("request in flight at SIGTERM not answered: %v", err)
	}
	if err := <-result; err != nil {
		t.Fatalf("RunUntilSignal: %v", err)
	}
	select {
	case <-server.runtime.Done():
	default:
		t.Fatal("runtime still running after RunUntilSignal returned")
	}
}
