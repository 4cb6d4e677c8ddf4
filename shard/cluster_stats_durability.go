package shard

import (
	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/wire"
)

// AckDurability names what an acknowledged send to the topic reached, for
// a reply that can say it (the HTTP API's Iggy-Durability header; the TCP
// reply has no field for it). On a single node it is the topic's
// durability: memory, written or persisted. In a cluster a send is
// acknowledged once a quorum of replicas holds it: persisted when the
// topic's durability is persisted (each counted replica synced its journal
// before it acknowledged), replicated otherwise (a quorum wrote it, without
// a storage barrier). false when the topic is not in the published view.
// Durability is fixed at creation, so the answer holds for every send the
// topic took; any thread.
func (s *Server) AckDurability(stream, topic wire.Identifier) (string, bool) {
	view := s.view.Load()
	if view == nil {
		return "", false
	}
	found := topicOf(view.streamOf(stream), topic)
	if found == nil {
		return "", false
	}
	durability := engine.Durability(found.Config.Durability)
	if s.options.Cluster == nil {
		return durability.String(), true
	}
	if durability == engine.DurabilityPersisted {
		return wire.DurabilityPersisted, true
	}
	return wire.DurabilityReplicated, true
}
