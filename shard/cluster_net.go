package shard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/whippetio/whippet/internal/invariant"
)

// ClusterNet is the replica transport of a cluster: it carries vsr
// messages between the nodes, through the shards' rings.
//
//   - Inbound: the runtime's peer listener (Options.PeerListen, set by
//     Install to this node's replica address) accepts; each accepted
//     socket must pass the handshake (cluster_net_handshake.go) within
//     clusterHandshakeTimeout, then carries vsr messages, each verified
//     with vsr.DecodeMessage and handed to Deliver on the shard that owns
//     the socket. A stranger, a wrong secret or cluster, a bad frame, or
//     a silent socket is closed, counted, and logged (rate limited).
//   - Outbound: one link per peer, owned by shard peer mod shard count. A
//     goroutine per peer dials, runs the dialer's side of the handshake
//     with blocking I/O and deadlines, and hands the authenticated socket
//     to the owner shard (Runtime.AdoptPeer); when the link closes it
//     dials again, backing off from clusterDialBackoffMin to
//     clusterDialBackoffMax while the peer stays down.
//   - Send copies a message into the peer's bounded queue from any shard
//     and wakes the owner, which gathers queued messages into pooled send
//     buffers (clusterBatchBytesMax) on the link's connection, at most
//     clusterConnBytesMax unsent at a time. Send never blocks: a peer
//     without a link or with a full queue drops the message (vsr retries).
//
// Invariants:
//
//  1. Only a link's owner shard touches its connection and its sent-bytes
//     accounting; other shards touch only its queue, under the link's
//     mutex, and its atomics.
//  2. Messages Send accepted for one peer from one shard leave in the
//     order Send accepted them, and a link's messages arrive in the order
//     they left; a closed link loses what it had not delivered.
//  3. Deliver sees only messages that passed vsr.DecodeMessage and carry
//     this cluster's id, from a link whose peer proved the secret.
//  4. A peer's queue never holds more than clusterQueueMessagesMax
//     messages or clusterQueueBytesMax bytes.
type ClusterNet struct {
	options ClusterNetOptions
	logger  *slog.Logger
	links   []*netLink // by replica id; nil for this node
	// inboundGen[r] counts the authenticated inbound links from replica r;
	// a link whose generation is not the latest closes at its next frame
	// (the peer restarted and linked again).
	inboundGen []atomic.Uint64
	pools      [netBufClassCount]sync.Pool

	runtime   atomic.Pointer[Runtime]
	startOnce sync.Once
	stopOnce  sync.Once
	ctx       context.Context
	cancel    context.CancelFunc
	dialers   sync.WaitGroup

	// pendingInbound counts inbound links still authenticating, on every
	// shard (bounded by clusterPendingInboundMax).
	pendingInbound atomic.Int32

	stats    netStats
	refusals refusalLog
}

// ClusterNetOptions configures a ClusterNet.
type ClusterNetOptions struct {
	// Cluster is the vsr cluster id; every message and handshake carries it.
	Cluster uint64
	// Replica is this node's index in ReplicaAddresses.
	Replica int
	// ReplicaAddresses lists every node's replica address ("host:port"),
	// indexed by replica id; this node listens on its own.
	ReplicaAddresses []string
	// Listen is the address the replica listener binds, when it is not
	// this node's replica address itself (":7001" behind a NAT or to bind
	// every interface); empty means ReplicaAddresses[Replica].
	Listen string
	// Secret is the shared secret every node holds, at least 32 bytes.
	Secret []byte
	// Deliver receives each verified message on the shard thread that owns
	// the inbound link. msg is the receiver's from then on: the transport
	// never reuses it, so vsr may keep referencing it past Step.
	Deliver func(s *Shard, from int, msg []byte)
	// Logger receives the transport's log lines; nil means slog.Default.
	Logger *slog.Logger
}

// ClusterNetStats are the transport's counters, summed over every link.
type ClusterNetStats struct {
	MessagesSent     uint64 // handed to a link's connection
	BytesSent        uint64 // message bytes handed to a link's connection
	MessagesReceived uint64 // verified and delivered
	BytesReceived    uint64 // message bytes verified and delivered
	DroppedDown      uint64 // Send refused: no link to the peer
	DroppedFull      uint64 // Send refused: the peer's queue was full
	DroppedClosed    uint64 // queued when the link closed, never sent
	DroppedLarge     uint64 // Send refused: larger than ClusterMessageBytesMax
	HandshakeRefused uint64 // inbound links closed before authenticating
	FramesRejected   uint64 // inbound frames failing validation (link closed)
	Dials            uint64 // outbound dial attempts
	DialFailures     uint64 // attempts that did not yield a link
	LinksUp          uint64 // outbound links that came up
}

