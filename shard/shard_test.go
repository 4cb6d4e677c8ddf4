package shard

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("seed", 0, "seed for the randomized shard tests (0: time-based)")

func testSeed(t *testing.T) uint64 {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -seed %d)", seed, seed)
	return seed
}

// TestEchoRandomFrames: every frame of seeded random sizes (empty to 300
// KiB, so frames span receives and receives span frames) comes back intact
// and in order, on several connections at once.
func TestEchoRandomFrames(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		server := startEcho(t, Options{Backend: backend}, 0)
		if got := server.runtime.BackendName(); got != backend {
			t.Fatalf("runtime runs %s, want %s", got, backend)
		}
		random := rand.New(rand.NewPCG(testSeed(t), 1))
		var wait sync.WaitGroup
		for c := range 4 {
			frames := make([][]byte, 40)
			for i := range frames {
				size := random.IntN(300 << 10)
				if i%3 == 0 {
					size = random.IntN(64)
				}
				frames[i] = makeFrame(size, byte(c*40+i))
			}
			conn := server.dial(t)
			wait.Add(1)
			go func() {
				defer wait.Done()
				roundTrips(t, conn, frames)
			}()
		}
		wait.Wait()
	})
}

// TestEchoLargeFramesPartialWrites: 8 MiB frames overflow the socket
// buffers, so the shard must resend from where each partial send stopped.
func TestEchoLargeFramesPartialWrites(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		server := startEcho(t, Options{Backend: backend}, 0)
		conn := server.dial(t)
		frames := [][]byte{makeFrame(8<<20, 1), makeFrame(8<<20-3, 2), makeFrame(5, 3)}
		roundTrips(t, conn, frames)
		var partial, into uint64
		for _, sh := range server.runtime.Shards() {
			partial += sh.Stats().SendsPartial
			into += sh.Stats().RecvsInto
		}
		if partial == 0 {
			t.Fatal("no partial send seen while echoing 8 MiB frames")
		}
		if into == 0 {
			t.Fatal("8 MiB frames were never received straight into their buffers")
		}
	})
}

// TestPeerClosesMidFrame: a peer that leaves with half a header or half a
// body sent is closed cleanly and reported as ErrPeerClosedMidFrame; one
// that leaves between frames is a clean close (nil).
func TestPeerClosesMidFrame(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		server := startEcho(t, Options{Backend: backend}, 0)
		cases := []struct {
			name  string
			bytes []byte
			want  error
		}{
			{"half a header", []byte{10, 0}, ErrPeerClosedMidFrame},
			{"half a body", makeFrame(1000, 1)[:500], ErrPeerClosedMidFrame},
			{"half a large body", makeFrame(1<<20, 1)[:600<<10], ErrPeerClosedMidFrame},
			{"between frames", nil, nil},
		}
		for _, tc := range cases {
			conn := server.dial(t)
			roundTrips(t, conn, [][]byte{makeFrame(16, 9)})
			if len(tc.bytes) > 0 {
				if _, err := conn.Write(tc.bytes); err != nil {
					t.Fatal(err)
				}
			}
			if err := conn.Close(); err != nil {
				t.Fatal(err)
			}
			if got := server.nextClose(t); !errors.Is(got, tc.want) && got != tc.want {
				t.Fatalf("%s: close error %v, want %v", tc.name, got, tc.want)
			}
		}
		waitConnections(t, server.runtime, 0)
	})
}

// TestFrameTooLargeCloses: a header declaring more than frameBytesMax
// closes the connection with ErrFrameTooLarge before any body is read.
func TestFrameTooLargeCloses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		server := startEcho(t, Options{Backend: backend}, 0)
		conn := server.dial(t)
		header := makeFrame(0, 0)
		header[0], header[1], header[2], header[3] = 0xff, 0xff, 0xff, 0x7f
		if _, err := conn.Write(header); err != nil {
			t.Fatal(err)
		}
		if got := server.nextClose(t); !errors.Is(got, ErrFrameTooLarge) {
			t.Fatalf("close error %v, want ErrFrameTooLarge", got)
		}
		if _, err := conn.Read(make([]byte, 1)); err == nil {
			t.Fatal("connection still open after an oversized frame")
		}
	})
}

// TestInflightLimitPausesReading: a client pipelining far more frames than
// inflightRequestsMax, against replies that wait on a timer, gets every
// echo in order; the connection never holds more than the limit.
func TestInflightLimitPausesReading(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		server := startEcho(t, Options{Backend: backend}, time.Millisecond)
		conn := server.dial(t)
		frames := make([][]byte, 5*inflightRequestsMax)
		for i := range frames {
			frames[i] = makeFrame(100+i, byte(i))
		}
		roundTrips(t, conn, frames)
		var pauses uint64
		for _, sh := range server.runtime.Shards() {
			pauses += sh.Stats().Pauses
		}
		if pauses == 0 {
			t.Fatal("the in-flight limit never paused reading")
		}
	})
}

