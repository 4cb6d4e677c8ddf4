package shard

import (
	"context"
	"crypto/hmac"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestClusterNetWrongSecret: a node holding another secret never links
// with the others, either way; each side refuses the other's proof,
// counts it and logs it without a line per retry, and Send to it drops.
func TestClusterNetWrongSecret(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		addresses := freeAddresses(t, 2)
		good := startNetNode(t, netNodeConfig{backend: backend, addresses: addresses, replica: 0})
		other := []byte("another secret of at least 32 bytes, not the cluster's")
		bad := startNetNode(t, netNodeConfig{backend: backend, addresses: addresses, replica: 1, secret: other})
		expectRefusals(t, good, bad)
	})
}

// TestClusterNetWrongCluster: a node of another cluster (same secret)
// never links either.
func TestClusterNetWrongCluster(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		addresses := freeAddresses(t, 2)
		good := startNetNode(t, netNodeConfig{backend: backend, addresses: addresses, replica: 0})
		bad := startNetNode(t, netNodeConfig{backend: backend, addresses: addresses, replica: 1, cluster: testClusterID + 1})
		expectRefusals(t, good, bad)
	})
}

func expectRefusals(t *testing.T, nodes ...*netNode) {
	t.Helper()
	waitUntil(t, 10*time.Second, "several refused dials on both sides", func() bool {
		for _, node := range nodes {
			if stats := node.net.Stats(); stats.HandshakeRefused < 3 || stats.DialFailures < 3 {
				return false
			}
		}
		return true
	})
	for i, node := range nodes {
		peer := 1 - i
		if node.net.Connected(peer) {
			t.Fatalf("node %d linked to a node that cannot prove the cluster's secret", i)
		}
		node.on(0, func(sh *Shard) {
			if node.net.Send(sh, peer, testMessage(testClient(i, 0), 1, 200)) {
				t.Errorf("node %d: Send to an unlinked peer was accepted", i)
			}
		})
		stats := node.net.Stats()
		if stats.LinksUp != 0 || stats.MessagesReceived != 0 || stats.DroppedDown != 1 {
			t.Fatalf("node %d: stats %+v", i, stats)
		}
		// One line per kind of dial failure, not per retry; refusals are
		// rate limited.
		if lines := node.logs.count("cannot link to peer"); lines == 0 || lines > 3 {
			t.Fatalf("node %d: %d dial failure lines for %d failures", i, lines, stats.DialFailures)
		}
		if lines := node.logs.count("refused a replica link"); lines != 1 {
			t.Fatalf("node %d: %d refusal lines for %d refusals", i, lines, stats.HandshakeRefused)
		}
	}
}

// TestClusterNetStranger: a stranger gets a challenge, and sending bytes
// that are not a proof closes its connection at once; so does a dialer
// claiming this node's own replica id or one outside the cluster.
func TestClusterNetStranger(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		addresses := freeAddresses(t, 2)
		node := startNetNode(t, netNodeConfig{backend: backend, addresses: addresses, replica: 0})
		conn := dialStranger(t, addresses[0])
		if _, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: whippet\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		expectClosed(t, conn)
		for _, replica := range []int{0, 2, 1 << 20} {
			conn := dialStranger(t, addresses[0])
			err := fakeHandshake(t, conn, replica, testClusterID, testSecret)
			if !errors.Is(err, ErrHandshakeClosed) {
				t.Fatalf("claiming replica %d: %v, want the acceptor to close", replica, err)
			}
		}
		if stats := node.net.Stats(); stats.HandshakeRefused != 4 || stats.MessagesReceived != 0 {
			t.Fatalf("stats %+v", stats)
		}
	})
}

// TestClusterNetSilentStranger: a stranger that never answers the
// challenge is closed at the handshake deadline.
func TestClusterNetSilentStranger(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the handshake deadline")
	}
	forEachBackend(t, func(t *testing.T, backend string) {
		addresses := freeAddresses(t, 2)
		node := startNetNode(t, netNodeConfig{backend: backend, addresses: addresses, replica: 0})
		conn := dialStranger(t, addresses[0])
		began := time.Now()
		expectClosed(t, conn)
		if waited := time.Since(began); waited < clusterHandshakeTimeout/2 {
			t.Fatalf("closed after %v, before the handshake deadline", waited)
		}
		if stats := node.net.Stats(); stats.HandshakeRefused != 1 {
			t.Fatalf("stats %+v", stats)
		}
	})
}

