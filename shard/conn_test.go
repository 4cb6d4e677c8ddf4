package shard

import (
	"log/slog"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fakeBackend records the ops a connection starts, so a test can answer
// them with whatever completions it wants, in any order.
type fakeBackend struct {
	pool     pool
	recvs    []uint64
	onces    []uint64
	into     []uint64
	sends    []uint64
	sent     [][]byte // the bytes of each Send
	cancels  []uint64
	owned    [][]byte // RecvIntoOwned's buffers
	indirect bool     // Direct refuses every buffer (frames from the heap)
	notified int
}

func (f *fakeBackend) Name() string                                  { return "fake" }
func (f *fakeBackend) Accept(int, uint64) error                      { return nil }
func (f *fakeBackend) Recv(_ int, token uint64) error                { f.recvs = append(f.recvs, token); return nil }
func (f *fakeBackend) Read(int, []byte, int64, uint64) error         { return nil }
func (f *fakeBackend) Write(int, []byte, int64, uint64) error        { return nil }
func (f *fakeBackend) WriteInPlace(int, []byte, int64, uint64) error { return nil }
func (f *fakeBackend) Fdatasync(int, uint64) error                   { return nil }
func (f *fakeBackend) Fallocate(int, int64, uint64) error            { return nil }
func (f *fakeBackend) Timeout(time.Duration, uint64) error           { return nil }
func (f *fakeBackend) Wait([]Completion, time.Duration) (int, error) { return 0, nil }
func (f *fakeBackend) Wake(Backend) error                            { return nil }
func (f *fakeBackend) Notify() error                                 { f.notified++; return nil }
func (f *fakeBackend) Close() error                                  { return nil }
func (f *fakeBackend) Alloc(size int) []byte                         { return f.pool.get(size) }
func (f *fakeBackend) Free(buf []byte)                               { f.pool.put(buf) }
func (f *fakeBackend) Direct([]byte) bool                            { return !f.indirect }
func (f *fakeBackend) Trim()                                         {}

func (f *fakeBackend) RecvOnce(_ int, token uint64) error {
	f.onces = append(f.onces, token)
	return nil
}

func (f *fakeBackend) RecvInto(_ int, _ []byte, token uint64) error {
	f.into = append(f.into, token)
	return nil
}

func (f *fakeBackend) RecvIntoOwned(_ int, buf []byte, token uint64) error {
	f.owned = append(f.owned, buf)
	return f.RecvInto(0, buf, token)
}

func (f *fakeBackend) Send(_ int, data []byte, token uint64) error {
	f.sends = append(f.sends, token)
	f.sent = append(f.sent, append([]byte(nil), data...))
	return nil
}

func (f *fakeBackend) Cancel(_ int, token uint64) error {
	f.cancels = append(f.cancels, token)
	return nil
}

// closeRecorder is an echo handler that remembers how connections closed.
type closeRecorder struct {
	echoHandler
	closed []error
}

func (r *closeRecorder) OnClose(_ *Conn, err error) { r.closed = append(r.closed, err) }

// newFakeShard returns a shard with a fake backend and one connection on
// a real socket (so closing its fd is real), its multishot recv armed.
func newFakeShard(t *testing.T) (*Shard, *fakeBackend, *closeRecorder, *Conn) {
	t.Helper()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Close(pair[1]) })
	fake := &fakeBackend{}
	rt := &Runtime{logger: slog.Default(), done: make(chan struct{})}
	sh := &Shard{runtime: rt, logger: rt.logger, backend: fake, listener: -1, timers: newTimers()}
	recorder := &closeRecorder{echoHandler: echoHandler{shard: sh}}
	sh.handler = recorder
	rt.shards = []*Shard{sh}
	rt.closed = []bool{false}
	sh.connCount.Add(1)
	sh.adopt(pair[0])
	if len(fake.recvs) != 1 || len(sh.conns) != 1 {
		t.Fatal("adopt did not arm one recv")
	}
	return sh, fake, recorder, sh.conns[0]
}

