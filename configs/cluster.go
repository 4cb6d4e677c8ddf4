package configs

import (
	"crypto/sha256"
	"encoding/binary"
	"net"
	"strconv"
	"strings"

	"github.com/whippetio/whippet/shard"
)

// EnvReplicaID names the variable that sets cluster.replica_id; the
// server's --replica-id flag overrides it.
const EnvReplicaID = "WHIPPET_CLUSTER_REPLICA_ID"

// ClusterID derives the vsr cluster id from the cluster name: the first 8
// bytes of SHA-256(name), little endian. Every replica message carries
// it, so nodes of two clusters that reach each other by mistake ignore
// each other. Zero is no cluster to vsr, so a name hashing to it gets 1.
func ClusterID(name string) uint64 {
	sum := sha256.Sum256([]byte(name))
	id := binary.LittleEndian.Uint64(sum[:8])
	if id == 0 {
		return 1
	}
	return id
}

// ClusterConfig maps [cluster] to the node's cluster configuration (the
// roster, its replica id, the secret and timing), from which the server
// builds its replication layer; the zero value when the cluster is off.
func (c *Config) ClusterConfig() shard.ClusterConfig {
	cl := c.Cluster
	if !cl.Enabled {
		return shard.ClusterConfig{}
	}
	nodes := make([]shard.ClusterNode, len(cl.Nodes))
	for i, node := range cl.Nodes {
		nodes[i] = shard.ClusterNode{Name: node.Name, Address: node.Address, ReplicaAddress: node.ReplicaAddress}
	}
	return shard.ClusterConfig{Enabled: true, ID: ClusterID(cl.Name), Replica: cl.ReplicaID, Nodes: nodes,
		Secret: []byte(cl.Auth.SharedSecret), Tick: cl.Tick.Std(), HeartbeatTimeout: cl.HeartbeatTimeout.Std()}
}

// validateCluster checks [cluster] when it is enabled. Every node's
// addresses must name a real port: the other nodes dial them, and clients
// are redirected to them.
func (c *Config) validateCluster() error {
	cl := c.Cluster
	if !cl.Enabled {
		return nil
	}
	if strings.TrimSpace(cl.Name) == "" {
		return invalid("cluster.name", "must not be empty: the cluster id is derived from it")
	}
	if len(cl.Nodes) < 1 || len(cl.Nodes) > clusterNodesMax {
		return invalid("cluster.nodes", "%d nodes is outside [1, %d]", len(cl.Nodes), clusterNodesMax)
	}
	if cl.ReplicaID < 0 || cl.ReplicaID >= len(cl.Nodes) {
		return invalid("cluster.replica_id", "%d is not an index into cluster.nodes (%d nodes)", cl.ReplicaID, len(cl.Nodes))
	}
	if len(cl.Auth.SharedSecret) < sharedSecretBytesMin {
		return invalid("cluster.auth.shared_secret", "must be at least %d bytes when the cluster is enabled", sharedSecretBytesMin)
	}
	if cl.Tick < clusterTickMin {
		return invalid("cluster.tick", "must be at least 1 ms")
	}
	if cl.HeartbeatTimeout < clusterHeartbeatTicksMin*cl.Tick {
		return invalid("cluster.heartbeat_timeout", "must be at least %d × cluster.tick (%v)", clusterHeartbeatTicksMin,
			clusterHeartbeatTicksMin*cl.Tick)
	}
	return validateClusterNodes(cl.Nodes)
}

// validateClusterNodes checks each node's name and addresses, and that no
// two nodes share one.
func validateClusterNodes(nodes []ClusterNode) error {
	seen := make(map[string]string, 3*len(nodes))
	for i, node := range nodes {
		prefix := "cluster.nodes[" + strconv.Itoa(i) + "]"
		if strings.TrimSpace(node.Name) == "" {
			return invalid(prefix+".name", "must not be empty")
		}
		for _, field := range []struct{ key, value string }{
			{prefix + ".name", "name " + node.Name},
			{prefix + ".address", node.Address},
			{prefix + ".replica_address", node.ReplicaAddress},
		} {
			if field.key != prefix+".name" {
				if err := checkClusterAddress(field.key, field.value); err != nil {
					return err
				}
			}
			if other, ok := seen[field.value]; ok {
				return invalid(field.key, "%q is also %s", strings.TrimPrefix(field.value, "name "), other)
			}
			seen[field.value] = field.key
		}
	}
	return nil
}

// checkClusterAddress is checkAddress plus a nonzero port.
func checkClusterAddress(key, address string) error {
	if err := checkAddress(key, address); err != nil {
		return err
	}
	if _, port, _ := net.SplitHostPort(address); port == "0" {
		return invalid(key, "%q: the other nodes must know the port, 0 is not one", address)
	}
	return nil
}

// WithReplicaID returns environ with cluster.replica_id set to id, over
// any WHIPPET_CLUSTER_REPLICA_ID it held: a command-line flag wins over
// the environment, which wins over the file.
func WithReplicaID(environ []string, id int) []string {
	out := make([]string, 0, len(environ)+1)
	for _, entry := range environ {
		if key, _, _ := strings.Cut(entry, "="); key != EnvReplicaID {
			out = append(out, entry)
		}
	}
	return append(out, EnvReplicaID+"="+strconv.Itoa(id))
}
