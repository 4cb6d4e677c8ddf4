package shard

import (
	"crypto/hmac"
	cryptorand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/vsr"
)

// Errors an inbound replica link closes with.
var (
	// ErrLinkReplaced: the same peer authenticated a newer link.
	ErrLinkReplaced = errors.New("shard: cluster link replaced by a newer one")
	// ErrLinkFrame: a frame failed vsr validation or named another cluster.
	ErrLinkFrame = errors.New("shard: cluster link frame rejected")
	// ErrLinkUnexpected: bytes arrived on a link's send-only side.
	ErrLinkUnexpected = errors.New("shard: cluster link sent unexpected bytes")
)

// vsrSizeOffset is where a vsr header keeps the message's whole size (u32
// little endian; vsr/doc.go draws the header), and vsrHeaderBytes the
// header's size, the smallest message.
const (
	vsrSizeOffset  = 24
	vsrHeaderBytes = vsr.HeaderBytes
)

// netHandler is a shard's peer Handler: the acceptor side of inbound links
// and the send side of the outbound links the shard owns.
type netHandler struct {
	net   *ClusterNet
	shard *Shard
}

// netInbound is attached to an inbound link's connection.
type netInbound struct {
	challenge [handshakeNonceBytes]byte
	timer     TimerID
	remote    string // the peer's address, for the log
	authed    bool
	pending   bool // counted in ClusterNet.pendingInbound
	refused   bool // counted as a refusal already
	closed    bool
	replica   int
	gen       uint64
}

var (
	_ Handler          = (*netHandler)(nil)
	_ connOpener       = (*netHandler)(nil)
	_ connSentNotifier = (*netHandler)(nil)
	_ connFrameSizer   = (*netHandler)(nil)
	_ shardStopper     = (*netHandler)(nil)
)

// onOpen starts an inbound link's handshake (challenge out, deadline
// armed), or brings up an outbound link.
func (h *netHandler) onOpen(conn *Conn) {
	if out, ok := conn.Attached().(*netOutbound); ok {
		out.link.onOpen(conn, out)
		return
	}
	invariant.Assert(conn.Attached() == nil, "an accepted peer connection starts bare")
	in := &netInbound{replica: -1, pending: true}
	if sockaddr, err := unix.Getpeername(conn.fd); err == nil {
		if address := tcpAddr(sockaddr); address != nil {
			in.remote = address.String()
		}
	}
	conn.Attach(in)
	if h.net.pendingInbound.Add(1) > clusterPendingInboundMax {
		in.refuse(h.net, ErrHandshakeBusy)
		conn.close(ErrHandshakeBusy)
		return
	}
	if _, err := cryptorand.Read(in.challenge[:]); err != nil {
		conn.close(fmt.Errorf("shard: cluster challenge: %w", err))
		return
	}
	timer, err := h.shard.After(clusterHandshakeTimeout, func(time.Time) {
		if !in.authed && !in.closed {
			in.refuse(h.net, ErrHandshakeTimeout)
			conn.close(ErrHandshakeTimeout)
		}
	})
	if err != nil {
		conn.close(fmt.Errorf("shard: cluster handshake deadline: %w", err))
		return
	}
	in.timer = timer
	ask := h.shard.Buffer(handshakeAskBytes)
	encodeAsk(ask, h.net.options.Cluster, &in.challenge)
	if err := conn.Send(ask); err != nil {
		conn.close(err) // Send released ask: only a full push queue hands it back, and this is the first
	}
}

// FrameBytes is never called: connFrameBytes sizes each connection's
// frames by its side and stage.
func (h *netHandler) FrameBytes([]byte) (int, error) { return 0, ErrLinkUnexpected }

