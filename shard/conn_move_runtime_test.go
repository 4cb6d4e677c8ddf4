package shard

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// moverHandler is the echo protocol with moves: a frame whose first
// payload byte is 'M' asks for the connection to move to the other shard
// (of two) before it is echoed. onMovedOut, when set, runs on the old
// shard's thread just before the handover.
type moverHandler struct {
	echoHandler
	movedIns   *atomic.Int64
	onMovedOut func(sh *Shard)
	closes     chan<- int // the shard each OnClose ran on
}

func (h *moverHandler) OnFrame(conn *Conn, frame []byte) {
	if len(frame) > echoHeaderBytes && frame[echoHeaderBytes] == 'M' {
		conn.wantMove(1 - conn.Shard().ID())
	}
	_ = conn.Reply(frame) // a closed connection drops the echo; the test sees EOF
}

func (h *moverHandler) OnClose(conn *Conn, _ error) { h.closes <- conn.Shard().ID() }

func (h *moverHandler) movable(*Conn) bool { return true }

func (h *moverHandler) movedOut(conn *Conn) {
	if h.onMovedOut != nil {
		h.onMovedOut(conn.Shard())
	}
}

func (h *moverHandler) movedIn(*Conn) { h.movedIns.Add(1) }

// startMover runs two shards serving moverHandler on backend.
func startMover(t *testing.T, backend string, onMovedOut func(sh *Shard)) (*Runtime, chan int, *atomic.Int64) {
	t.Helper()
	cpus := skipUnlessTwoShards(t, backend)
	closes := make(chan int, 16)
	movedIns := &atomic.Int64{}
	rt, err := Start(Options{CPUs: cpus[:2], Backend: backend, Listen: "127.0.0.1:0", Logger: testLogger(),
		NewHandler: func(sh *Shard) Handler {
			return &moverHandler{echoHandler: echoHandler{shard: sh}, movedIns: movedIns, closes: closes,
				onMovedOut: onMovedOut}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx) // already stopped by most tests
	})
	return rt, closes, movedIns
}

// moveEcho sends one frame with payload and reads its echo.
func moveEcho(t *testing.T, conn net.Conn, payload string) {
	t.Helper()
	frame := make([]byte, echoHeaderBytes+len(payload))
	binary.LittleEndian.PutUint32(frame, uint32(len(payload)))
	copy(frame[echoHeaderBytes:], payload)
	if _, err := conn.Write(frame); err != nil {
		t.Fatal(err)
	}
	reply := make([]byte, len(frame))
	if _, err := io.ReadFull(conn, reply); err != nil {
		t.Fatalf("echo of %q: %v", payload, err)
	}
	if string(reply[echoHeaderBytes:]) != payload {
		t.Fatalf("echo of %q: %q", payload, reply[echoHeaderBytes:])
	}
}

// TestConnMoveRuntime: below the front, a connection asked to move
// changes shards once its reply is out and keeps echoing there, byte for
// byte, on both backends; closing it closes it once, on the new shard.
func TestConnMoveRuntime(t *testing.T) {
	for _, backend := range moveBackends {
		t.Run(backend, func(t *testing.T) {
			rt, closes, movedIns := startMover(t, backend, nil)
			conn, err := net.Dial("tcp", rt.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			moveEcho(t, conn, "hello")
			home := 0
			if rt.Shards()[1].Connections() == 1 {
				home = 1
			}
			moveEcho(t, conn, "Move")
			for attempt := 0; movedIns.Load() == 0; attempt++ {
				if attempt == 100 {
					t.Fatal("the connection did not move")
				}
				moveEcho(t, conn, "after") // a request racing the cancel puts the move off to its reply
			}
			for index := range 100 {
				moveEcho(t, conn, string(rune('a'+index%26)))
			}
			if rt.Shards()[1-home].Connections() != 1 || rt.Shards()[home].Connections() != 0 {
				t.Fatalf("connections after the move: %d and %d", rt.Shards()[0].Connections(), rt.Shards()[1].Connections())
			}
			_ = conn.Close() // the server sees end of stream
			if shard := <-closes; shard != 1-home {
				t.Fatalf("closed on shard %d, want %d", shard, 1-home)
			}
			select {
			case shard := <-closes:
				t.Fatalf("closed twice (again on shard %d)", shard)
			case <-time.After(50 * time.Millisecond):
			}
		})
	}
}

// TestConnMoveIntoStoppingShard: a connection that reaches a shard
// already stopping is closed there at once, exactly once, with its
// handler told movedIn then OnClose, and shutdown completes. The old
// shard starts the shutdown just before it hands the connection over and
// holds the handover until the target had time to see it.
func TestConnMoveIntoStoppingShard(t *testing.T) {
	for _, backend := range moveBackends {
		t.Run(backend, func(t *testing.T) {
			rt, closes, movedIns := startMover(t, backend, func(sh *Shard) {
				sh.Runtime().requestStop()
				// The target notices the stop at its next turn; the old
				// shard is blocked here, so this wait is the only way to
				// order the two threads without a hook in the runtime.
				time.Sleep(200 * time.Millisecond)
			})
			conn, err := net.Dial("tcp", rt.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			moveEcho(t, conn, "Move")
			select {
			case <-rt.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("shutdown did not complete with a connection in transit")
			}
			if movedIns.Load() != 1 || len(closes) != 1 {
				t.Fatalf("movedIn %d times, OnClose %d times; want once each", movedIns.Load(), len(closes))
			}
			stats := [2]Stats{rt.Shards()[0].Stats(), rt.Shards()[1].Stats()}
			if stats[0].ConnsMovedIn+stats[1].ConnsMovedIn != 0 || stats[0].ConnsMovedOut+stats[1].ConnsMovedOut != 1 {
				t.Fatalf("moved in %d+%d, out %d+%d: the stopping shard must refuse the connection",
					stats[0].ConnsMovedIn, stats[1].ConnsMovedIn, stats[0].ConnsMovedOut, stats[1].ConnsMovedOut)
			}
			if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
				t.Fatal(err)
			}
			if n, err := conn.Read(make([]byte, 1)); n != 0 || err == nil {
				t.Fatalf("read after the refused move: %d bytes, %v; want the close", n, err)
			}
		})
	}
}

// TestConnMoveSocketpair: a connection handed over with Runtime.Adopt
// (one end of a socketpair, as the TLS terminator and the in-process
// clients use) moves and echoes like a TCP one.
func TestConnMoveSocketpair(t *testing.T) {
	for _, backend := range moveBackends {
		t.Run(backend, func(t *testing.T) {
			rt, closes, movedIns := startMover(t, backend, nil)
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := rt.Adopt(fds[0]); err != nil {
				t.Fatal(err)
			}
			file := os.NewFile(uintptr(fds[1]), "client")
			conn, err := net.FileConn(file)
			_ = file.Close() // FileConn holds its own duplicate
			if err != nil {
				t.Fatal(err)
			}
			moveEcho(t, conn, "Move")
			for attempt := 0; movedIns.Load() == 0; attempt++ {
				if attempt == 100 {
					t.Fatal("the socketpair connection did not move")
				}
				moveEcho(t, conn, "after")
			}
			for range 50 {
				moveEcho(t, conn, "moved")
			}
			_ = conn.Close() // the shard sees end of stream
			select {
			case <-closes:
			case <-time.After(10 * time.Second):
				t.Fatal("the moved socketpair connection did not close")
			}
		})
	}
}
