package shard

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func startRuntime(t *testing.T, options Options) *Runtime {
	t.Helper()
	rt, err := Start(options)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return rt
}

// crossShardCount is how many messages TestCrossShardMessages sends: more
// than a queue holds, so the sender meets ErrQueueFull and retries; fewer
// under the race detector in short runs.
func crossShardCount() uint64 {
	if testing.Short() && raceEnabled {
		return 8 * queueSlotCount
	}
	return 50 * queueSlotCount
}

// TestCrossShardMessages: shard 0 streams numbered messages to shard 1,
// retrying from a timer whenever the queue is full; shard 1, which sleeps
// in its backend whenever the queue is empty, must be woken, receive every
// number once and in order, and report back with a message of its own.
// Shard 1 holds its first message until shard 0 has met a full queue, so
// backpressure is exercised on every run.
func TestCrossShardMessages(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		cpus, err := AllowedCPUs()
		if err != nil {
			t.Fatal(err)
		}
		if len(cpus) < 2 {
			t.Skip("one CPU allowed: no peer shard")
		}
		count := crossShardCount()
		done := make(chan uint64, 1)
		sawFull := make(chan struct{})
		var fullCount int
		var next, received uint64
		var sendBatch func(time.Time)
		sendBatch = func(time.Time) {
			sender := currentShard
			for next < count {
				if err := sender.Send(1, Message{Kind: 1, Value: next}); err != nil {
					if fullCount == 0 {
						close(sawFull)
					}
					fullCount++
					if _, err := sender.After(0, sendBatch); err != nil {
						panic("timer table full")
					}
					return
				}
				next++
			}
		}
		options := Options{Backend: backend, CPUs: cpus[:2],
			OnStart: func(sh *Shard) {
				if sh.ID() == 0 {
					currentShard = sh
					_, _ = sh.After(time.Millisecond, sendBatch) // a fresh timer table has room
				}
			},
			OnMessage: func(sh *Shard, from int, message Message) {
				switch {
				case sh.ID() == 1 && message.Kind == 1:
					if message.Value != received {
						panic("cross-shard message out of order")
					}
					if received == 0 {
						<-sawFull
					}
					received++
					if received == count {
						for sh.Send(0, Message{Kind: 2, Value: received}) != nil {
						}
					}
				case sh.ID() == 0 && message.Kind == 2:
					done <- message.Value
				}
			},
		}
		rt := startRuntime(t, options)
		select {
		case got := <-done:
			if got != count {
				t.Fatalf("shard 1 received %d messages, want %d", got, count)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("cross-shard stream did not finish")
		}
		if fullCount == 0 {
			t.Fatal("the sender never met a full queue: backpressure untested")
		}
		if got := rt.Shards()[1].Stats().MessagesIn; got != count {
			t.Fatalf("stats count %d messages, want %d", got, count)
		}
	})
}

// currentShard lets TestCrossShardMessages's timer callback reach shard 0;
// only shard 0's thread reads it after OnStart set it.
var currentShard *Shard

// TestTimersFire: a one-shot timer fires once, a periodic one keeps
// firing, and a stopped one never fires, all on the shard's thread.
func TestTimersFire(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		fired := make(chan string, 64)
		options := Options{Backend: backend, CPUs: firstCPU(t), OnStart: func(sh *Shard) {
			_, _ = sh.After(5*time.Millisecond, func(time.Time) { fired <- "once" })
			var ticks int
			var every TimerID
			every, _ = sh.Every(2*time.Millisecond, func(time.Time) {
				ticks++
				fired <- "tick"
				if ticks == 5 {
					sh.Stop(every)
				}
			})
			stopped, _ := sh.After(time.Millisecond, func(time.Time) { fired <- "stopped" })
			if !sh.Stop(stopped) {
				panic("a pending timer did not stop")
			}
		}}
		startRuntime(t, options)
		counts := map[string]int{}
		deadline := time.After(5 * time.Second)
		for counts["once"] < 1 || counts["tick"] < 5 {
			select {
			case name := <-fired:
				counts[name]++
			case <-deadline:
				t.Fatalf("timers fired %v", counts)
			}
		}
		select {
		case name := <-fired:
			t.Fatalf("timer %q fired after the expected set", name)
		case <-time.After(20 * time.Millisecond):
		}
		if counts["stopped"] != 0 {
			t.Fatal("a stopped timer fired")
		}
	})
}

