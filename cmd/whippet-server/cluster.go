package main

import (
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/whippetio/whippet/shard"
)

// clusterView is what GetClusterMetadata reports of the replication layer:
// the metadata group's primary from the group host, link state from the
// transport.
type clusterView struct {
	cluster   *shard.Cluster
	transport *shard.ClusterNet
	stats     *shard.ClusterStats // the groups' samples, for /metrics
	names     []string            // node names by replica id
}

func (v clusterView) MetadataPrimary() (int, bool) { return v.cluster.MetadataPrimary() }
func (v clusterView) Connected(replica int) bool   { return v.transport.Connected(replica) }

// startReplication builds the group host and its transport for a clustered
// node (options.Roster.Enabled) and sets options.Cluster; the returned
// view goes to the server once it runs. It logs one line naming the
// roster and this node.
func startReplication(options *shard.ServerOptions, logger *slog.Logger) (shard.ClusterView, error) {
	roster := &options.Roster
	cluster, err := shard.NewCluster(shard.ClusterOptions{Cluster: roster.ID, Replica: roster.Replica,
		ReplicaCount: len(roster.Nodes), Tick: roster.Tick, HeartbeatTimeout: roster.HeartbeatTimeout,
		Directory: filepath.Join(options.DataPath, "cluster"), Logger: logger})
	if err != nil {
		return nil, err
	}
	netOptions := roster.NetOptions()
	netOptions.Deliver = cluster.Deliver
	netOptions.Logger = logger
	transport, err := shard.NewClusterNet(netOptions)
	if err != nil {
		return nil, err
	}
	stats := shard.NewClusterStats(cluster, logger)
	cluster.SetTransport(stats.Wrap(transport))
	options.Cluster = cluster
	names := make([]string, len(roster.Nodes))
	nodeNames := make([]string, len(roster.Nodes))
	for i, node := range roster.Nodes {
		names[i] = node.Name + "=" + node.Address + "/" + node.ReplicaAddress
		nodeNames[i] = node.Name
	}
	logger.Info("cluster node", "name", options.ClusterName, "replica", roster.Replica,
		"node", roster.Nodes[roster.Replica].Name, "nodes", strings.Join(names, " "),
		"tick", roster.Tick, "heartbeat_timeout", roster.HeartbeatTimeout)
	return clusterView{cluster: cluster, transport: transport, stats: stats, names: nodeNames}, nil
}
