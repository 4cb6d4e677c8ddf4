package main

import (
	"context"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/shard"
	"github.com/whippetio/whippet/vsr"
	"github.com/whippetio/whippet/wire"
)

// clusterGroupMetricsMax bounds the groups /metrics lists one by one
// (primary, view, op and commit per group): beyond it a node with
// thousands of partitions would multiply the series, and only the per
// node and per status counts are reported.
const clusterGroupMetricsMax = 128

// clusterRoutes serves the cluster roster, as GetClusterMetadata reports
// it over TCP.
func (g *gateway) clusterRoutes(mux *http.ServeMux) {
	g.handle(mux, "GET /cluster/metadata", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		metadata, err := c.GetClusterMetadata(ctx)
		if err != nil {
			return nil, err
		}
		return clusterJSON(metadata), nil
	})
}

type clusterNodeJSON struct {
	Name      string         `json:"name"`
	IP        string         `json:"ip"`
	Endpoints map[string]int `json:"endpoints"`
	Role      string         `json:"role"`
	Status    string         `json:"status"`
}

func clusterJSON(metadata *wire.ClusterMetadata) map[string]any {
	nodes := make([]clusterNodeJSON, len(metadata.Nodes))
	for i, node := range metadata.Nodes {
		nodes[i] = clusterNodeJSON{Name: node.Name, IP: node.IP, Role: node.Role.String(), Status: node.Status.String(),
			Endpoints: map[string]int{"tcp": int(node.TCPPort), "quic": int(node.QUICPort), "http": int(node.HTTPPort),
				"websocket": int(node.WebSocketPort)}}
	}
	return map[string]any{"name": metadata.Name, "nodes": nodes}
}

var (
	descClusterReplica = prometheus.NewDesc("whippet_cluster_replica", "This node's replica id in the cluster roster.",
		[]string{"node"}, nil)
	descClusterGroups = prometheus.NewDesc("whippet_cluster_groups",
		"Replication groups on this node by vsr status (normal, view_change, recovering).", []string{"status"}, nil)
	descClusterGroupsLed = prometheus.NewDesc("whippet_cluster_groups_led",
		"Groups in normal status whose primary, as this node sees it, is the node.", []string{"node"}, nil)
	descClusterPrimaryChanges = prometheus.NewDesc("whippet_cluster_group_primary_changes_total",
		"Changes of a group's primary this node observed.", nil, nil)
	groupLabels            = []string{"group", "stream", "topic", "partition"}
	descClusterGroupLeader = prometheus.NewDesc("whippet_cluster_group_primary",
		"Replica id of the group's primary (-1 during a view change or recovery); listed per group up to a limit.",
		groupLabels, nil)
	descClusterGroupView = prometheus.NewDesc("whippet_cluster_group_view", "The group's vsr view on this node.",
		groupLabels, nil)
	descClusterGroupOp = prometheus.NewDesc("whippet_cluster_group_op", "The group's highest op in this node's log.",
		groupLabels, nil)
	descClusterGroupCommit = prometheus.NewDesc("whippet_cluster_group_commit",
		"The group's highest op known committed, on this node.", groupLabels, nil)
	descClusterGroupApplied = prometheus.NewDesc("whippet_cluster_group_applied",
		"The group's highest op applied on this node.", groupLabels, nil)
	descClusterPeer = prometheus.NewDesc("whippet_cluster_peer_connected",
		"1 when this node's authenticated link to the peer is up.", []string{"node"}, nil)
)

// clusterNetCounters are ClusterNet.Stats fields exported as counters.
var clusterNetCounters = []struct {
	desc  *prometheus.Desc
	value func(s *shard.ClusterNetStats) uint64
}{
	{netCounter("messages_sent", "Replica messages handed to a link."), func(s *shard.ClusterNetStats) uint64 { return s.MessagesSent }},
	{netCounter("bytes_sent", "Replica message bytes handed to a link."), func(s *shard.ClusterNetStats) uint64 { return s.BytesSent }},
	{netCounter("messages_received", "Replica messages verified and delivered."), func(s *shard.ClusterNetStats) uint64 { return s.MessagesReceived }},
	{netCounter("bytes_received", "Replica message bytes verified and delivered."), func(s *shard.ClusterNetStats) uint64 { return s.BytesReceived }},
	{netCounter("dropped_down", "Messages dropped: no link to the peer."), func(s *shard.ClusterNetStats) uint64 { return s.DroppedDown }},
	{netCounter("dropped_full", "Messages dropped: the peer's queue was full."), func(s *shard.ClusterNetStats) uint64 { return s.DroppedFull }},
	{netCounter("dropped_closed", "Messages queued when their link closed."), func(s *shard.ClusterNetStats) uint64 { return s.DroppedClosed }},
	{netCounter("dropped_large", "Messages dropped: above the message size limit."), func(s *shard.ClusterNetStats) uint64 { return s.DroppedLarge }},
	{netCounter("handshakes_refused", "Inbound links closed before authenticating."), func(s *shard.ClusterNetStats) uint64 { return s.HandshakeRefused }},
	{netCounter("frames_rejected", "Inbound frames that failed validation."), func(s *shard.ClusterNetStats) uint64 { return s.FramesRejected }},
	{netCounter("dials", "Outbound dial attempts."), func(s *shard.ClusterNetStats) uint64 { return s.Dials }},
	{netCounter("dial_failures", "Outbound dial attempts that did not yield a link."), func(s *shard.ClusterNetStats) uint64 { return s.DialFailures }},
	{netCounter("links_up", "Outbound links that came up."), func(s *shard.ClusterNetStats) uint64 { return s.LinksUp }},
}