// TestConnEndOfStreamEndsCancelledRecv pins a bug: a receive cancelled by
// a drain or a close may end with end of stream (the peer left first)
// rather than ECANCELED; the connection must still finish closing, or the
// shard never drains and shutdown hangs.
func TestConnEndOfStreamEndsCancelledRecv(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(c *Conn)
	}{
		{"drain", func(c *Conn) { c.drain() }},
		{"close", func(c *Conn) { c.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh, fake, recorder, conn := newFakeShard(t)
			tc.stop(conn)
			if len(fake.cancels) != 1 {
				t.Fatalf("%s cancelled %d ops, want the recv", tc.name, len(fake.cancels))
			}
			conn.onRecv(Completion{Token: fake.recvs[0], Result: 0}) // end of stream, final
			if conn.state != connClosed || sh.conns[conn.slot] != nil {
				t.Fatalf("connection left in state %d after its recv ended", conn.state)
			}
			if len(recorder.closed) != 1 {
				t.Fatalf("OnClose ran %d times, want once", len(recorder.closed))
			}
		})
	}
}

// TestConnRecvIntoLifecycle drives the switch to receiving straight into
// a large frame: a header announcing a large frame cancels the multishot
// recv; its final completion arms RecvInto; RecvInto's completion finishes
// the frame, which is delivered and answered, and the next head is read
// with one RecvOnce.
func TestConnRecvIntoLifecycle(t *testing.T) {
	sh, fake, _, conn := newFakeShard(t)
	frame := makeFrame(directRecvBytesMin+1000, 4)
	first := frame[:1000]
	conn.onRecv(Completion{Token: fake.recvs[0], Result: len(first), Data: first, More: true})
	if len(fake.cancels) != 1 || !conn.switching {
		t.Fatal("a large frame did not cancel the multishot recv")
	}
	conn.onRecv(Completion{Token: fake.recvs[0], Errno: unix.ECANCELED})
	if len(fake.into) != 1 || !conn.recvInto {
		t.Fatal("the cancelled recv's end did not arm RecvInto")
	}
	copy(conn.frame[conn.frameLen:], frame[1000:])
	conn.onRecvInto(Completion{Token: fake.into[0], Result: len(frame) - 1000})
	if sh.Stats().FramesIn != 1 || len(fake.sends) != 1 {
		t.Fatalf("frame not delivered and echoed: %+v, %d sends", sh.Stats(), len(fake.sends))
	}
	if len(fake.recvs) != 1 || len(fake.onces) != 1 || conn.recvInto {
		t.Fatal("after a large frame the next head is not read with RecvOnce")
	}
}

// TestConnLargeFramesSkipTheCopy checks the path a connection of large
// frames takes: once a large frame went into its buffer, the next head is
// read with RecvOnce, whose one completion arms RecvInto for the rest at
// once (no cancel, no bytes copied out of receive buffers beyond the
// first); a small frame on the way brings back the multishot receive.
func TestConnLargeFramesSkipTheCopy(t *testing.T) {
	sh, fake, _, conn := newFakeShard(t)
	conn.large = true // as after a large frame
	large := makeFrame(directRecvBytesMin+5000, 9)
	conn.onRecv(Completion{Token: fake.recvs[0], Errno: unix.ECANCELED}) // ends the multishot recv
	if len(fake.onces) != 1 {
		t.Fatal("the receive after a large frame is not a RecvOnce")
	}
	for round := range 3 {
		head := large[:3000]
		conn.onRecv(Completion{Token: fake.onces[round], Result: len(head), Data: head})
		if len(fake.cancels) != 0 || len(fake.into) != round+1 || !conn.recvInto {
			t.Fatalf("round %d: %d cancels, %d RecvIntos: want none and %d", round, len(fake.cancels), len(fake.into), round+1)
		}
		copy(conn.frame[conn.frameLen:], large[3000:])
		conn.onRecvInto(Completion{Token: fake.into[round], Result: len(large) - 3000})
		if got := sh.Stats(); got.FramesIn != uint64(round+1) || got.BytesDirect != uint64(round+1)*uint64(len(large)-3000) {
			t.Fatalf("round %d: stats %+v", round, got)
		}
		if len(fake.onces) != round+2 {
			t.Fatalf("round %d: next head not read with RecvOnce", round)
		}
	}
	small := makeFrame(100, 3)
	conn.onRecv(Completion{Token: fake.onces[3], Result: len(small), Data: small})
	if len(fake.recvs) != 2 || len(fake.onces) != 4 {
		t.Fatalf("after a small frame: %d multishot receives, %d RecvOnces; want 2 and 4", len(fake.recvs), len(fake.onces))
	}
}

