package ring

import (
	"bytes"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listenLoopback opens a TCP listener on 127.0.0.1:0 and returns its fd and
// address.
func listenLoopback(t *testing.T) (int32, *unix.SockaddrInet4) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) }) // Test socket.
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	if err := unix.Listen(fd, 64); err != nil {
		t.Fatalf("listen: %v", err)
	}
	name, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatalf("getsockname: %v", err)
	}
	return int32(fd), name.(*unix.SockaddrInet4)
}

// dialLoopback connects a blocking client socket; the connection completes
// through the listen backlog, before anyone accepts it.
func dialLoopback(t *testing.T, address *unix.SockaddrInet4) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) }) // Test socket.
	if err := unix.Connect(fd, address); err != nil {
		t.Fatalf("connect: %v", err)
	}
	return fd
}

// connectedPair returns a client fd and the server fd accepted by one ACCEPT
// through the ring.
func connectedPair(t *testing.T, r *Ring) (int, int32) {
	t.Helper()
	listener, address := listenLoopback(t)
	client := dialLoopback(t, address)
	sqe := mustSQE(t, r)
	sqe.PrepAccept(listener, unix.SOCK_CLOEXEC)
	sqe.SetUserData(0xacce)
	cqe := waitFor(t, r, 0xacce, nil)
	if cqe.Res < 0 {
		t.Fatalf("accept: %v", cqe.Err())
	}
	t.Cleanup(func() { _ = unix.Close(int(cqe.Res)) }) // Test socket.
	return client, cqe.Res
}

func writeAll(t *testing.T, fd int, data []byte) {
	t.Helper()
	for len(data) > 0 {
		count, err := unix.Write(fd, data)
		if err != nil {
			t.Fatalf("write: %v", err)
		}
		data = data[count:]
	}
}

func readFull(t *testing.T, fd int, size int) []byte {
	t.Helper()
	data := make([]byte, size)
	for got := 0; got < size; {
		count, err := unix.Read(fd, data[got:])
		if err != nil || count == 0 {
			t.Fatalf("read after %d of %d bytes: %v", got, size, err)
		}
		got += count
	}
	return data
}

// TestMultishotAccept arms one multishot ACCEPT and connects three clients:
// three CQEs must arrive, each a new fd, each saying the SQE stays armed.
// Cancelling it then ends it with a CQE without CQEFlagMore.
func TestMultishotAccept(t *testing.T) {
	if features := probeOrSkip(t); !features.MultishotAccept {
		t.Skip("kernel lacks multishot accept (IORING_ACCEPT_MULTISHOT)")
	}
	r := newTestRing(t, Options{SQEntries: 8})
	listener, address := listenLoopback(t)
	sqe := mustSQE(t, r)
	sqe.PrepAcceptMultishot(listener, unix.SOCK_CLOEXEC)
	sqe.SetUserData(7)
	seen := map[int32]bool{}
	var others []CQE
	for range 3 {
		dialLoopback(t, address)
		cqe := waitFor(t, r, 7, &others)
		if cqe.Res < 0 || !cqe.More() || seen[cqe.Res] {
			t.Fatalf("accept CQE res %d more %v (seen %v)", cqe.Res, cqe.More(), seen)
		}
		seen[cqe.Res] = true
		_ = unix.Close(int(cqe.Res)) // Test socket.
	}
	cancel := mustSQE(t, r)
	cancel.PrepCancel(7, 0)
	cancel.SetUserData(8)
	if cqe := waitFor(t, r, 8, &others); cqe.Res != 0 {
		t.Fatalf("cancel multishot accept: %v", cqe.Err())
	}
	if cqe := waitFor(t, r, 7, &others); cqe.More() || cqe.Err() != unix.ECANCELED {
		t.Fatalf("cancelled accept: res %v more %v, want ECANCELED and no more", cqe.Err(), cqe.More())
	}
}

