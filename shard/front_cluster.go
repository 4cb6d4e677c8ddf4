package shard

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/whippetio/whippet/wire"
)

// ClusterConfig is a node's cluster configuration as configs maps it:
// the roster, this node's place in it, the replicas' shared secret and
// timing. The zero value (Enabled false) runs a single node that reports
// itself as the only, leading node.
type ClusterConfig struct {
	Enabled bool
	// ID is the vsr cluster id: every message between replicas carries
	// it, so two clusters sharing a network ignore each other. Nonzero
	// when Enabled.
	ID uint64
	// Replica is this node's index into Nodes (its vsr replica id).
	Replica int
	// Nodes is the roster, indexed by replica id. Every node is a replica
	// of every group.
	Nodes []ClusterNode
	// Secret authenticates replica links (the handshake's HMAC key).
	Secret []byte
	// Tick is how often each group's replica ticks; HeartbeatTimeout is
	// how long a backup waits for its primary before a view change.
	Tick             time.Duration
	HeartbeatTimeout time.Duration
}

// ClusterNode is one node of the roster.
type ClusterNode struct {
	Name string
	// Address is where clients connect (host:port).
	Address string
	// ReplicaAddress is where the other replicas connect (host:port).
	ReplicaAddress string
}

// ReplicaAddresses lists every node's replica address by replica id.
func (o *ClusterConfig) ReplicaAddresses() []string {
	addresses := make([]string, len(o.Nodes))
	for i, node := range o.Nodes {
		addresses[i] = node.ReplicaAddress
	}
	return addresses
}

// NetOptions returns the replica transport's options for this node;
// the caller sets Deliver and Logger.
func (o *ClusterConfig) NetOptions() ClusterNetOptions {
	return ClusterNetOptions{Cluster: o.ID, Replica: o.Replica, ReplicaAddresses: o.ReplicaAddresses(), Secret: o.Secret}
}

// ClusterView is what GetClusterMetadata reports of the replication
// layer. The front calls it from any shard thread, concurrently and on
// the request path: implementations must be safe for that and must not
// block.
type ClusterView interface {
	// MetadataPrimary returns the replica this node believes is primary
	// of the metadata group (group 0), and false while that group is not
	// in normal status (a view change, or recovery): then no node is
	// reported as leader and clients re-ask (PROTOCOL.md §11 step 4).
	MetadataPrimary() (replica int, ok bool)
	// Connected reports whether an authenticated link with replica is up.
	// It is not asked about this node itself.
	Connected(replica int) bool
}

// Roster limits: vsr's replica count fits in a byte and the Go SDK
// rejects more than 64 nodes in a cluster metadata reply.
const clusterNodesMax = 16

// validate checks what the replication layer and the roster report rely
// on; configs names the user's keys before this runs.
func (o *ClusterConfig) validate() error {
	if !o.Enabled {
		return nil
	}
	switch {
	case o.ID == 0:
		return fmt.Errorf("%w: cluster id 0", ErrServerOptions)
	case len(o.Nodes) == 0 || len(o.Nodes) > clusterNodesMax:
		return fmt.Errorf("%w: %d nodes is outside [1, %d]", ErrServerOptions, len(o.Nodes), clusterNodesMax)
	case o.Replica < 0 || o.Replica >= len(o.Nodes):
		return fmt.Errorf("%w: replica %d of %d nodes", ErrServerOptions, o.Replica, len(o.Nodes))
	}
	for i, node := range o.Nodes {
		if _, _, err := net.SplitHostPort(node.Address); err != nil {
			return fmt.Errorf("%w: node %d address %q: %v", ErrServerOptions, i, node.Address, err)
		}
	}
	return nil
}

// SetClusterView installs the replication layer's view; the roster that
// GetClusterMetadata reports follows it from the next request on. Until
// one is installed a clustered node reports no leader and its peers as
// unreachable.
func (s *Server) SetClusterView(view ClusterView) {
	s.clusterView.Store(&clusterViewBox{view: view})
}

type clusterViewBox struct{ view ClusterView }

func (s *Server) loadClusterView() ClusterView {
	if box := s.clusterView.Load(); box != nil {
		return box.view
	}
	return nil
}

// clusterRoster lists every node of a clustered server as this node sees
// it. localIP is the address the asking client reached this node on and
// localPort this node's client listener port: they stand in for an
// unspecified (wildcard) host and a zero port in the roster.
func clusterRoster(options *ClusterConfig, view ClusterView, localIP string, localPort int) []wire.ClusterNode {
	primary, primaryKnown := -1, false
	if view != nil {
		primary, primaryKnown = view.MetadataPrimary()
	}
	nodes := make([]wire.ClusterNode, len(options.Nodes))
	for i, node := range options.Nodes {
		ip, port := rosterAddress(node, localIP)
		status := wire.NodeUnreachable
		switch {
		case i == options.Replica:
			status = wire.NodeHealthy
			if port == 0 {
				port = localPort
			}
		case view != nil && view.Connected(i):
			status = wire.NodeHealthy
		}
		role := wire.RoleFollower
		if primaryKnown && i == primary {
			role = wire.RoleLeader
		}
		nodes[i] = wire.ClusterNode{Name: node.Name, IP: ip, TCPPort: uint16(port), Role: role, Status: status}
	}
	return nodes
}

// rosterAddress is the host and port clients should dial for node: its
// client address, with a wildcard host replaced by the host of its
// replica address or, failing that, the address the client reached this
// node on (the nodes then share a host).
func rosterAddress(node ClusterNode, localIP string) (string, int) {
	host, portText, err := net.SplitHostPort(node.Address)
	if err != nil {
		return localIP, 0
	}
	port, _ := strconv.Atoi(portText) // validated when the options were built; 0 if not
	if !wildcardHost(host) {
		return host, port
	}
	if replicaHost, _, err := net.SplitHostPort(node.ReplicaAddress); err == nil && !wildcardHost(replicaHost) {
		return replicaHost, port
	}
	return localIP, port
}

func wildcardHost(host string) bool {
	if host == "" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}
