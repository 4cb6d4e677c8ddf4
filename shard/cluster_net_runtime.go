package shard

import (
	"log/slog"
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// The runtime's second listener (Options.PeerListen): a cluster's replica
// port. The last shard accepts on it (shard 0 already accepts clients) and
// spreads the accepted sockets over the shards round robin through their
// external inboxes; each is served by that shard's peer Handler, which is
// also the Handler of the sockets handed over with Runtime.AdoptPeer.

// peerFrameBytesMax is the largest frame of a peer connection: a vsr
// Prepare holding the largest client batch under its own header, or a
// vsr state chunk, with headroom (vsr's messageBytesMax must not exceed
// it; TestClusterNetLimits checks).
const peerFrameBytesMax = frameBytesMax + 1<<20

// frameBuffer returns a buffer for a frame of size bytes: the pool's up to
// frameBytesMax, Go memory above (only peer frames are larger; Release
// leaves such a buffer to the garbage collector).
func (sh *Shard) frameBuffer(size int) []byte {
	if size > frameBytesMax {
		invariant.Assert(size <= peerFrameBytesMax, "a frame fits the peer frame limit")
		return make([]byte, size)
	}
	return sh.Buffer(size)
}

// peerAcceptSlot is the token slot of the peer listener's accept; the
// client listener's accept uses slot 0.
const peerAcceptSlot = 1

func (sh *Shard) armPeerAccept() {
	invariant.Assert(sh.peerListener >= 0, "peer-accepting shard has a peer listener")
	invariant.Assert(!sh.peerAccepting, "one peer accept armed")
	if err := sh.backend.Accept(sh.peerListener, makeToken(tokenAccept, 0, peerAcceptSlot)); err != nil {
		sh.fail(err)
		return
	}
	sh.peerAccepting = true
}

// onPeerAccept hands an accepted peer socket to the next shard in turn.
func (sh *Shard) onPeerAccept(completion Completion) {
	if !completion.More {
		sh.peerAccepting = false
	}
	if completion.Errno != 0 {
		if completion.Errno != unix.ECANCELED {
			sh.logger.Warn("shard: peer accept failed, retrying", "err", completion.Errno.Error(), "after", acceptRetryDelay.String())
		}
		if !sh.stopping && !sh.peerAccepting {
			_, err := sh.After(acceptRetryDelay, func(time.Time) {
				if !sh.stopping && !sh.peerAccepting && sh.peerListener >= 0 {
					sh.armPeerAccept()
				}
			})
			if err != nil {
				sh.fail(err)
			}
		}
		return
	}
	fd := completion.Result
	invariant.Assert(fd >= 0, "accepted peer fd is valid")
	if !completion.More && !sh.stopping {
		sh.armPeerAccept()
	}
	rt := sh.runtime
	target := int(rt.peerNext.Add(1)) % len(rt.shards)
	if target == sh.id {
		sh.connCount.Add(1)
		sh.adoptPeer(fd, nil)
		return
	}
	if err := rt.adoptExternal(target, externalConn{fd: fd, peer: true}); err != nil {
		_ = unix.Close(fd) // the target's inbox is full: the peer dials again
	}
}

// stopPeerAccept cancels the peer listener's accept at shutdown; the
// listener closes once the accept's final completion arrived (isDrained).
func (sh *Shard) stopPeerAccept() {
	if !sh.peerAccepting {
		return
	}
	if err := sh.backend.Cancel(sh.peerListener, makeToken(tokenAccept, 0, peerAcceptSlot)); err != nil {
		sh.fail(err)
	}
}

// adoptPeer makes fd one of this shard's peer connections. Sockets reach
// it in either blocking mode (accepted by io_uring, dialed by Go's net
// package); each backend gets the mode its own accepted sockets have.
func (sh *Shard) adoptPeer(fd int, attach any) {
	invariant.Assert(sh.peerHandler != nil, "a peer connection needs a peer handler")
	if err := unix.SetNonblock(fd, sh.backend.Name() == BackendEpoll); err != nil {
		sh.logger.Warn("shard: peer socket mode", "fd", fd, "err", err.Error())
		_ = unix.Close(fd) // unusable socket: the peer dials again
		sh.connCount.Add(-1)
		return
	}
	setPeerTimeouts(fd, sh.logger)
	sh.adoptWith(fd, true, attach)
}

// setPeerTimeouts makes the kernel close a link to a peer host that died
// without a FIN: keepalive probes find a silent receive-only link dead,
// and TCP_USER_TIMEOUT a link whose sent bytes stay unacknowledged.
// Without them such a socket would live for the retransmission timeout
// (about 15 minutes) or forever.
func setPeerTimeouts(fd int, logger *slog.Logger) {
	options := [...]struct{ level, name, value int }{
		{unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1},
		{unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, int(clusterKeepaliveIdle / time.Second)},
		{unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, int(clusterKeepaliveInterval / time.Second)},
		{unix.IPPROTO_TCP, unix.TCP_KEEPCNT, clusterKeepaliveProbes},
		{unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(clusterUnackedTimeout / time.Millisecond)},
	}
	for _, option := range options {
		if err := unix.SetsockoptInt(fd, option.level, option.name, option.value); err != nil {
			// A link without it still works; it only dies slower.
			logger.Warn("shard: peer socket option", "fd", fd, "option", option.name, "err", err.Error())
			return
		}
	}
}