// TestRecvMultishotBufferRing streams 256 KiB through a multishot RECV whose
// buffer ring holds only 8 × 4 KiB: the receive must run dry (ENOBUFS ends
// the multishot), be re-armed after recycling, and deliver every byte in
// order. The peer's close ends it with a zero-byte CQE.
func TestRecvMultishotBufferRing(t *testing.T) {
	if features := probeOrSkip(t); !features.RecvMultishot || !features.BufferRings {
		t.Skip("kernel lacks multishot recv (IORING_RECV_MULTISHOT) or buffer rings (IORING_REGISTER_PBUF_RING)")
	}
	r := newTestRing(t, Options{SQEntries: 16})
	br, err := r.NewBufRing(8, 4096)
	if err != nil {
		t.Fatalf("NewBufRing: %v", err)
	}
	t.Cleanup(func() {
		if err := br.Close(); err != nil {
			t.Errorf("BufRing.Close: %v", err)
		}
	})
	client, server := connectedPair(t, r)
	sent := make([]byte, 256<<10)
	fillSeeded(t, sent, 42)
	writeAll(t, client, sent)
	_ = unix.Shutdown(client, unix.SHUT_WR) // EOF after the data; a failure shows as a missing end.
	received, arms, ended := receiveAll(t, r, br, server, len(sent))
	if !bytes.Equal(received, sent) {
		t.Fatalf("received %d bytes differing from the %d sent", len(received), len(sent))
	}
	if arms < 2 {
		t.Errorf("multishot recv armed %d times: the 8-buffer ring never ran dry", arms)
	}
	if !ended {
		t.Error("no end-of-stream CQE after the peer shut down")
	}
	if br.HeldCount() != 0 {
		t.Errorf("%d buffers still held after recycling all", br.HeldCount())
	}
}

// receiveAll drives a multishot recv until EOF and returns the bytes, the
// number of arms and whether EOF was seen.
func receiveAll(t *testing.T, r *Ring, br *BufRing, fd int32, size int) ([]byte, int, bool) {
	t.Helper()
	received := make([]byte, 0, size)
	arms, armed := 0, false
	var others []CQE
	for turn := 0; turn < 10_000; turn++ {
		if !armed {
			sqe := mustSQE(t, r)
			sqe.PrepRecvMultishot(fd, br, 0)
			sqe.SetUserData(3)
			arms, armed = arms+1, true
		}
		cqe := waitFor(t, r, 3, &others)
		armed = cqe.More()
		switch {
		case cqe.Res > 0:
			id, data := br.Take(cqe)
			received = append(received, data...)
			br.Recycle(id)
		case cqe.Res == 0:
			return received, arms, true
		case cqe.Err() == unix.ENOBUFS:
			if armed {
				t.Fatal("an ENOBUFS CQE kept the multishot recv armed")
			}
		default:
			t.Fatalf("recv: %v", cqe.Err())
		}
	}
	t.Fatal("recv loop did not finish")
	return nil, 0, false
}

// TestCancelPendingRecv arms a RECV on a socket with no data, cancels it by
// user_data, and checks both CQEs: the cancel succeeded and the recv ended
// with ECANCELED, after which its buffer can be reclaimed. Cancelling it
// again finds nothing (ENOENT).
func TestCancelPendingRecv(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	_, server := connectedPair(t, r)
	pool := newTestPool(t, 1, PageBytes)
	b, _ := pool.Acquire()
	recv := mustSQE(t, r)
	recv.PrepRecv(server, b, 0, PageBytes, 0)
	recv.SetUserData(10)
	if _, err := r.Submit(); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if count := r.Reap(func(CQE) {}); count != 0 {
		t.Fatalf("%d CQEs before any data or cancel", count)
	}
	cancel := mustSQE(t, r)
	cancel.PrepCancel(10, 0)
	cancel.SetUserData(11)
	var others []CQE
	if cqe := waitFor(t, r, 11, &others); cqe.Res != 0 {
		t.Fatalf("cancel: %v", cqe.Err())
	}
	if cqe := waitFor(t, r, 10, &others); cqe.Err() != unix.ECANCELED {
		t.Fatalf("cancelled recv: %v, want ECANCELED", cqe.Err())
	}
	pool.Reclaim(b)
	again := mustSQE(t, r)
	again.PrepCancel(10, 0)
	again.SetUserData(12)
	if cqe := waitFor(t, r, 12, &others); cqe.Err() != unix.ENOENT {
		t.Fatalf("second cancel: %v, want ENOENT", cqe.Err())
	}
}

// TestSendRecvSendmsg sends with SEND and SENDMSG through the ring and
// checks what the peer reads; then receives with a one-shot RECV.
func TestSendRecvSendmsg(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	client, server := connectedPair(t, r)
	pool := newTestPool(t, 4, PageBytes)
	first, _ := pool.Acquire()
	second, _ := pool.Acquire()
	copy(first.Bytes(), "send;")
	copy(second.Bytes(), "message")
	send := mustSQE(t, r)
	send.PrepSend(server, first, 0, 5, 0)
	send.SetUserData(1)
	var others []CQE
	if cqe := waitFor(t, r, 1, &others); cqe.Res != 5 {
		t.Fatalf("send: res %d", cqe.Res)
	}
	pool.Reclaim(first)
	vec := NewVec(2)
	vec.Add(first, 0, 5)
	vec.Add(second, 0, 7)
	sendmsg := mustSQE(t, r)
	sendmsg.PrepSendmsg(server, vec, 0)
	sendmsg.SetUserData(2)
	if cqe := waitFor(t, r, 2, &others); cqe.Res != 12 {
		t.Fatalf("sendmsg: res %d (%v)", cqe.Res, cqe.Err())
	}
	vec.Reclaim()
	if got := string(readFull(t, client, 17)); got != "send;send;message" {
		t.Fatalf("peer read %q", got)
	}
	writeAll(t, client, []byte("reply"))
	recv := mustSQE(t, r)
	recv.PrepRecv(server, second, 0, PageBytes, 0)
	recv.SetUserData(3)
	if cqe := waitFor(t, r, 3, &others); cqe.Res != 5 {
		t.Fatalf("recv: res %d (%v)", cqe.Res, cqe.Err())
	}
	pool.Reclaim(second)
	if got := string(second.Bytes()[:5]); got != "reply" {
		t.Fatalf("recv got %q", got)
	}
}