// TestClusterNetBadFrame: an authenticated peer whose frame fails vsr's
// checks (a flipped body byte) is closed; nothing is delivered.
func TestClusterNetBadFrame(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		addresses := freeAddresses(t, 2)
		node := startNetNode(t, netNodeConfig{backend: backend, addresses: addresses, replica: 0})
		conn := dialStranger(t, addresses[0])
		if err := fakeHandshake(t, conn, 1, testClusterID, testSecret); err != nil {
			t.Fatal(err)
		}
		good := testMessage(testClient(1, 0), 1, 1000)
		corrupt := testMessage(testClient(1, 0), 2, 1000)
		corrupt[600] ^= 1
		if _, err := conn.Write(append(good, corrupt...)); err != nil {
			t.Fatal(err)
		}
		expectClosed(t, conn)
		if got := node.received(testClient(1, 0)); len(got) != 1 || got[0].request != 1 {
			t.Fatalf("delivered %+v, want request 1 alone", got)
		}
		if stats := node.net.Stats(); stats.FramesRejected != 1 || stats.MessagesReceived != 1 {
			t.Fatalf("stats %+v", stats)
		}
		// A header declaring more than a link carries closes it unread.
		conn = dialStranger(t, addresses[0])
		if err := fakeHandshake(t, conn, 1, testClusterID, testSecret); err != nil {
			t.Fatal(err)
		}
		huge := testMessage(testClient(1, 0), 3, 1000)
		binary.LittleEndian.PutUint32(huge[vsrSizeOffset:], clusterMessageBytesMax+1)
		if _, err := conn.Write(huge); err != nil {
			t.Fatal(err)
		}
		expectClosed(t, conn)
		if stats := node.net.Stats(); stats.FramesRejected != 2 || stats.MessagesReceived != 1 {
			t.Fatalf("stats %+v", stats)
		}
	})
}

// dialStranger connects to address.
func dialStranger(t *testing.T, address string) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", address, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// fakeHandshake runs the dialer's side on conn, toward replica 0,
// claiming replica.
func fakeHandshake(t *testing.T, conn net.Conn, replica int, cluster uint64, secret []byte) error {
	t.Helper()
	n, err := NewClusterNet(ClusterNetOptions{Cluster: cluster, Replica: 1,
		ReplicaAddresses: []string{"127.0.0.1:1", "127.0.0.1:2"}, Secret: secret,
		Deliver: func(*Shard, int, []byte) {}})
	if err != nil {
		t.Fatal(err)
	}
	n.options.Replica = replica
	return n.links[0].handshake(conn)
}

// expectClosed reads until the node closes conn.
func expectClosed(t *testing.T, conn net.Conn) {
	t.Helper()
	_, err := io.Copy(io.Discard, conn)
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		t.Fatal("the node did not close the connection")
	}
}