// TestConnHeapFrameAfterLargeFrames: after a large frame the next head is
// read with RecvOnce, but a frame the backend cannot receive into as is
// (a heap buffer, the pools being exhausted) then comes through the
// multishot receive, not one RecvOnce of one buffer after another.
func TestConnHeapFrameAfterLargeFrames(t *testing.T) {
	sh, fake, _, conn := newFakeShard(t)
	conn.large = true // as after a large frame
	fake.indirect = true
	large := makeFrame(directRecvBytesMin+5000, 9)
	conn.onRecv(Completion{Token: fake.recvs[0], Errno: unix.ECANCELED}) // ends the multishot recv
	conn.onRecv(Completion{Token: fake.onces[0], Result: 3000, Data: large[:3000]})
	if len(fake.onces) != 1 || len(fake.recvs) != 2 || len(fake.into) != 0 {
		t.Fatalf("a heap frame's rest: %d RecvOnces, %d multishot receives, %d RecvIntos; want 1, 2 and 0",
			len(fake.onces), len(fake.recvs), len(fake.into))
	}
	conn.onRecv(Completion{Token: fake.recvs[1], Result: len(large) - 3000, Data: large[3000:], More: true})
	if sh.Stats().FramesIn != 1 {
		t.Fatalf("heap frame not delivered: %+v", sh.Stats())
	}
}

// TestConnJoinsQueuedReplies: replies queued while a send is in flight go
// out together in the next send (one buffer), even when that send is
// partial; each reply frees its in-flight slot once all of it is out, and
// a reply larger than sendJoinBytesMax goes out on its own.
func TestConnJoinsQueuedReplies(t *testing.T) {
	sh, fake, _, conn := newFakeShard(t)
	replies := [][]byte{[]byte("first"), []byte("second"), []byte("third"), make([]byte, sendJoinBytesMax), []byte("last")}
	conn.inflight = len(replies)
	for _, reply := range replies {
		buf := sh.Buffer(len(reply))
		copy(buf, reply)
		if err := conn.Reply(buf); err != nil {
			t.Fatal(err)
		}
	}
	if len(fake.sends) != 1 || string(fake.sent[0]) != "first" {
		t.Fatalf("sends %q, want the first reply alone at once", fake.sent)
	}
	conn.onSend(Completion{Token: fake.sends[0], Result: 5})
	if len(fake.sends) != 2 || string(fake.sent[1]) != "secondthird" {
		t.Fatalf("second send %q, want the two queued small replies joined", fake.sent[len(fake.sent)-1])
	}
	conn.onSend(Completion{Token: fake.sends[1], Result: 4}) // partial
	if len(fake.sends) != 3 || string(fake.sent[2]) != "ndthird" || conn.Inflight() != 4 {
		t.Fatalf("after a partial send: %q, in flight %d; want the rest of the joined buffer, 4", fake.sent[2], conn.Inflight())
	}
	conn.onSend(Completion{Token: fake.sends[2], Result: 7})
	if conn.Inflight() != 2 || len(fake.sent[3]) != sendJoinBytesMax {
		t.Fatalf("in flight %d, next send %d bytes; want 2 and the large reply alone", conn.Inflight(), len(fake.sent[3]))
	}
	conn.onSend(Completion{Token: fake.sends[3], Result: sendJoinBytesMax})
	conn.onSend(Completion{Token: fake.sends[4], Result: 4})
	if conn.Inflight() != 0 || conn.sendLen != 0 || string(fake.sent[4]) != "last" {
		t.Fatalf("in flight %d, queued %d, last send %q", conn.Inflight(), conn.sendLen, fake.sent[4])
	}
	if joined := sh.Stats().SendsJoined; joined != 1 {
		t.Fatalf("SendsJoined %d, want 1", joined)
	}
}
