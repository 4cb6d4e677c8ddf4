package shard

import "time"

// Named limits of the group host (cluster_host*.go); TestClusterLimits
// checks how they relate.
const (
	// clusterGroupsPerShardMax bounds the groups one shard hosts: the
	// metadata group plus one per partition it owns.
	clusterGroupsPerShardMax = 1 << 16

	// clusterInboxMessagesMax bounds the messages a busy group holds; past
	// it arrivals are dropped (vsr retries everything it sends).
	clusterInboxMessagesMax = 256

	// clusterInboxBytesMax bounds the bytes a busy group holds, so a burst
	// of large prepares cannot take the process's memory; a group always
	// takes one message, whatever its size.
	clusterInboxBytesMax = 256 << 20

	// clusterJournalSlotCount is every group's journal ring.
	clusterJournalSlotCount = 64

	// clusterPipelineLen bounds the ops a group's primary has prepared and
	// not committed.
	clusterPipelineLen = 16

	// clusterClientsMax bounds a group's client table: one client per
	// shard per incarnation of each node.
	clusterClientsMax = 1024

	// clusterRequestsPerGroupMax bounds the requests of this node a group
	// holds (queued, forwarded or prepared, and not yet applied here);
	// past it Submit refuses (TransientNotAccepted).
	clusterRequestsPerGroupMax = 4096

	// clusterRequestBytesMax bounds the bytes of those requests.
	clusterRequestBytesMax = 512 << 20

	// clusterProposalRequestsMax and clusterProposalBytesMax bound the requests
	// one proposal batches: one journal write and fdatasync per replica for
	// all of them, and a prepare small enough not to hold up the chain.
	clusterProposalRequestsMax = 256
	clusterProposalBytesMax    = 1 << 20

	// clusterRequestLifetimeHeartbeats bounds how long this node keeps
	// proposing a request, in heartbeat timeouts (at least
	// clusterRequestLifetimeMin): a failover takes about one, so a request
	// still unanswered after three sat on a node that was cut off (a
	// paused primary), its client has moved on, and landing it later would
	// only put it out of order with what the client sent since.
	clusterRequestLifetimeHeartbeats = 3
	clusterRequestLifetimeMin        = time.Second

	// clusterTickDefault and clusterHeartbeatDefault are the tick and
	// heartbeat timeout unless configured.
	clusterTickDefault      = 10 * time.Millisecond
	clusterHeartbeatDefault = time.Second

	// clusterHeartbeatTicksMin: a heartbeat timeout must span enough ticks
	// to derive the timeouts from it.
	clusterHeartbeatTicksMin = 20
)

// Message kinds of the group host, in a range no other user of Shard.Send
// takes.
const (
	clusterMessageBase    uint32 = 0xC105_0000
	clusterMessageDeliver        = clusterMessageBase + 1 // a vsr message for a group here; Data: *clusterInbound
	clusterMessageLast           = clusterMessageDeliver
)

// clusterPartitionGroupBit marks a partition's group id: the group of
// partition key k is clusterPartitionGroupBit | k.Namespace().
const clusterPartitionGroupBit = 1 << 63