// TestSendmsgOwned sends one message whose spans lie in caller-owned
// mmap memory, two of them in one page, and checks what the peer reads.
func TestSendmsgOwned(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	client, server := connectedPair(t, r)
	region, err := unix.Mmap(-1, 0, PageBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Munmap(region) })
	copy(region, "owned;spans;here")
	spans := [][]byte{region[12:16], region[0:6], region[6:12]}
	iovecs := make([]unix.Iovec, len(spans))
	for i, span := range spans {
		iovecs[i] = unix.Iovec{Base: &span[0]}
		iovecs[i].SetLen(len(span))
	}
	message := unix.Msghdr{Iov: &iovecs[0]}
	message.SetIovlen(len(iovecs))
	sqe := mustSQE(t, r)
	sqe.PrepSendmsgOwned(server, &message, unix.MSG_NOSIGNAL)
	sqe.SetUserData(4)
	var others []CQE
	if cqe := waitFor(t, r, 4, &others); cqe.Res != 16 {
		t.Fatalf("sendmsg: res %d (%v)", cqe.Res, cqe.Err())
	}
	if got := string(readFull(t, client, 16)); got != "hereowned;spans;" {
		t.Fatalf("peer read %q", got)
	}
}

// TestSendZC sends a buffer with SEND_ZC: the byte count arrives first with
// CQEFlagMore, and the buffer may be reclaimed only at the notification.
func TestSendZC(t *testing.T) {
	if features := probeOrSkip(t); !features.SendZC {
		t.Skip("kernel lacks IORING_OP_SEND_ZC")
	}
	r := newTestRing(t, Options{SQEntries: 8})
	client, server := connectedPair(t, r)
	pool := newTestPool(t, 1, 64<<10)
	b, _ := pool.Acquire()
	fillSeeded(t, b.Bytes(), 7)
	want := append([]byte(nil), b.Bytes()...)
	sqe := mustSQE(t, r)
	sqe.PrepSendZC(server, b, 0, len(want), 0, 0)
	sqe.SetUserData(5)
	var others []CQE
	result := waitFor(t, r, 5, &others)
	if result.Res != int32(len(want)) || result.Notif() {
		t.Fatalf("send_zc result: res %d notif %v", result.Res, result.Notif())
	}
	if result.More() {
		notif := waitFor(t, r, 5, &others)
		if !notif.Notif() || notif.More() {
			t.Fatalf("send_zc second CQE flags %#x, want a final notification", notif.Flags)
		}
	}
	pool.Reclaim(b)
	if got := readFull(t, client, len(want)); !bytes.Equal(got, want) {
		t.Fatal("peer read different bytes")
	}
}

// TestConnectAcceptShutdown connects through the ring (CONNECT) to a
// listener accepted through the ring, then shuts the client's write side
// down through the ring (SHUTDOWN): the server's RECV must see EOF.
func TestConnectAcceptShutdown(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	listener, address := listenLoopback(t)
	client, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(client)
	sockaddr, err := NewSockaddr(address)
	if err != nil {
		t.Fatal(err)
	}
	connect := mustSQE(t, r)
	r.PrepConnect(connect, int32(client), sockaddr)
	connect.SetUserData(1)
	accept := mustSQE(t, r)
	accept.PrepAccept(listener, unix.SOCK_CLOEXEC)
	accept.SetUserData(2)
	var others []CQE
	if cqe := waitFor(t, r, 1, &others); cqe.Res != 0 {
		t.Fatalf("connect: %v", cqe.Err())
	}
	accepted := waitFor(t, r, 2, &others)
	if accepted.Res < 0 {
		t.Fatalf("accept: %v", accepted.Err())
	}
	defer unix.Close(int(accepted.Res))
	shutdown := mustSQE(t, r)
	shutdown.PrepShutdown(int32(client), unix.SHUT_WR)
	shutdown.SetUserData(3)
	if cqe := waitFor(t, r, 3, &others); cqe.Res != 0 {
		t.Fatalf("shutdown: %v", cqe.Err())
	}
	pool := newTestPool(t, 1, PageBytes)
	b, _ := pool.Acquire()
	recv := mustSQE(t, r)
	recv.PrepRecv(accepted.Res, b, 0, PageBytes, 0)
	recv.SetUserData(4)
	if cqe := waitFor(t, r, 4, &others); cqe.Res != 0 {
		t.Fatalf("recv after peer shutdown: res %d (%v), want EOF", cqe.Res, cqe.Err())
	}
	pool.Reclaim(b)
}