type netStats struct {
	messagesSent, bytesSent, messagesReceived, bytesReceived atomic.Uint64
	droppedDown, droppedFull, droppedClosed, droppedLarge    atomic.Uint64
	handshakeRefused, framesRejected                         atomic.Uint64
	dials, dialFailures, linksUp                             atomic.Uint64
}

// ClusterMessageBytesMax is the largest message Send takes, header
// included: vsr messages above it cannot cross a link.
const ClusterMessageBytesMax = clusterMessageBytesMax

// ErrClusterNetOptions reports ClusterNetOptions NewClusterNet refuses.
var ErrClusterNetOptions = errors.New("shard: cluster net options")

// NewClusterNet validates o and builds the transport; Install hooks it
// into a runtime's Options, and the runtime's start starts it.
func NewClusterNet(o ClusterNetOptions) (*ClusterNet, error) {
	if err := validateClusterNet(&o); err != nil {
		return nil, err
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	n := &ClusterNet{options: o, logger: logger, inboundGen: make([]atomic.Uint64, len(o.ReplicaAddresses))}
	n.options.Secret = append([]byte(nil), o.Secret...)
	n.options.ReplicaAddresses = append([]string(nil), o.ReplicaAddresses...)
	n.links = make([]*netLink, len(o.ReplicaAddresses))
	for peer, address := range n.options.ReplicaAddresses {
		if peer != o.Replica {
			n.links[peer] = newNetLink(n, peer, address)
		}
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	for class := range n.pools {
		size := poolClassBytesMin << class
		n.pools[class].New = func() any { return &netBuf{bytes: make([]byte, 0, size)} }
	}
	return n, nil
}

func validateClusterNet(o *ClusterNetOptions) error {
	count := len(o.ReplicaAddresses)
	switch {
	case o.Cluster == 0:
		return fmt.Errorf("%w: cluster id is zero", ErrClusterNetOptions)
	case count == 0 || count > clusterPeersMax:
		return fmt.Errorf("%w: %d replica addresses, want 1 to %d", ErrClusterNetOptions, count, clusterPeersMax)
	case o.Replica < 0 || o.Replica >= count:
		return fmt.Errorf("%w: replica %d outside 0..%d", ErrClusterNetOptions, o.Replica, count-1)
	case len(o.Secret) < clusterSecretBytesMin:
		return fmt.Errorf("%w: secret of %d bytes, want at least %d", ErrClusterNetOptions, len(o.Secret), clusterSecretBytesMin)
	case o.Deliver == nil:
		return fmt.Errorf("%w: Deliver is required", ErrClusterNetOptions)
	}
	for replica, address := range o.ReplicaAddresses {
		if address == "" {
			return fmt.Errorf("%w: replica %d has no address", ErrClusterNetOptions, replica)
		}
		for other := range replica {
			if o.ReplicaAddresses[other] == address {
				return fmt.Errorf("%w: replicas %d and %d share the address %q", ErrClusterNetOptions, other, replica, address)
			}
		}
	}
	return nil
}

// Install hooks the transport into a runtime's options, like Data.Install:
// the peer listener on this node's replica address, the peer handlers,
// the owner shards' wake-ups, and the dialers' start and stop. A
// ClusterNet serves one runtime once: the dialers start with its first
// shard and end with its stop; a restarted node builds a new ClusterNet.
func (n *ClusterNet) Install(o Options) Options {
	onStart, onMessage, onStop := o.OnStart, o.OnMessage, o.OnStop
	o.PeerListen = n.options.Listen
	if o.PeerListen == "" {
		o.PeerListen = n.options.ReplicaAddresses[n.options.Replica]
	}
	o.NewPeerHandler = func(sh *Shard) Handler { return &netHandler{net: n, shard: sh} }
	o.OnStart = func(sh *Shard) {
		n.startOnce.Do(func() { n.start(sh.Runtime()) })
		if onStart != nil {
			onStart(sh)
		}
	}
	o.OnMessage = func(sh *Shard, from int, message Message) {
		if message.Kind == clusterNetMessageFlush {
			message.Data.(*netLink).onWake(sh)
			return
		}
		if onMessage != nil {
			onMessage(sh, from, message)
		}
	}
	o.OnStop = func(sh *Shard) {
		n.stopOnce.Do(n.cancel)
		if onStop != nil {
			onStop(sh)
		}
	}
	return o
}

// start records the runtime, places each link on its owner shard, and
// starts the dialers. It runs once, on the first shard to start.
func (n *ClusterNet) start(rt *Runtime) {
	n.runtime.Store(rt)
	for peer, link := range n.links {
		if link == nil {
			continue
		}
		link.owner = peer % len(rt.shards)
		link.wakeRetry = make([]bool, len(rt.shards))
		n.dialers.Add(1)
		go func() {
			defer n.dialers.Done()
			link.dialLoop(n.ctx, rt)
		}()
	}
}

// Send queues msg, a whole vsr message, for replica to; call it on any
// shard's thread (s). It copies msg and never blocks; it returns false
// when the message was dropped: no authenticated link to the peer, its
// queue at clusterQueueMessagesMax or clusterQueueBytesMax, or msg larger
// than ClusterMessageBytesMax.
func (n *ClusterNet) Send(s *Shard, to int, msg []byte) bool {
	invariant.Assert(to >= 0 && to < len(n.links), "cluster send target is a replica")
	invariant.Assert(to != n.options.Replica, "a replica does not send to itself over the network")
	invariant.Assert(len(msg) >= vsrHeaderBytes, "a cluster message holds a vsr header")
	if len(msg) > clusterMessageBytesMax {
		n.stats.droppedLarge.Add(1)
		return false
	}
	link := n.links[to]
	if !link.connected.Load() {
		n.stats.droppedDown.Add(1)
		return false
	}
	if s.id == link.owner && len(msg) >= clusterDirectBytesMin && link.sendDirect(s, msg) {
		return true
	}
	if !link.push(msg) {
		n.stats.droppedFull.Add(1)
		return false
	}
	link.wake(s)
	return true
}

// Connected reports whether the outbound link to replica to is up
// (authenticated and adopted by its owner shard), so Send to it can
// succeed; false for this node itself and for ids outside the cluster.
// Any thread.
func (n *ClusterNet) Connected(to int) bool {
	if to < 0 || to >= len(n.links) || n.links[to] == nil {
		return false
	}
	return n.links[to].connected.Load()
}

// Queued returns the messages and bytes waiting in replica to's queue;
// any thread.
func (n *ClusterNet) Queued(to int) (messages, bytes int) {
	if to < 0 || to >= len(n.links) || n.links[to] == nil {
		return 0, 0
	}
	link := n.links[to]
	link.mu.Lock()
	defer link.mu.Unlock()
	return link.queueLen, link.queueBytes
}

// Stats returns the transport's counters; any thread.
func (n *ClusterNet) Stats() ClusterNetStats {
	s := &n.stats
	return ClusterNetStats{
		MessagesSent: s.messagesSent.Load(), BytesSent: s.bytesSent.Load(),
		MessagesReceived: s.messagesReceived.Load(), BytesReceived: s.bytesReceived.Load(),
		DroppedDown: s.droppedDown.Load(), DroppedFull: s.droppedFull.Load(),
		DroppedClosed: s.droppedClosed.Load(), DroppedLarge: s.droppedLarge.Load(),
		HandshakeRefused: s.handshakeRefused.Load(),
		FramesRejected:   s.framesRejected.Load(), Dials: s.dials.Load(),
		DialFailures: s.dialFailures.Load(), LinksUp: s.linksUp.Load(),
	}
}

// netBuf is one queued message, in a buffer recycled through the
// transport's size-class pools (no allocation on the steady path).
type netBuf struct {
	bytes []byte
}

// netBufClassCount covers poolClassBytesMin up to clusterMessageBytesMax.
const netBufClassCount = poolClassCount + 1

func netBufClass(size int) int {
	if size <= poolClassBytesMin {
		return 0
	}
	return bits.Len(uint(size-1)) - bits.Len(uint(poolClassBytesMin-1))
}

func (n *ClusterNet) getBuf(size int) *netBuf {
	buf := n.pools[netBufClass(size)].Get().(*netBuf)
	buf.bytes = buf.bytes[:size]
	return buf
}

func (n *ClusterNet) putBuf(buf *netBuf) {
	n.pools[netBufClass(cap(buf.bytes))].Put(buf)
}