func firstCPU(t *testing.T) []int {
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	return cpus[:1]
}

// TestFileOps writes a file through a shard's backend, fsyncs it, reads it
// back, and checks the bytes; both with a buffer from the shard (lent as
// is) and with a plain heap slice (bounced through the backend's memory).
func TestFileOps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		path := filepath.Join(t.TempDir(), "data")
		file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		fd := int(file.Fd())
		result := make(chan error, 1)
		startRuntime(t, Options{Backend: backend, CPUs: firstCPU(t), OnStart: func(sh *Shard) {
			runFileOps(sh, fd, result)
		}})
		select {
		case err := <-result:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("file ops did not finish")
		}
	})
}

// runFileOps chains writes (pooled, heap, in place) → fsync → allocate
// 1 MiB more → read → compare on the shard's thread: the file grew to the
// allocated size, its written bytes unchanged, the rest zeros.
func runFileOps(sh *Shard, fd int, result chan<- error) {
	pooled := sh.Buffer(300 << 10)
	for i := range pooled {
		pooled[i] = byte(i * 13)
	}
	heap := bytes.Repeat([]byte("whippet!"), 1000)
	// Memory outside the Go heap and the pools, as the cache's arena is:
	// written in place.
	mapped, err := unix.Mmap(-1, 0, 200<<10, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		result <- err
		return
	}
	for i := range mapped {
		mapped[i] = byte(i * 7)
	}
	readBack := make([]byte, len(pooled)+len(heap)+len(mapped)+1<<20+4096)
	var write1, write2, write3, sync, allocate, read FileOp
	written := len(pooled) + len(heap) + len(mapped)
	size := int64(written + 1<<20)
	fail := func(op *FileOp, what string) bool {
		if op.Err != nil {
			result <- errors.New(what + ": " + op.Err.Error())
			return true
		}
		return false
	}
	read.Done = func(op *FileOp) {
		if fail(op, "read") {
			return
		}
		want := append(append(append([]byte{}, pooled...), heap...), mapped...)
		want = append(want, make([]byte, size-int64(written))...)
		_ = unix.Munmap(mapped) // Test memory; its write completed.
		if op.Result != len(want) || !bytes.Equal(readBack[:op.Result], want) {
			result <- errors.New("read back differs from what was written")
			return
		}
		result <- nil
	}
	allocate.Done = func(op *FileOp) {
		var stat unix.Stat_t
		if fail(op, "fallocate") || fail(&FileOp{Err: unix.Fstat(fd, &stat)}, "fstat") {
			return
		}
		if stat.Size != size {
			result <- errors.New("fallocate left the file at " + strconv.FormatInt(stat.Size, 10) + " bytes")
			return
		}
		_ = sh.ReadAt(fd, readBack, 0, &read) // a fresh shard has file-op slots
	}
	sync.Done = func(op *FileOp) {
		if !fail(op, "fdatasync") {
			_ = sh.Fallocate(fd, size, &allocate)
		}
	}
	write3.Done = func(op *FileOp) {
		if !fail(op, "write in place") && op.Result == len(mapped) {
			_ = sh.Fdatasync(fd, &sync)
		}
	}
	write2.Done = func(op *FileOp) {
		if !fail(op, "write heap") && op.Result == len(heap) {
			_ = sh.WriteAt(fd, mapped, int64(len(pooled)+len(heap)), true, &write3)
		}
	}
	write1.Done = func(op *FileOp) {
		if !fail(op, "write pooled") && op.Result == len(pooled) {
			_ = sh.WriteAt(fd, heap, int64(len(pooled)), false, &write2)
		}
	}
	_ = sh.WriteAt(fd, pooled, 0, false, &write1)
}