// connFrameBytes sizes the handshake's auth frame, then vsr messages.
func (h *netHandler) connFrameBytes(conn *Conn, head []byte) (int, error) {
	in, ok := conn.Attached().(*netInbound)
	if !ok {
		return 0, ErrLinkUnexpected // an outbound link only sends
	}
	if !in.authed {
		size, err := handshakePrefix(head, handshakeKindAuth)
		if err != nil {
			in.refuse(h.net, err)
		}
		return size, err
	}
	if len(head) < vsrSizeOffset+4 {
		return 0, nil
	}
	size := int(binary.LittleEndian.Uint32(head[vsrSizeOffset:]))
	if size < vsrHeaderBytes || size > clusterMessageBytesMax {
		h.net.stats.framesRejected.Add(1)
		h.net.logFrame(in.replica, fmt.Errorf("declared size %d outside %d..%d", size, vsrHeaderBytes, clusterMessageBytesMax))
		return 0, fmt.Errorf("%w: size %d", ErrLinkFrame, size)
	}
	return size, nil
}

// OnFrame takes an inbound link's auth frame, then its messages.
func (h *netHandler) OnFrame(conn *Conn, frame []byte) {
	in, ok := conn.Attached().(*netInbound)
	invariant.Assert(ok, "frames arrive on inbound links only")
	if !in.authed {
		h.onAuth(conn, in, frame)
		return
	}
	h.onMessage(conn, in, frame)
}

// onAuth checks the dialer's proof; a good one is answered with the
// verdict, a bad one closes the link.
func (h *netHandler) onAuth(conn *Conn, in *netInbound, frame []byte) {
	n := h.net
	var auth handshakeAuth
	err := decodeAuth(frame, &auth)
	h.shard.Release(frame)
	switch {
	case err != nil:
	case auth.cluster != n.options.Cluster:
		err = fmt.Errorf("%w: %#x", ErrHandshakeCluster, auth.cluster)
	case int(auth.replica) >= len(n.links) || int(auth.replica) == n.options.Replica:
		err = fmt.Errorf("%w: %d", ErrHandshakeReplica, auth.replica)
	default:
		want := dialerMAC(n.options.Secret, &in.challenge, auth.cluster, auth.replica)
		if !hmac.Equal(want[:], auth.mac[:]) {
			err = ErrHandshakeMAC
		}
	}
	if err != nil {
		conn.consumed()
		in.refuse(n, err)
		conn.close(err)
		return
	}
	in.authed = true
	in.unpend(n)
	in.replica = int(auth.replica)
	in.gen = n.inboundGen[in.replica].Add(1)
	h.shard.Stop(in.timer)
	n.logger.Info("cluster: accepted a replica link", "peer", in.replica, "remote", in.remote, "shard", h.shard.id)
	mac := acceptorMAC(n.options.Secret, &auth.nonce, auth.cluster, uint32(n.options.Replica), &in.challenge)
	verdict := h.shard.Buffer(handshakeVerdictBytes)
	encodeVerdict(verdict, uint32(n.options.Replica), &mac)
	_ = conn.Reply(verdict) // a closed link dropped it; OnClose reports that
}

// onMessage verifies one vsr message and delivers it.
func (h *netHandler) onMessage(conn *Conn, in *netInbound, frame []byte) {
	n := h.net
	if n.inboundGen[in.replica].Load() != in.gen {
		// Two nodes configured with one replica id would replace each
		// other's link at every frame: this line shows it.
		n.logger.Info("cluster: closing a replica link replaced by a newer one", "peer", in.replica)
		h.shard.Release(frame)
		conn.consumed()
		conn.close(ErrLinkReplaced)
		return
	}
	var header vsr.Header
	err := vsr.DecodeMessage(frame, &header)
	if err == nil && header.Cluster != n.options.Cluster {
		err = vsr.ErrCluster
	}
	if err != nil {
		h.shard.Release(frame)
		conn.consumed()
		n.stats.framesRejected.Add(1)
		n.logFrame(in.replica, err)
		conn.close(fmt.Errorf("%w: %w", ErrLinkFrame, err))
		return
	}
	n.stats.messagesReceived.Add(1)
	n.stats.bytesReceived.Add(uint64(len(frame)))
	n.options.Deliver(h.shard, in.replica, h.keepable(frame))
	conn.consumed()
}

