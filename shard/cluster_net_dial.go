package shard

import (
	"context"
	"crypto/hmac"
	cryptorand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The dialer: one goroutine per peer, outside the shards (it blocks in
// dials and handshake reads, with deadlines). It hands each authenticated
// socket to the link's owner shard and waits until that connection
// closes, then dials again. It never runs on a locked thread, so Go's
// network poller serves it promptly (doc.go, on pinned goroutines).

// ErrHandshakeClosed reports a peer that closed during the handshake: it
// refused this node's proof (another secret or cluster), or it is not a
// replica at all.
var ErrHandshakeClosed = errors.New("shard: cluster handshake: peer closed the link")

// dialLoop keeps the link up until ctx ends.
func (l *netLink) dialLoop(ctx context.Context, rt *Runtime) {
	backoff := time.Duration(0)
	failing := ""
	for ctx.Err() == nil {
		l.net.stats.dials.Add(1)
		up, err := l.linkOnce(ctx, rt)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err == nil && up >= clusterLinkStableMin:
			backoff = 0 // it was up a while: dial again at once
			failing = ""
			continue
		case err == nil:
			// Up, then closed at once (a peer replacing it, a bad frame):
			// back off as after a failure, or two links would flap.
		default:
			l.net.stats.dialFailures.Add(1)
			if reason := err.Error(); reason != failing {
				failing = reason // one line per kind of failure, not per retry
				l.net.logger.Warn("cluster: cannot link to peer", "peer", l.peer, "address", l.address, "err", reason)
			}
		}
		backoff = nextBackoff(backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
}

// nextBackoff doubles the wait between failed dials within its bounds,
// with up to a quarter of jitter so restarted nodes do not dial in step.
func nextBackoff(previous time.Duration) time.Duration {
	next := min(max(2*previous, clusterDialBackoffMin), clusterDialBackoffMax)
	return next - time.Duration(rand.Int64N(int64(next/4)+1))
}

// linkOnce dials, authenticates, hands the socket to the owner shard and
// waits until that connection closes; nil when the link was up, with how
// long.
func (l *netLink) linkOnce(ctx context.Context, rt *Runtime) (time.Duration, error) {
	drain(l.up)
	drain(l.down)
	fd, err := l.dial(ctx)
	if err != nil {
		return 0, err
	}
	attempt := l.attempt.Add(1)
	l.pending.Store(attempt)
	if err := rt.AdoptPeer(l.owner, fd, &netOutbound{link: l, attempt: attempt}); err != nil {
		l.pending.Store(0)
		_ = unix.Close(fd) // still ours: AdoptPeer refused it
		return 0, fmt.Errorf("hand the link to shard %d: %w", l.owner, err)
	}
	timer := time.NewTimer(clusterHandshakeTimeout)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return 0, nil
	case <-l.down:
		return 0, errors.New("link closed as it opened")
	case <-timer.C:
		// The owner refused the socket (stopping, or full) or is slow:
		// abandon the attempt, unless it opened meanwhile.
		if l.pending.CompareAndSwap(attempt, 0) {
			return 0, errors.New("the owner shard did not take the link in time")
		}
		<-l.up
	case <-l.up:
	}
	l.net.logger.Info("cluster: linked to peer", "peer", l.peer, "address", l.address)
	began := time.Now()
	select {
	case <-ctx.Done():
	case <-l.down:
	}
	return time.Since(began), nil
}

func drain(ch chan struct{}) {
	select {
	case <-ch:
	default:
	}
}

// dial connects to the peer and runs the dialer's side of the handshake;
// it returns a duplicate of the socket, which the caller owns.
func (l *netLink) dial(ctx context.Context) (int, error) {
	dialer := net.Dialer{Timeout: clusterHandshakeTimeout}
	conn, err := dialer.DialContext(ctx, "tcp", l.address)
	if err != nil {
		return -1, err
	}
	defer conn.Close() // the shard gets a duplicate
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	if err := conn.SetDeadline(time.Now().Add(clusterHandshakeTimeout)); err != nil {
		return -1, err
	}
	if err := l.handshake(conn); err != nil {
		return -1, err
	}
	raw, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	controlErr := raw.Control(func(socket uintptr) {
		fd, err = unix.FcntlInt(socket, unix.F_DUPFD_CLOEXEC, 0)
	})
	if controlErr != nil {
		return -1, controlErr
	}
	return fd, err
}

// handshake proves this node to the acceptor and checks its verdict.
func (l *netLink) handshake(conn net.Conn) error {
	n := l.net
	var frame [handshakeAuthBytes]byte
	if err := readHandshake(conn, frame[:handshakeAskBytes]); err != nil {
		return err
	}
	theirs, challenge, err := decodeAsk(frame[:handshakeAskBytes])
	if err != nil {
		return err
	}
	// Another cluster's acceptor still gets the proof, so it logs why it
	// refuses; this side reports the mismatch rather than the close.
	cluster := n.options.Cluster
	auth := handshakeAuth{cluster: cluster, replica: uint32(n.options.Replica)}
	if _, err := cryptorand.Read(auth.nonce[:]); err != nil {
		return err
	}
	auth.mac = dialerMAC(n.options.Secret, &challenge, cluster, auth.replica)
	encodeAuth(frame[:], &auth)
	if _, err := conn.Write(frame[:]); err != nil {
		return err
	}
	if err := readHandshake(conn, frame[:handshakeVerdictBytes]); err != nil {
		if theirs != cluster {
			return fmt.Errorf("%w: peer is in cluster %#x, this node in %#x", ErrHandshakeCluster, theirs, cluster)
		}
		return err
	}
	replica, mac, err := decodeVerdict(frame[:handshakeVerdictBytes])
	if err != nil {
		return err
	}
	if replica != uint32(l.peer) {
		return fmt.Errorf("%w: replica %d answered at replica %d's address", ErrHandshakeReplica, replica, l.peer)
	}
	want := acceptorMAC(n.options.Secret, &auth.nonce, cluster, replica, &challenge)
	if !hmac.Equal(mac[:], want[:]) {
		return ErrHandshakeMAC
	}
	return nil
}

func readHandshake(conn net.Conn, frame []byte) error {
	_, err := io.ReadFull(conn, frame)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return ErrHandshakeClosed
	}
	return err
}