func netCounter(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("whippet_cluster_net_"+name+"_total", help, nil, nil)
}

// clusterCollector reports the replication layer of a clustered node from
// the group samples and the transport's counters; it sends nothing to the
// shards.
type clusterCollector struct {
	view  clusterView
	names []string // node names by replica id
}

func (cc *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, desc := range []*prometheus.Desc{descClusterReplica, descClusterGroups, descClusterGroupsLed,
		descClusterPrimaryChanges, descClusterGroupLeader, descClusterGroupView, descClusterGroupOp,
		descClusterGroupCommit, descClusterGroupApplied, descClusterPeer} {
		ch <- desc
	}
	for _, counter := range clusterNetCounters {
		ch <- counter.desc
	}
}

func (cc *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := prometheus.GaugeValue
	stats := cc.view.stats
	replica := stats.Replica()
	ch <- prometheus.MustNewConstMetric(descClusterReplica, gauge, float64(replica), cc.names[replica])
	groups := stats.Groups()
	statuses := map[vsr.Status]int{vsr.StatusNormal: 0, vsr.StatusViewChange: 0, vsr.StatusRecovering: 0}
	led := make([]int, len(cc.names))
	for i := range groups {
		group := &groups[i]
		statuses[group.Status]++
		if group.Status == vsr.StatusNormal && group.Primary >= 0 && group.Primary < len(led) {
			led[group.Primary]++
		}
	}
	for status, count := range statuses {
		ch <- prometheus.MustNewConstMetric(descClusterGroups, gauge, float64(count), status.String())
	}
	for node, count := range led {
		ch <- prometheus.MustNewConstMetric(descClusterGroupsLed, gauge, float64(count), cc.names[node])
	}
	ch <- prometheus.MustNewConstMetric(descClusterPrimaryChanges, prometheus.CounterValue, float64(stats.PrimaryChanges()))
	if len(groups) <= clusterGroupMetricsMax {
		for i := range groups {
			cc.collectGroup(ch, &groups[i])
		}
	}
	for node, name := range cc.names {
		if node == replica {
			continue
		}
		connected := 0.0
		if cc.view.transport.Connected(node) {
			connected = 1
		}
		ch <- prometheus.MustNewConstMetric(descClusterPeer, gauge, connected, name)
	}
	net := cc.view.transport.Stats()
	for _, counter := range clusterNetCounters {
		ch <- prometheus.MustNewConstMetric(counter.desc, prometheus.CounterValue, float64(counter.value(&net)))
	}
}

func (cc *clusterCollector) collectGroup(ch chan<- prometheus.Metric, group *shard.ClusterGroupStats) {
	labels := []string{"metadata", "", "", ""}
	if group.Group != shard.MetaGroup {
		key := group.Partition
		labels = []string{"partition", strconv.FormatUint(uint64(key.Stream), 10), strconv.FormatUint(uint64(key.Topic), 10),
			strconv.FormatUint(uint64(key.Partition), 10)}
	}
	primary := -1.0
	if group.Status == vsr.StatusNormal {
		primary = float64(group.Primary)
	}
	gauge := prometheus.GaugeValue
	ch <- prometheus.MustNewConstMetric(descClusterGroupLeader, gauge, primary, labels...)
	ch <- prometheus.MustNewConstMetric(descClusterGroupView, gauge, float64(group.View), labels...)
	ch <- prometheus.MustNewConstMetric(descClusterGroupOp, gauge, float64(group.Op), labels...)
	ch <- prometheus.MustNewConstMetric(descClusterGroupCommit, gauge, float64(group.CommitMax), labels...)
	ch <- prometheus.MustNewConstMetric(descClusterGroupApplied, gauge, float64(group.CommitMin), labels...)
}