// keepable turns a received frame into a message its receiver may keep:
// the transport never reuses it. vsr's Ready may reference a message
// Step received (a backup forwards the Prepare it got, sent once the
// batch's writes are done), so a frame recycled for the next receive
// would go out corrupted. A frame in Go memory (the epoll backend's, or
// one above the pool's classes) is handed over as is, for the GC to take
// back; one in io_uring's pool memory is copied out and released.
func (h *netHandler) keepable(frame []byte) []byte {
	if h.shard.backend.Name() == BackendEpoll || !h.shard.backend.Direct(frame) {
		return frame
	}
	message := make([]byte, len(frame))
	copy(message, frame)
	h.shard.Release(frame)
	return message
}

// OnClose ends a link: an outbound one redials, an inbound one is gone.
func (h *netHandler) OnClose(conn *Conn, err error) {
	switch side := conn.Attached().(type) {
	case *netOutbound:
		side.link.onClose(conn, err)
	case *netInbound:
		side.closed = true
		side.unpend(h.net)
		if !side.authed {
			h.shard.Stop(side.timer)
			side.refuse(h.net, ErrHandshakeClosed) // unless refused already: it left before proving itself
		}
	}
}

// onSent lets an outbound link hand its connection more.
func (h *netHandler) onSent(conn *Conn) {
	if out, ok := conn.Attached().(*netOutbound); ok {
		out.link.onSent(conn)
	}
}

// onStopping closes the outbound links the stopping shard owns: replica
// traffic is best effort (vsr retries), and a stalled peer must not hold
// the shutdown's drain until its deadline.
func (h *netHandler) onStopping(sh *Shard) {
	for _, link := range h.net.links {
		if link != nil && link.owner == sh.id && link.conn != nil {
			link.conn.close(ErrConnClosed)
		}
	}
}

// refuse counts and logs the link's refusal, once.
func (in *netInbound) refuse(n *ClusterNet, err error) {
	if !in.refused {
		in.refused = true
		n.refused(err, in.remote)
	}
}

// unpend ends the link's count among the unauthenticated ones.
func (in *netInbound) unpend(n *ClusterNet) {
	if in.pending {
		in.pending = false
		n.pendingInbound.Add(-1)
	}
}

// refused counts an inbound link refused before authenticating and logs
// it: one line per remote host and reason per clusterRefusalLogInterval,
// so a misconfigured peer redialing all day is one line, not thousands.
func (n *ClusterNet) refused(err error, remote string) {
	n.stats.handshakeRefused.Add(1)
	host, _, splitErr := net.SplitHostPort(remote)
	if splitErr != nil {
		host = remote
	}
	if quiet, ok := n.refusals.admit(host+" "+err.Error(), time.Now()); ok {
		n.logger.Warn("cluster: refused a replica link", "remote", remote, "err", err.Error(),
			"same_refusals_not_logged", quiet)
	}
}

// refusalLog remembers which refusals were logged lately, for at most
// clusterRefusalKeysMax keys (beyond, it forgets them all and starts
// over: a flood of distinct strangers logs at most that many lines per
// interval).
type refusalLog struct {
	mu   sync.Mutex
	seen map[string]refusalSeen
}

type refusalSeen struct {
	logged time.Time
	quiet  uint64
}

// admit reports whether to log a refusal under key now, and how many of
// the same went unlogged since the last line.
func (r *refusalLog) admit(key string, now time.Time) (uint64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil || len(r.seen) >= clusterRefusalKeysMax {
		r.seen = make(map[string]refusalSeen)
	}
	seen, ok := r.seen[key]
	if ok && now.Sub(seen.logged) < clusterRefusalLogInterval {
		seen.quiet++
		r.seen[key] = seen
		return 0, false
	}
	r.seen[key] = refusalSeen{logged: now}
	return seen.quiet, true
}

// logFrame logs a rejected frame; the link closes, so this is at most one
// line per link.
func (n *ClusterNet) logFrame(replica int, err error) {
	n.logger.Warn("cluster: closing a replica link on a bad frame", "peer", replica, "err", err.Error())
}