// TestLinkTimeoutCancelsRecv bounds a RECV on an idle socket with a linked
// 20 ms LINK_TIMEOUT: the recv must end with ECANCELED and the timeout with
// ETIME.
func TestLinkTimeoutCancelsRecv(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	_, server := connectedPair(t, r)
	pool := newTestPool(t, 1, PageBytes)
	b, _ := pool.Acquire()
	recv := mustSQE(t, r)
	recv.PrepRecv(server, b, 0, PageBytes, 0)
	recv.SetUserData(1)
	recv.Link()
	timeout := mustSQE(t, r)
	r.PrepLinkTimeout(timeout, 20*time.Millisecond, 0)
	timeout.SetUserData(2)
	var others []CQE
	if cqe := waitFor(t, r, 1, &others); cqe.Err() != unix.ECANCELED {
		t.Fatalf("bounded recv: %v, want ECANCELED", cqe.Err())
	}
	pool.Reclaim(b)
	if cqe := waitFor(t, r, 2, &others); cqe.Err() != unix.ETIME {
		t.Fatalf("link timeout: %v, want ETIME", cqe.Err())
	}
}

// TestPollMultishotEventfd polls an eventfd with a multishot POLL_ADD (the
// wake-up path when MSG_RING is missing): each write must post one CQE
// with POLLIN that keeps the poll armed.
func TestPollMultishotEventfd(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	eventfd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(eventfd)
	poll := mustSQE(t, r)
	poll.PrepPollMultishot(int32(eventfd), unix.POLLIN)
	poll.SetUserData(9)
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	var value [8]byte
	var others []CQE
	for round := range 3 {
		value[0] = 1
		writeAll(t, eventfd, value[:])
		cqe := waitFor(t, r, 9, &others)
		if round == 0 && cqe.Err() == unix.EINVAL {
			t.Skip("kernel lacks multishot poll (IORING_POLL_ADD_MULTI, Linux 5.13)")
		}
		if cqe.Res&unix.POLLIN == 0 || !cqe.More() {
			t.Fatalf("round %d: poll res %#x more %v", round, cqe.Res, cqe.More())
		}
		if _, err := unix.Read(eventfd, value[:]); err != nil {
			t.Fatalf("round %d: drain eventfd: %v", round, err)
		}
	}
}

// TestCancelAny cancels every pending op at once (CancelAny|CancelAll, the
// shutdown path): the cancel reports how many it found, and each ends with
// ECANCELED.
func TestCancelAny(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	pool := newTestPool(t, 2, PageBytes)
	var buffers [2]Buf
	for i := range uint64(2) {
		_, server := connectedPair(t, r)
		b, _ := pool.Acquire()
		buffers[i] = b
		recv := mustSQE(t, r)
		recv.PrepRecv(server, b, 0, PageBytes, 0)
		recv.SetUserData(20 + i)
	}
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	cancel := mustSQE(t, r)
	cancel.PrepCancel(0, CancelAny|CancelAll)
	cancel.SetUserData(30)
	var others []CQE
	result := waitFor(t, r, 30, &others)
	if result.Err() == unix.EINVAL {
		for i := range uint64(2) { // Free the buffers before skipping.
			cancel := mustSQE(t, r)
			cancel.PrepCancel(20+i, 0)
			waitFor(t, r, 20+i, &others)
			pool.Reclaim(buffers[i])
		}
		t.Skip("kernel lacks IORING_ASYNC_CANCEL_ANY (Linux 5.19)")
	}
	if cqe := result; cqe.Res != 2 {
		t.Fatalf("cancel any: res %d (%v), want 2 cancelled", cqe.Res, cqe.Err())
	}
	for i := range uint64(2) {
		if cqe := waitFor(t, r, 20+i, &others); cqe.Err() != unix.ECANCELED {
			t.Fatalf("recv %d: %v, want ECANCELED", i, cqe.Err())
		}
		pool.Reclaim(buffers[i])
	}
}
