package shard

import "time"

// Limits of the replica transport (cluster_net*.go); TestClusterNetLimits
// checks how they relate to each other and to the runtime's.
const (
	// clusterPeersMax bounds the nodes of a cluster, this one included
	// (vsr's replicaCountMax: acknowledgements are a 16-bit-wide set).
	clusterPeersMax = 16

	// clusterMessageBytesMax is the largest vsr message a link carries,
	// header included: a peer connection's largest frame, the largest
	// client frame plus headroom, so a Prepare holding the largest batch
	// the front admits fits with any header vsr puts around it. A frame
	// declaring more closes the link; Send drops a larger message
	// (DroppedLarge).
	clusterMessageBytesMax = peerFrameBytesMax

	// clusterQueueBytesMax bounds the message bytes queued for one peer
	// and not yet handed to its connection; Send drops beyond it (vsr
	// retries what matters). Two largest messages fit, so one large
	// Prepare never starves the heartbeats behind it. It is a bound, not
	// an allocation: queued messages are copies sized to fit.
	clusterQueueBytesMax = 2 * clusterMessageBytesMax

	// clusterQueueMessagesMax bounds the messages queued for one peer.
	clusterQueueMessagesMax = 4096

	// clusterBatchBytesMax is how many queued bytes one send buffer
	// gathers: small messages travel together, one syscall for many.
	clusterBatchBytesMax = 1 << 20

	// clusterConnBytesMax bounds the bytes handed to a link's connection
	// and not yet sent; beyond it messages wait in the peer's queue (where
	// Send can see the limit). One message larger than it still goes.
	clusterConnBytesMax = 4 << 20

	// clusterConnBuffersMax bounds the buffers handed to a link's
	// connection; within the connection's push queue.
	clusterConnBuffersMax = 16

	// clusterDirectBytesMin is the smallest message the owner shard hands
	// its connection straight away when it has room, in one copy instead
	// of two; smaller ones go through the queue to travel in batches.
	clusterDirectBytesMin = 64 << 10

	// clusterHandshakeTimeout bounds a handshake, either side, and a dial.
	clusterHandshakeTimeout = 2 * time.Second

	// clusterLinkStableMin is how long a link must have been up for its
	// dialer to redial at once when it closes; a shorter-lived link backs
	// off like a failed dial, so links that close as they open (two nodes
	// configured with one replica id) do not flap in a tight loop.
	clusterLinkStableMin = time.Second

	// clusterPendingInboundMax bounds the inbound links authenticating at
	// once: a flood of strangers, each held up to clusterHandshakeTimeout,
	// cannot take every connection slot. A cluster's nodes need one each.
	clusterPendingInboundMax = 64

	// clusterDialBackoffMin and clusterDialBackoffMax bound the wait
	// between dials to a peer that is down; it doubles per failure, with
	// jitter. The maximum is well under the failover budget (1 s), so a
	// restarted peer is linked again quickly.
	clusterDialBackoffMin = 10 * time.Millisecond
	clusterDialBackoffMax = 500 * time.Millisecond

	// clusterKeepaliveIdle, clusterKeepaliveInterval and
	// clusterKeepaliveProbes find a link to a dead host that carries
	// nothing this way (an inbound link) within about 10 s; vsr's
	// heartbeats keep live links busy, so the probes cost nothing there.
	clusterKeepaliveIdle     = 5 * time.Second
	clusterKeepaliveInterval = time.Second
	clusterKeepaliveProbes   = 5

	// clusterUnackedTimeout closes a link whose sent bytes the peer has
	// not acknowledged for this long (TCP_USER_TIMEOUT): its host is gone.
	clusterUnackedTimeout = 10 * time.Second

	// clusterWakeRetryDelay is how long a Send waits before it retries
	// waking the link's owner shard when the cross-shard queue was full.
	clusterWakeRetryDelay = time.Millisecond

	// clusterRefusalLogInterval spaces the log lines about refused
	// inbound links (strangers, wrong secrets): one line per remote host
	// and reason per interval, with the count of those it stands for.
	clusterRefusalLogInterval = 10 * time.Minute

	// clusterRefusalKeysMax bounds the remembered (host, reason) pairs.
	clusterRefusalKeysMax = 256

	// clusterSecretBytesMin is the shortest shared secret accepted (the
	// configuration's rule; an HMAC key shorter than its hash is weak).
	clusterSecretBytesMin = 32

	// clusterNetMessageFlush is the cross-shard message kind that wakes a
	// link's owner shard to send what other shards queued.
	clusterNetMessageFlush uint32 = 0xC1A5_0001
)
