package shard

import (
	"errors"
	"fmt"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// fakeClusterView is a replication layer as GetClusterMetadata sees it.
type fakeClusterView struct {
	primary   int
	normal    bool
	connected []bool
}

func (v *fakeClusterView) MetadataPrimary() (int, bool) { return v.primary, v.normal }
func (v *fakeClusterView) Connected(replica int) bool   { return v.connected[replica] }

func threeNodes(replica int) *ClusterConfig {
	return &ClusterConfig{Enabled: true, ID: 7, Replica: replica, Nodes: []ClusterNode{
		{Name: "a", Address: "127.0.0.1:8090", ReplicaAddress: "127.0.0.1:9090"},
		{Name: "b", Address: "127.0.0.2:8091", ReplicaAddress: "127.0.0.2:9091"},
		{Name: "c", Address: "0.0.0.0:8092", ReplicaAddress: "10.0.0.3:9092"},
	}}
}

// rosterLine renders a roster compactly: name@ip:port role status.
func rosterLine(nodes []wire.ClusterNode) string {
	line := ""
	for _, node := range nodes {
		line += fmt.Sprintf("%s@%s:%d/%d/%d ", node.Name, node.IP, node.TCPPort, node.Role, node.Status)
	}
	return line
}

// TestClusterRoster checks what a clustered node reports (§11): every node
// at its client address, the metadata primary it believes in as the only
// leader, peers healthy only while linked, and no leader at all while the
// metadata group changes view (so that SDKs re-ask instead of following a
// stale leader).
func TestClusterRoster(t *testing.T) {
	const (
		leader   = wire.RoleLeader
		follower = wire.RoleFollower
		healthy  = wire.NodeHealthy
		down     = wire.NodeUnreachable
	)
	for _, row := range []struct {
		name    string
		replica int
		view    ClusterView
		want    string
	}{
		{"no view yet", 0, nil, fmt.Sprintf("a@127.0.0.1:8090/%d/%d b@127.0.0.2:8091/%d/%d c@10.0.0.3:8092/%d/%d ",
			follower, healthy, follower, down, follower, down)},
		{"primary b linked", 0, &fakeClusterView{primary: 1, normal: true, connected: []bool{false, true, true}},
			fmt.Sprintf("a@127.0.0.1:8090/%d/%d b@127.0.0.2:8091/%d/%d c@10.0.0.3:8092/%d/%d ",
				follower, healthy, leader, healthy, follower, healthy)},
		{"self primary, c down", 0, &fakeClusterView{primary: 0, normal: true, connected: []bool{false, true, false}},
			fmt.Sprintf("a@127.0.0.1:8090/%d/%d b@127.0.0.2:8091/%d/%d c@10.0.0.3:8092/%d/%d ",
				leader, healthy, follower, healthy, follower, down)},
		{"view change", 1, &fakeClusterView{primary: 2, normal: false, connected: []bool{true, false, true}},
			fmt.Sprintf("a@127.0.0.1:8090/%d/%d b@127.0.0.2:8091/%d/%d c@10.0.0.3:8092/%d/%d ",
				follower, healthy, follower, healthy, follower, healthy)},
		{"unreachable primary stays leader", 2, &fakeClusterView{primary: 0, normal: true, connected: []bool{false, true, false}},
			fmt.Sprintf("a@127.0.0.1:8090/%d/%d b@127.0.0.2:8091/%d/%d c@10.0.0.3:8092/%d/%d ",
				leader, down, follower, healthy, follower, healthy)},
	} {
		t.Run(row.name, func(t *testing.T) {
			got := rosterLine(clusterRoster(threeNodes(row.replica), row.view, "192.168.1.1", 8092))
			if got != row.want {
				t.Fatalf("roster\n got %s\nwant %s", got, row.want)
			}
		})
	}
}

// TestClusterRosterWildcard: a node listening on a wildcard address is
// reported at its replica host, else at the address the client used, and
// this node's port 0 (an ephemeral listener) at the real port.
func TestClusterRosterWildcard(t *testing.T) {
	options := &ClusterConfig{Enabled: true, ID: 1, Replica: 0, Nodes: []ClusterNode{
		{Name: "self", Address: "0.0.0.0:0", ReplicaAddress: ":9090"},
		{Name: "peer", Address: "[::]:8091", ReplicaAddress: "[::]:9091"},
	}}
	nodes := clusterRoster(options, &fakeClusterView{primary: 0, normal: true, connected: []bool{false, true}}, "10.1.1.1", 40000)
	got := rosterLine(nodes)
	want := fmt.Sprintf("self@10.1.1.1:40000/%d/%d peer@10.1.1.1:8091/%d/%d ", wire.RoleLeader, wire.NodeHealthy,
		wire.RoleFollower, wire.NodeHealthy)
	if got != want {
		t.Fatalf("roster\n got %s\nwant %s", got, want)
	}
	metadata := wire.ClusterMetadata{Name: "x", Nodes: nodes}
	encoded := make([]byte, metadata.EncodedSize())
	metadata.Encode(encoded)
	var decoded wire.ClusterMetadata
	if err := wire.DecodeAll(&decoded, encoded); err != nil {
		t.Fatalf("the roster does not decode as the SDK reads it: %v", err)
	}
	if leader, ok := decoded.Leader(); !ok || leader.Name != "self" {
		t.Fatalf("leader %+v %v, want self", leader, ok)
	}
}

// TestClusterConfigValidate: the front refuses a roster it could not
// report or a replica id outside it.
func TestClusterConfigValidate(t *testing.T) {
	for _, row := range []struct {
		name   string
		modify func(*ClusterConfig)
		ok     bool
	}{
		{"valid", func(*ClusterConfig) {}, true},
		{"disabled ignores the rest", func(o *ClusterConfig) { *o = ClusterConfig{} }, true},
		{"zero id", func(o *ClusterConfig) { o.ID = 0 }, false},
		{"replica past roster", func(o *ClusterConfig) { o.Replica = 3 }, false},
		{"negative replica", func(o *ClusterConfig) { o.Replica = -1 }, false},
		{"no nodes", func(o *ClusterConfig) { o.Nodes = nil }, false},
		{"bad address", func(o *ClusterConfig) { o.Nodes[1].Address = "nohostport" }, false},
	} {
		t.Run(row.name, func(t *testing.T) {
			options := threeNodes(0)
			row.modify(options)
			err := options.validate()
			if row.ok != (err == nil) {
				t.Fatalf("validate = %v, want ok %v", err, row.ok)
			}
			if err != nil && !errors.Is(err, ErrServerOptions) {
				t.Fatalf("error %v is not ErrServerOptions", err)
			}
		})
	}
}

// TestNotAcceptedStatus: the group host's refusal of a request it never
// proposed reaches clients as 58, which they may replay on any node; a
// request that may have committed must not.
func TestNotAcceptedStatus(t *testing.T) {
	wrapped := fmt.Errorf("partition 1/1/1: %w", ErrClusterNotAccepted)
	if got := dataStatus(wrapped, wire.StatusPartitionNotFound); got != wire.StatusTransientNotAccepted {
		t.Fatalf("dataStatus(not accepted) = %v, want %v", got, wire.StatusTransientNotAccepted)
	}
	if got := dataStatus(ErrClusterStopped, wire.StatusPartitionNotFound); got == wire.StatusTransientNotAccepted {
		t.Fatalf("dataStatus(stopped: it may commit) = %v, must not invite a replay elsewhere", got)
	}
}
