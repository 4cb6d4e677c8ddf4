package shard

import (
	"bytes"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/ring"
)

// onBackendThread runs body on a locked, pinned thread with a fresh
// backend of the given kind, as a shard would, and closes it after.
func onBackendThread(t *testing.T, backend string, body func(b Backend)) {
	t.Helper()
	newBackend, _, err := chooseBackend(backend, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := pinThread(firstCPU(t)[0]); err != nil {
			t.Error(err)
			return
		}
		b, err := newBackend()
		if err != nil {
			t.Error(err)
			return
		}
		defer b.Close()
		body(b)
	}()
	<-done
}

// waitFor reaps until a completion with token arrives and returns it.
func waitFor(t *testing.T, b Backend, token uint64) Completion {
	out := make([]Completion, 16)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		count, err := b.Wait(out, 100*time.Millisecond)
		if err != nil {
			t.Errorf("wait: %v", err)
			return Completion{}
		}
		for _, completion := range out[:count] {
			if completion.Token == token {
				return completion
			}
		}
	}
	t.Errorf("no completion for token %#x", token)
	return Completion{}
}

// TestBackendContract runs the same checks of the Backend contract on
// both implementations: timeouts complete with ETIME and cancel with
// ECANCELED; Notify from another thread ends a Wait that would block for
// ever; a cancelled recv ends with a final ECANCELED; a send of a heap
// slice (bounced) and of an Alloc'd buffer (lent) both arrive.
func TestBackendContract(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		onBackendThread(t, backend, func(b Backend) {
			if err := b.Timeout(time.Millisecond, 1); err != nil {
				t.Fatal(err)
			}
			if got := waitFor(t, b, 1); got.Errno != unix.ETIME {
				t.Errorf("timeout completed with %v, want ETIME", got.Errno)
			}
			_ = b.Timeout(time.Hour, 2) // started on an open backend
			_ = b.Cancel(-1, 2)
			if got := waitFor(t, b, 2); got.Errno != unix.ECANCELED {
				t.Errorf("cancelled timeout completed with %v, want ECANCELED", got.Errno)
			}
			checkNotify(t, b)
			checkSocketOps(t, b)
			checkRecvInto(t, b)
		})
	})
}

func checkNotify(t *testing.T, b Backend) {
	go func() {
		time.Sleep(10 * time.Millisecond) // let the Wait block first; an early Notify must work too
		_ = b.Notify()
	}()
	start := time.Now()
	count, err := b.Wait(make([]Completion, 4), -1)
	if err != nil || count != 0 {
		t.Errorf("woken wait returned %d, %v", count, err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("notify took %v to wake the wait", waited)
	}
}

func checkSocketOps(t *testing.T, b Backend) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	if b.Name() == BackendEpoll {
		_ = unix.SetNonblock(pair[0], true) // epoll's contract: nonblocking sockets
	}
	lent := b.Alloc(5)
	copy(lent, "lent!")
	_ = b.Send(pair[0], []byte("heap "), 10)
	if got := waitFor(t, b, 10); got.Errno != 0 || got.Result != 5 {
		t.Errorf("heap send: %+v", got)
	}
	_ = b.Send(pair[0], lent, 11)
	if got := waitFor(t, b, 11); got.Errno != 0 || got.Result != 5 {
		t.Errorf("lent send: %+v", got)
	}
	b.Free(lent)
	received := make([]byte, 10)
	if n, err := unix.Read(pair[1], received); err != nil || string(received[:n]) != "heap lent!" {
		t.Errorf("peer read %q, %v", received[:n], err)
	}
	_, _ = unix.Write(pair[1], []byte("ping"))
	_ = b.Recv(pair[0], 12)
	got := waitFor(t, b, 12)
	if string(got.Data) != "ping" || !got.More {
		t.Errorf("recv: %q more=%v errno=%v", got.Data, got.More, got.Errno)
	}
	_ = b.Cancel(pair[0], 12)
	if got := waitFor(t, b, 12); got.Errno != unix.ECANCELED || got.More {
		t.Errorf("cancelled recv ended with %+v, want a final ECANCELED", got)
	}
}

