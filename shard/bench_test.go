package shard

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// echoFrameBytes is the payload of the echo benchmark's frames.
const echoFrameBytes = 1 << 20

// BenchmarkEcho1MiB compares 1 MiB-frame echo over loopback through the
// shard runtime (each backend, with and without spinning) against a
// goroutine-per-connection net server, all driven by the same closed-loop
// client: each connection writes a frame and reads its echo, again and
// again. Two placements: "all" runs one shard per CPU and the net server
// unpinned; "cpu0" runs one shard on the first CPU and pins the net
// server's connection goroutines there too. The client goroutines are not
// pinned: a locked client thread beside a shard asleep in a syscall waits
// for sysmon to poll the network, milliseconds per round trip (doc.go
// says why). MB/s counts one direction; p50/p99 are round-trip latencies.
func BenchmarkEcho1MiB(b *testing.B) {
	serverCPU, _ := testCPUs(b)
	one := []int{serverCPU}
	servers := []struct {
		name  string
		start func(b *testing.B) string
	}{
		{"all/net", startNetEcho(false)},
		{"all/epoll", shardEcho(Options{Backend: BackendEpoll})},
		{"all/io_uring", shardEcho(Options{Backend: BackendIOURing})},
		{"all/io_uring-spin50us", shardEcho(Options{Backend: BackendIOURing, Spin: 50 * time.Microsecond})},
		{"cpu0/net", startNetEcho(true)},
		{"cpu0/epoll", shardEcho(Options{Backend: BackendEpoll, CPUs: one})},
		{"cpu0/io_uring", shardEcho(Options{Backend: BackendIOURing, CPUs: one})},
		{"cpu0/io_uring-spin50us", shardEcho(Options{Backend: BackendIOURing, CPUs: one, Spin: 50 * time.Microsecond})},
	}
	for _, server := range servers {
		for _, conns := range []int{1, 2} {
			b.Run(server.name+"/conns="+string(rune('0'+conns)), func(b *testing.B) {
				if strings.Contains(server.name, "io_uring") {
					if err := uringAvailable(); err != nil {
						b.Skipf("io_uring unavailable: %v", err)
					}
				}
				runEchoClients(b, server.start(b), conns)
			})
		}
	}
}

func shardEcho(options Options) func(b *testing.B) string {
	return func(b *testing.B) string {
		return startEcho(b, options, 0).addr
	}
}

// startNetEcho serves the echo protocol with Go's net package, one
// goroutine per connection reading each frame whole and writing it back,
// pinned to the first CPU when pinned.
func startNetEcho(pinned bool) func(b *testing.B) string {
	return func(b *testing.B) string { return serveNetEcho(b, pinned) }
}

func serveNetEcho(b *testing.B, pinned bool) string {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var wait sync.WaitGroup
	b.Cleanup(func() {
		_ = listener.Close()
		wait.Wait()
	})
	wait.Add(1)
	go func() {
		defer wait.Done()
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			wait.Add(1)
			go func() {
				defer wait.Done()
				defer conn.Close()
				if serverCPU, _ := testCPUs(b); pinned && pinThread(serverCPU) != nil {
					b.Error("pin the net server")
					return
				}
				buf := make([]byte, echoHeaderBytes+echoFrameBytes)
				for {
					frame, err := readFrame(conn, buf)
					if err != nil {
						return
					}
					if _, err := conn.Write(frame); err != nil {
						return
					}
				}
			}()
		}
	}()
	return listener.Addr().String()
}

func runEchoClients(b *testing.B, addr string, conns int) {
	frame := makeFrame(echoFrameBytes, 7)
	clients := make([]net.Conn, conns)
	for i := range clients {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		clients[i] = conn
		if err := echoOnce(conn, frame, make([]byte, len(frame))); err != nil {
			b.Fatal(err) // warm the connection and the server's pools
		}
	}
	perConn := max(1, b.N/conns)
	latencies := make([][]time.Duration, conns)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	b.ResetTimer()
	var wait sync.WaitGroup
	for i, conn := range clients {
		wait.Add(1)
		go func() {
			defer wait.Done()
			buf := make([]byte, len(frame))
			latencies[i] = make([]time.Duration, 0, perConn)
			for range perConn {
				start := time.Now()
				if err := echoOnce(conn, frame, buf); err != nil {
					b.Error(err)
					return
				}
				latencies[i] = append(latencies[i], time.Since(start))
			}
		}()
	}
	wait.Wait()
	b.StopTimer()
	all := slices.Concat(latencies...)
	slices.Sort(all)
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
		b.ReportMetric(float64(len(all)*len(frame))/b.Elapsed().Seconds()/1e6, "MB/s-total")
	}
}

// echoOnce writes frame and reads its echo into buf. The frame is written
// from a second goroutine only when it exceeds what the socket buffers
// absorb; 1 MiB fits loopback's autotuned buffers, so one goroutine does.
func echoOnce(conn net.Conn, frame, buf []byte) error {
	if _, err := conn.Write(frame); err != nil {
		return err
	}
	if _, err := io.ReadFull(conn, buf[:echoHeaderBytes]); err != nil {
		return err
	}
	size := echoHeaderBytes + int(binary.LittleEndian.Uint32(buf))
	if size != len(frame) {
		return errors.New("echo of another size")
	}
	_, err := io.ReadFull(conn, buf[echoHeaderBytes:size])
	return err
}
