package shard

import (
	"errors"
	"testing"
	"time"

	"github.com/whippetio/whippet/vsr"
)

// TestClusterRequestsExpireReplied: a proposal the primary reported
// committed whose apply here never comes is given up a lifetime after the
// commit (its client learns the outcome is unknown); one committed lately,
// and the unclaimed rest of a half-applied batch before its lifetime, stay.
func TestClusterRequestsExpireReplied(t *testing.T) {
	const lifetime = time.Second
	var failed []error
	fail := func(_ *ClusterRequest, err error) { failed = append(failed, err) }
	now := time.Now()
	old := &clusterProposal{number: 1, state: requestReplied, created: now.Add(-3 * lifetime),
		replied: now.Add(-2 * lifetime), requests: []*ClusterRequest{{Failed: fail}, {Failed: fail}}}
	old.claimed = 1 // its first request applied; the second never does
	fresh := &clusterProposal{number: 2, state: requestReplied, created: now.Add(-3 * lifetime),
		replied: now, requests: []*ClusterRequest{{Failed: fail}}}
	sent := &clusterProposal{number: 3, state: requestSent, created: now, requests: []*ClusterRequest{{Failed: fail}}}
	rs := &clusterRequests{proposals: []*clusterProposal{old, fresh, sent}, count: 3}
	rs.expire(lifetime)
	if len(failed) != 1 || !errors.Is(failed[0], ErrClusterOutcomeUnknown) {
		t.Fatalf("failed %v, want one ErrClusterOutcomeUnknown", failed)
	}
	if len(rs.proposals) != 2 || rs.proposals[0] != fresh || rs.proposals[1] != sent || rs.count != 2 {
		t.Fatalf("kept %d proposals, count %d", len(rs.proposals), rs.count)
	}
}

// TestClusterDeferredBounded: messages held for the next timer turn stop
// at the count and byte limits; the rest are dropped and counted.
func TestClusterDeferredBounded(t *testing.T) {
	cs := &ClusterShard{deferredArmed: true} // a drain is armed: no timer needed
	message := make([]byte, vsr.HeaderBytes)
	for range clusterDeferredMessagesMax + 10 {
		cs.deferDeliver(1, message)
	}
	if len(cs.deferred) != clusterDeferredMessagesMax || cs.deferredDropped != 10 {
		t.Fatalf("held %d dropped %d", len(cs.deferred), cs.deferredDropped)
	}
	cs = &ClusterShard{deferredArmed: true}
	big := make([]byte, clusterDeferredBytesMax/2+1)
	cs.deferDeliver(1, big)
	cs.deferDeliver(1, big)
	if len(cs.deferred) != 1 || cs.deferredBytes != len(big) || cs.deferredDropped != 1 {
		t.Fatalf("held %d (%d bytes) dropped %d", len(cs.deferred), cs.deferredBytes, cs.deferredDropped)
	}
}

// TestClusterSenderMatches: a replica's own messages must name the link's
// authenticated peer; requests, replies and prepares carry other headers.
func TestClusterSenderMatches(t *testing.T) {
	for _, command := range []vsr.Command{vsr.CommandPrepareOK, vsr.CommandCommit, vsr.CommandStartViewChange,
		vsr.CommandDoViewChange, vsr.CommandStartView, vsr.CommandRecovery, vsr.CommandRequestState, vsr.CommandState} {
		h := vsr.Header{Command: command, Replica: 2}
		if !senderMatches(&h, 2) {
			t.Fatalf("command %d from its replica refused", command)
		}
		if senderMatches(&h, 1) {
			t.Fatalf("command %d naming replica 2 taken from peer 1", command)
		}
	}
	for _, command := range []vsr.Command{vsr.CommandRequest, vsr.CommandReply, vsr.CommandPrepare} {
		h := vsr.Header{Command: command, Replica: 0}
		if !senderMatches(&h, 1) {
			t.Fatalf("command %d relayed by peer 1 refused", command)
		}
	}
}

// TestClusterProposalAgesWithItsRequest: a request that waited (its node
// stopped, a full pipeline) before it was proposed expires a lifetime
// after it was submitted, not after the proposal was made, so a node
// resumed after a long stop does not resend what its client gave up on.
func TestClusterProposalAgesWithItsRequest(t *testing.T) {
	const lifetime = time.Second
	var failed []error
	g := &ClusterGroup{shard: &ClusterShard{cluster: &Cluster{}}, id: 1}
	rs := &g.requests
	req := &ClusterRequest{Message: make([]byte, vsr.HeaderBytes+1), submitted: time.Now().Add(-2 * lifetime),
		Failed: func(_ *ClusterRequest, err error) { failed = append(failed, err) }}
	rs.waiting, rs.count = []*ClusterRequest{req}, 1
	p := g.propose()
	if !p.created.Equal(req.submitted) {
		t.Fatalf("the proposal dates from %v, its request from %v", p.created, req.submitted)
	}
	rs.expire(lifetime)
	if len(failed) != 1 || !errors.Is(failed[0], ErrClusterOutcomeUnknown) || len(rs.proposals) != 0 {
		t.Fatalf("failed %v, proposals left %d", failed, len(rs.proposals))
	}
}