// TestConnectionsSpreadOverShards: connections go to the least-loaded
// shard, so N connections over S shards put N/S on each.
func TestConnectionsSpreadOverShards(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		server := startEcho(t, Options{Backend: backend}, 0)
		shards := server.runtime.Shards()
		if len(shards) < 2 {
			t.Skip("one CPU allowed: nothing to spread over")
		}
		count := 8 * len(shards)
		for i := range count {
			roundTrips(t, server.dial(t), [][]byte{makeFrame(i, byte(i))})
		}
		for _, sh := range shards {
			if got := sh.Connections(); got != count/len(shards) {
				t.Fatalf("shard %d owns %d connections, want %d", sh.ID(), got, count/len(shards))
			}
		}
	})
}

// waitFrames waits until the shards have delivered want frames in all:
// a request counts as in flight only once its handler has it.
func waitFrames(t *testing.T, rt *Runtime, want uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var total uint64
		for _, sh := range rt.Shards() {
			total += sh.Stats().FramesIn
		}
		if total >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d frames delivered, want %d", total, want)
		}
		time.Sleep(time.Millisecond) // polls another thread's counter; no event to wait on
	}
}

func waitConnections(t *testing.T, rt *Runtime, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		total := 0
		for _, sh := range rt.Shards() {
			total += sh.Connections()
		}
		if total == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, want %d", total, want)
		}
		time.Sleep(time.Millisecond) // polls another thread's counter; no event to wait on
	}
}

// TestShutdownDrains: a request in flight when Shutdown starts is still
// answered; then the connection closes, OnStop runs on every shard, new
// connections are refused, and Shutdown returns nil.
func TestShutdownDrains(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		stopped := make(chan int, shardCountMax)
		options := Options{Backend: backend, OnStop: func(sh *Shard) { stopped <- sh.ID() }}
		server := startEcho(t, options, 100*time.Millisecond)
		conn := server.dial(t)
		frame := makeFrame(1000, 5)
		if _, err := conn.Write(frame); err != nil {
			t.Fatal(err)
		}
		waitFrames(t, server.runtime, 1)
		done := make(chan error, 1)
		go func() { done <- server.runtime.Shutdown(context.Background()) }()
		got, err := readFrame(conn, make([]byte, len(frame)))
		if err != nil || string(got) != string(frame) {
			t.Fatalf("in-flight request not answered during shutdown: %v", err)
		}
		if _, err := conn.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("after the drain, read returned %v, want EOF", err)
		}
		if err := <-done; err != nil {
			t.Fatalf("shutdown: %v", err)
		}
		if len(stopped) != len(server.runtime.Shards()) {
			t.Fatalf("OnStop ran on %d shards, want %d", len(stopped), len(server.runtime.Shards()))
		}
		if _, err := net.DialTimeout("tcp", server.addr, time.Second); err == nil {
			t.Fatal("a connection was accepted after shutdown")
		}
	})
}

// TestShutdownForced: when the context ends before a request is answered,
// the connection is closed with ErrForcedClose and Shutdown returns the
// context's error.
func TestShutdownForced(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		server := startEcho(t, Options{Backend: backend}, time.Hour)
		conn := server.dial(t)
		if _, err := conn.Write(makeFrame(10, 1)); err != nil {
			t.Fatal(err)
		}
		waitFrames(t, server.runtime, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if err := server.runtime.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("shutdown returned %v, want DeadlineExceeded", err)
		}
		if got := server.nextClose(t); !errors.Is(got, ErrForcedClose) {
			t.Fatalf("close error %v, want ErrForcedClose", got)
		}
	})
}

// TestManyConnectionsLargeFrames: sixteen connections echo 1 MiB frames at
// once, far more bytes in flight than the receive buffers hold (the
// io_uring buffer ring usually runs dry; TestURingRecvRunsDry forces it).
func TestManyConnectionsLargeFrames(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		server := startEcho(t, Options{Backend: backend}, 0)
		var wait sync.WaitGroup
		for c := range 16 {
			conn := server.dial(t)
			frames := [][]byte{makeFrame(1<<20, byte(c)), makeFrame(1<<20-c, byte(c+1)), makeFrame(c, 3)}
			wait.Add(1)
			go func() {
				defer wait.Done()
				roundTrips(t, conn, frames)
			}()
		}
		wait.Wait()
	})
}

// TestEchoTrickle: frames written a few bytes at a time (seeded random
// chunk sizes, each write its own segment), so headers and bodies split at
// every kind of point across receives, come back whole and in order.
func TestEchoTrickle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		server := startEcho(t, Options{Backend: backend}, 0)
		conn := server.dial(t)
		random := rand.New(rand.NewPCG(testSeed(t), 3))
		var stream []byte
		var frames [][]byte
		for i := range 30 {
			frame := makeFrame(random.IntN(40), byte(i))
			frames = append(frames, frame)
			stream = append(stream, frame...)
		}
		go func() {
			for rest := stream; len(rest) > 0; {
				chunk := min(len(rest), 1+random.IntN(7))
				if _, err := conn.Write(rest[:chunk]); err != nil {
					return // the reader reports the failure
				}
				rest = rest[chunk:]
			}
		}()
		buf := make([]byte, 64)
		for i, frame := range frames {
			got, err := readFrame(conn, buf)
			if err != nil || !bytes.Equal(got, frame) {
				t.Fatalf("frame %d: %v (got %d bytes, want %d)", i, err, len(got), len(frame))
			}
		}
	})
}