// fakeAcceptor accepts one replica link on listener, as replica, and
// returns the authenticated connection.
func fakeAcceptor(t *testing.T, listener net.Listener, replica int) net.Conn {
	t.Helper()
	conn, err := listener.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	var challenge [handshakeNonceBytes]byte
	challenge[3] = 42
	var frame [handshakeAuthBytes]byte
	encodeAsk(frame[:], testClusterID, &challenge)
	if _, err := conn.Write(frame[:handshakeAskBytes]); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(conn, frame[:]); err != nil {
		t.Fatal(err)
	}
	var auth handshakeAuth
	if err := decodeAuth(frame[:], &auth); err != nil {
		t.Fatal(err)
	}
	want := dialerMAC(testSecret, &challenge, auth.cluster, auth.replica)
	if !hmac.Equal(want[:], auth.mac[:]) {
		t.Fatal("the dialer's proof does not check")
	}
	mac := acceptorMAC(testSecret, &auth.nonce, testClusterID, uint32(replica), &challenge)
	encodeVerdict(frame[:], uint32(replica), &mac)
	if _, err := conn.Write(frame[:handshakeVerdictBytes]); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestClusterNetReplacedLink: when a peer authenticates a second link
// (it restarted), the older link closes at its next frame and only the
// newer one delivers.
func TestClusterNetReplacedLink(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		addresses := freeAddresses(t, 2)
		node := startNetNode(t, netNodeConfig{backend: backend, addresses: addresses, replica: 0})
		client := testClient(1, 0)
		older := dialStranger(t, addresses[0])
		if err := fakeHandshake(t, older, 1, testClusterID, testSecret); err != nil {
			t.Fatal(err)
		}
		if _, err := older.Write(testMessage(client, 1, 500)); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, 10*time.Second, "the first message", func() bool { return len(node.received(client)) == 1 })
		newer := dialStranger(t, addresses[0])
		if err := fakeHandshake(t, newer, 1, testClusterID, testSecret); err != nil {
			t.Fatal(err)
		}
		if _, err := older.Write(testMessage(client, 2, 500)); err != nil {
			t.Fatal(err)
		}
		expectClosed(t, older)
		if _, err := newer.Write(testMessage(client, 3, 500)); err != nil {
			t.Fatal(err)
		}
		expectReceived(t, node, client, []uint64{1, 3})
	})
}

// TestClusterNetStopStalledPeer: a runtime whose link to a peer that
// stopped reading still holds queued messages shuts down at once, without
// waiting for the drain's deadline.
func TestClusterNetStopStalledPeer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer listener.Close()
		addresses := append(freeAddresses(t, 1), listener.Addr().String())
		node := startNetNode(t, netNodeConfig{backend: backend, addresses: addresses, replica: 0})
		fakeAcceptor(t, listener, 1)
		waitUntil(t, 10*time.Second, "the link up", func() bool { return node.net.Connected(1) })
		for request := uint64(1); ; request++ {
			if len(sendSeries(node, 0, 1, 1, request, 1, func(int) int { return 1 << 20 })) == 0 {
				break
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		began := time.Now()
		if err := node.rt.Shutdown(ctx); err != nil {
			t.Fatalf("shutdown: %v", err)
		}
		if took := time.Since(began); took > 2*time.Second {
			t.Fatalf("shutdown took %v", took)
		}
		if stats := node.net.Stats(); stats.DroppedClosed == 0 {
			t.Fatalf("stats %+v: the queued messages were not dropped", stats)
		}
	})
}

// TestClusterNetPendingLimit: at most clusterPendingInboundMax links
// authenticate at once; one more is closed before any challenge, and a
// slot frees as soon as a pending link leaves.
func TestClusterNetPendingLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		addresses := freeAddresses(t, 2)
		node := startNetNode(t, netNodeConfig{backend: backend, addresses: addresses, replica: 0})
		pending := make([]net.Conn, clusterPendingInboundMax)
		for i := range pending {
			pending[i] = dialStranger(t, addresses[0])
			readChallenge(t, pending[i])
		}
		extra := dialStranger(t, addresses[0])
		if n, _ := io.ReadFull(extra, make([]byte, handshakeAskBytes)); n != 0 {
			t.Fatalf("a link beyond the limit got %d challenge bytes", n)
		}
		_ = pending[0].Close()
		waitUntil(t, 10*time.Second, "the left link counted", func() bool { return node.net.Stats().HandshakeRefused == 2 })
		readChallenge(t, dialStranger(t, addresses[0]))
	})
}

func readChallenge(t *testing.T, conn net.Conn) {
	t.Helper()
	ask := make([]byte, handshakeAskBytes)
	if _, err := io.ReadFull(conn, ask); err != nil {
		t.Fatal(err)
	}
	if cluster, _, err := decodeAsk(ask); err != nil || cluster != testClusterID {
		t.Fatalf("challenge: cluster %#x, %v", cluster, err)
	}
}