// checkRecvInto receives 192 KiB, sent in pieces, into one Alloc'd
// buffer through as many RecvInto as it takes, then cancels one.
func checkRecvInto(t *testing.T, b Backend) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	if b.Name() == BackendEpoll {
		_ = unix.SetNonblock(pair[0], true) // epoll's contract: nonblocking sockets
	}
	sent := makeFrame(192<<10, 9)
	go func() {
		for rest := sent; len(rest) > 0; {
			n, err := unix.Write(pair[1], rest[:min(len(rest), 20000)])
			if err != nil {
				return
			}
			rest = rest[n:]
		}
	}()
	buf := b.Alloc(len(sent))
	defer b.Free(buf)
	for filled, token := 0, uint64(20); filled < len(buf); token++ {
		_ = b.RecvInto(pair[0], buf[filled:], token)
		got := waitFor(t, b, token)
		if got.Errno != 0 || got.Result <= 0 || got.More {
			t.Fatalf("RecvInto: %+v", got)
		}
		filled += got.Result
	}
	if !bytes.Equal(buf, sent) {
		t.Error("RecvInto bytes differ from those sent")
	}
	_ = b.RecvInto(pair[0], buf, 99)
	_ = b.Cancel(pair[0], 99)
	if got := waitFor(t, b, 99); got.Errno != unix.ECANCELED {
		t.Errorf("cancelled RecvInto ended with %+v, want ECANCELED", got)
	}
}

// TestURingSetup: the io_uring backend runs with the setup the notes
// measured fastest: a single-issuer ring with deferred task work, and
// multishot receive into a provided-buffer ring, when the kernel has them.
func TestURingSetup(t *testing.T) {
	if err := uringAvailable(); err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	onBackendThread(t, BackendIOURing, func(b Backend) {
		uring := b.(*uringBackend)
		features := uring.features
		flags := uring.ring.SetupFlags()
		if features.HasSetup(ring.SetupSingleIssuer|ring.SetupDeferTaskrun) && flags&ring.SetupDeferTaskrun == 0 {
			t.Errorf("setup flags %#x lack DEFER_TASKRUN the kernel offers", flags)
		}
		if features.RecvMultishot && !uring.multishotOK {
			t.Error("multishot recv offered but not used")
		}
	})
}

// TestURingRecvRunsDry: with a buffer ring of two 4 KiB buffers, a 256 KiB
// transfer ends the multishot receive with ENOBUFS again and again; the
// backend re-arms it each time, and every byte arrives once and in order.
func TestURingRecvRunsDry(t *testing.T) {
	if err := uringAvailable(); err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	sent := makeFrame(256<<10, 5)
	go func() {
		for rest := sent; len(rest) > 0; {
			n, err := unix.Write(pair[1], rest)
			if err != nil {
				return
			}
			rest = rest[n:]
		}
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := pinThread(firstCPU(t)[0]); err != nil {
			t.Error(err)
			return
		}
		b, err := newURingBackendSized(2, 4096)
		if err != nil {
			t.Error(err)
			return
		}
		defer b.Close()
		received := receiveAll(t, b, pair[0], len(sent))
		if !bytes.Equal(received, sent) {
			t.Error("bytes received through a dry buffer ring differ from those sent")
		}
		if b.recvRearms == 0 {
			t.Error("the buffer ring never ran dry")
		}
	}()
	<-done
}

func receiveAll(t *testing.T, b Backend, fd, size int) []byte {
	_ = b.Recv(fd, 1) // a fresh backend takes it
	out := make([]Completion, 64)
	var received []byte
	for deadline := time.Now().Add(10 * time.Second); len(received) < size && time.Now().Before(deadline); {
		count, err := b.Wait(out, 100*time.Millisecond)
		if err != nil {
			t.Error(err)
			break
		}
		for _, completion := range out[:count] {
			if completion.Errno != 0 || !completion.More {
				t.Errorf("receive ended: %+v", completion)
				return received
			}
			received = append(received, completion.Data...)
		}
	}
	return received
}