// TestBackendChoice: auto takes io_uring when the probe allows it and
// otherwise falls back to epoll with exactly one log line naming the
// cause; a forced io_uring fails instead; unknown names are refused.
func TestBackendChoice(t *testing.T) {
	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	refuse := func() error { return errors.New("blocked by seccomp") }
	allow := func() error { return nil }
	if _, name, err := chooseBackendWith(BackendAuto, logger, allow); err != nil || name != BackendIOURing {
		t.Fatalf("auto with io_uring available chose %q, %v", name, err)
	}
	if logged.Len() != 0 {
		t.Fatalf("auto with io_uring logged %q", logged.String())
	}
	if _, name, err := chooseBackendWith(BackendAuto, logger, refuse); err != nil || name != BackendEpoll {
		t.Fatalf("auto without io_uring chose %q, %v", name, err)
	}
	if lines := strings.Count(logged.String(), "\n"); lines != 1 || !strings.Contains(logged.String(), "seccomp") {
		t.Fatalf("fallback logged %d lines %q, want one naming the cause", lines, logged.String())
	}
	if _, _, err := chooseBackendWith(BackendIOURing, logger, refuse); !errors.Is(err, ErrBackend) {
		t.Fatalf("forced io_uring without it returned %v, want ErrBackend", err)
	}
	if _, name, err := chooseBackendWith(BackendEpoll, logger, allow); err != nil || name != BackendEpoll {
		t.Fatalf("forced epoll chose %q, %v", name, err)
	}
	if _, _, err := chooseBackendWith("kqueue", logger, allow); !errors.Is(err, ErrBackend) {
		t.Fatalf("unknown backend returned %v, want ErrBackend", err)
	}
}

// TestCPUList: the Linux list syntax parses to ascending distinct CPUs;
// malformed, repeated and disallowed CPUs are refused.
func TestCPUList(t *testing.T) {
	good := map[string][]int{"0": {0}, "0-3": {0, 1, 2, 3}, "6,1-2": {1, 2, 6}, " 4 , 5 ": {4, 5}}
	for text, want := range good {
		got, err := ParseCPUList(text)
		if err != nil || !equalInts(got, want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for _, text := range []string{"", "a", "3-1", "-1", "1,1", "0-2,2", "99999"} {
		if _, err := ParseCPUList(text); !errors.Is(err, ErrCPUList) {
			t.Errorf("ParseCPUList(%q) returned %v, want ErrCPUList", text, err)
		}
	}
	if err := checkCPUs([]int{0, 0}, []int{0, 1}); !errors.Is(err, ErrCPUList) {
		t.Errorf("a repeated CPU was accepted: %v", err)
	}
	if err := checkCPUs([]int{5}, []int{0, 1}); !errors.Is(err, ErrCPUList) {
		t.Errorf("a CPU outside the affinity mask was accepted: %v", err)
	}
	if _, err := Start(Options{CPUs: []int{cpuSetBits + 1}}); !errors.Is(err, ErrCPUList) {
		t.Errorf("Start accepted an impossible CPU: %v", err)
	}
}

// TestListenAddresses: ":0" listens on every address, IPv4 and (where the
// host has it) IPv6, like Go's net package; a bad address and a bad spin
// are refused by Start.
func TestListenAddresses(t *testing.T) {
	server := startEchoOn(t, ":0")
	port := server.runtime.Addr().(*net.TCPAddr).Port
	for _, host := range []string{"127.0.0.1", "::1"} {
		conn, err := net.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			if host == "::1" {
				continue // no IPv6 loopback on this host
			}
			t.Fatal(err)
		}
		roundTrips(t, conn, [][]byte{makeFrame(10, 1)})
		_ = conn.Close()
	}
	if _, err := Start(Options{Listen: "no-such-host.invalid:x", NewHandler: func(*Shard) Handler { return nil }}); err == nil {
		t.Fatal("Start accepted an unresolvable address")
	}
	if _, err := Start(Options{Spin: time.Hour}); err == nil {
		t.Fatal("Start accepted an hour of spinning")
	}
}

func startEchoOn(t *testing.T, address string) *echoServer {
	server := &echoServer{closes: make(chan error, 16)}
	rt := startRuntime(t, Options{Backend: BackendEpoll, Listen: address, NewHandler: func(sh *Shard) Handler {
		return &echoHandler{shard: sh, closes: server.closes}
	}})
	server.runtime, server.addr = rt, rt.Addr().String()
	return server
}
