package shard

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// echoHeaderBytes is the length prefix of the test protocol: a frame is
// [payload length:4 LE][payload], echoed back whole.
const echoHeaderBytes = 4

// echoHandler is the length-prefixed echo protocol the shard tests run.
// replyDelay, when set, answers each frame from a timer instead of at once,
// so tests can hold requests in flight.
type echoHandler struct {
	shard      *Shard
	replyDelay time.Duration
	closes     chan<- error // every OnClose error, when set
}

func (h *echoHandler) FrameBytes(head []byte) (int, error) {
	if len(head) < echoHeaderBytes {
		return 0, nil
	}
	return echoHeaderBytes + int(binary.LittleEndian.Uint32(head)), nil
}

func (h *echoHandler) OnFrame(conn *Conn, frame []byte) {
	if h.replyDelay == 0 {
		_ = conn.Reply(frame) // a closed connection drops the echo; the test sees that as EOF
		return
	}
	_, err := h.shard.After(h.replyDelay, func(time.Time) {
		_ = conn.Reply(frame) // as above
	})
	if err != nil {
		panic("test timer table full")
	}
}

func (h *echoHandler) OnClose(conn *Conn, err error) {
	if h.closes != nil {
		h.closes <- err
	}
}

// echoServer is a runtime serving the echo protocol on 127.0.0.1.
type echoServer struct {
	runtime *Runtime
	addr    string
	closes  chan error
}

// backends lists what the shared test bodies run on; io_uring is skipped,
// naming why, where the kernel refuses it.
var backends = []string{BackendEpoll, BackendIOURing}

func forEachBackend(t *testing.T, body func(t *testing.T, backend string)) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			if backend == BackendIOURing {
				if err := uringAvailable(); err != nil {
					t.Skipf("io_uring unavailable: %v", err)
				}
			}
			body(t, backend)
		})
	}
}

func startEcho(t testing.TB, options Options, replyDelay time.Duration) *echoServer {
	t.Helper()
	server := &echoServer{closes: make(chan error, 4096)}
	options.Listen = "127.0.0.1:0"
	options.NewHandler = func(sh *Shard) Handler {
		return &echoHandler{shard: sh, replyDelay: replyDelay, closes: server.closes}
	}
	rt, err := Start(options)
	if err != nil {
		t.Fatal(err)
	}
	server.runtime, server.addr = rt, rt.Addr().String()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return server
}

func (s *echoServer) dial(t testing.TB) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// nextClose waits for one connection close reported by the server.
func (s *echoServer) nextClose(t testing.TB) error {
	t.Helper()
	select {
	case err := <-s.closes:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("no connection close reported")
		return nil
	}
}

func makeFrame(payloadBytes int, seed byte) []byte {
	frame := make([]byte, echoHeaderBytes+payloadBytes)
	binary.LittleEndian.PutUint32(frame, uint32(payloadBytes))
	payload := frame[echoHeaderBytes:]
	for i := range min(payloadBytes, 251) {
		payload[i] = seed + byte(i*7)
	}
	for filled := 251; filled < payloadBytes; filled *= 2 {
		copy(payload[filled:], payload[:filled]) // a 251-byte period: no power-of-two alignment hides a shifted copy
	}
	return frame
}

func readFrame(conn net.Conn, buf []byte) ([]byte, error) {
	if _, err := io.ReadFull(conn, buf[:echoHeaderBytes]); err != nil {
		return nil, err
	}
	size := echoHeaderBytes + int(binary.LittleEndian.Uint32(buf))
	if size > len(buf) {
		return nil, errors.New("echo frame larger than the read buffer")
	}
	_, err := io.ReadFull(conn, buf[echoHeaderBytes:size])
	return buf[:size], err
}

// roundTrips sends frames on conn from one goroutine while reading the
// echoes on the caller's, so large frames cannot deadlock the two sides,
// and checks every echo byte for byte.
func roundTrips(t testing.TB, conn net.Conn, frames [][]byte) {
	t.Helper()
	var wait sync.WaitGroup
	wait.Add(1)
	go func() {
		defer wait.Done()
		for _, frame := range frames {
			if _, err := conn.Write(frame); err != nil {
				t.Errorf("write: %v", err)
				return
			}
		}
	}()
	largest := 0
	for _, frame := range frames {
		largest = max(largest, len(frame))
	}
	buf := make([]byte, largest)
	for i, frame := range frames {
		got, err := readFrame(conn, buf)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(got, frame) {
			t.Fatalf("frame %d: echo differs (%d bytes, want %d)", i, len(got), len(frame))
		}
	}
	wait.Wait()
}
