package shard

import (
	"crypto/hmac"
	cryptorand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

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
	vsrHeaderBytes = 128
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
	authed    bool
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
)

// onOpen starts an inbound link's handshake (challenge out, deadline
// armed), or brings up an outbound link.
func (h *netHandler) onOpen(conn *Conn) {
	if out, ok := conn.Attached().(*netOutbound); ok {
		out.link.onOpen(conn, out)
		return
	}
	invariant.Assert(conn.Attached() == nil, "an accepted peer connection starts bare")
	in := &netInbound{replica: -1}
	conn.Attach(in)
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
		h.shard.Release(ask)
		conn.close(err)
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
	in.replica = int(auth.replica)
	in.gen = n.inboundGen[in.replica].Add(1)
	h.shard.Stop(in.timer)
	mac := acceptorMAC(n.options.Secret, &auth.nonce, auth.cluster, uint32(n.options.Replica), &in.challenge)
	verdict := h.shard.Buffer(handshakeVerdictBytes)
	encodeVerdict(verdict, uint32(n.options.Replica), &mac)
	_ = conn.Reply(verdict) // a closed link dropped it; OnClose reports that
}

// onMessage verifies one vsr message and delivers it.
func (h *netHandler) onMessage(conn *Conn, in *netInbound, frame []byte) {
	n := h.net
	if n.inboundGen[in.replica].Load() != in.gen {
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
	n.options.Deliver(h.shard, in.replica, frame)
	h.shard.Release(frame)
	conn.consumed()
}

// OnClose ends a link: an outbound one redials, an inbound one is gone.
func (h *netHandler) OnClose(conn *Conn, err error) {
	switch side := conn.Attached().(type) {
	case *netOutbound:
		side.link.onClose(conn, err)
	case *netInbound:
		side.closed = true
		if !side.authed {
			h.shard.Stop(side.timer)
			if !side.refused {
				h.net.refused(ErrHandshakeClosed) // it left before proving itself
			}
		}
	}
}

// onSent lets an outbound link hand its connection more.
func (h *netHandler) onSent(conn *Conn) {
	if out, ok := conn.Attached().(*netOutbound); ok {
		out.link.onSent(conn)
	}
}

// refuse counts and logs the link's refusal, once.
func (in *netInbound) refuse(n *ClusterNet, err error) {
	if !in.refused {
		in.refused = true
		n.refused(err)
	}
}

// refused counts an inbound link refused before authenticating and logs
// it, at most one line per clusterRefusalLogInterval.
func (n *ClusterNet) refused(err error) {
	n.stats.handshakeRefused.Add(1)
	now := time.Now().UnixNano()
	last := n.refusalLast.Load()
	if now-last < int64(clusterRefusalLogInterval) || !n.refusalLast.CompareAndSwap(last, now) {
		n.refusalQuiet.Add(1)
		return
	}
	n.logger.Warn("cluster: refused a replica link", "err", err.Error(), "refusals_not_logged", n.refusalQuiet.Swap(0))
}

// logFrame logs a rejected frame; the link closes, so this is at most one
// line per link.
func (n *ClusterNet) logFrame(replica int, err error) {
	n.logger.Warn("cluster: closing a replica link on a bad frame", "peer", replica, "err", err.Error())
}
