package shard

import (
	"testing"

	"github.com/whippetio/whippet/engine/replicalog"
	"github.com/whippetio/whippet/vsr"
)

// TestClusterLimits checks how the group host's limits relate to vsr's,
// the journal's and the runtime's; each check says why it must hold.
func TestClusterLimits(t *testing.T) {
	checks := []struct {
		ok  bool
		why string
	}{
		{clusterJournalSlotCount >= 2*clusterPipelineLen, "vsr: a journal holds a whole pipeline plus committed ops to repair peers from"},
		{clusterJournalSlotCount <= replicalog.SlotCountMax, "the journal file holds every slot"},
		{replicalog.MessageBytesMax >= vsr.MessageBytesMax, "the journal stores any message vsr sends"},
		{clusterInboxBytesMax >= vsr.MessageBytesMax, "a busy group holds at least one message of any size"},
		{clusterRequestBytesMax >= vsr.MessageBytesMax, "a group holds at least one request of any size"},
		{clusterRequestsPerGroupMax >= clusterPipelineLen, "this node's requests can fill a pipeline"},
		{clusterClientsMax >= 16*shardCountMax, "every shard of every node has a client table row"},
		{clusterMessageBase > dataMessageLast || clusterMessageLast < dataMessageBase, "message kinds do not overlap the data plane's"},
		{clusterProposalBytesMax+vsr.HeaderBytes <= vsr.MessageBytesMax, "a batch fits one message"},
		{clusterProposalRequestsMax <= clusterRequestsPerGroupMax, "a batch holds requests a group may hold"},
		{clusterHeartbeatTicksMin >= 20, "the derived timeouts (a twentieth of the heartbeat) are at least a tick"},
	}
	for _, check := range checks {
		if !check.ok {
			t.Error(check.why)
		}
	}
}
