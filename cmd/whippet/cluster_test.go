package main

import (
	"net"
	"testing"
)

// TestClusterMetadata: a single node lists itself as the one healthy
// leader, at the port its clients reach, in JSON and in the table.
func TestClusterMetadata(t *testing.T) {
	s := startServer(t)
	view := decode[clusterView](t, s.ok(t, "-o", "json", "cluster", "metadata"))
	if len(view.Nodes) != 1 {
		t.Fatalf("cluster metadata of a single node: %+v", view)
	}
	node := view.Nodes[0]
	_, wantPort, _ := net.SplitHostPort(s.address)
	_, gotPort, err := net.SplitHostPort(node.Address)
	if err != nil || gotPort != wantPort || node.Role != "leader" || node.Status != "healthy" {
		t.Fatalf("node %+v, want the leader, healthy, at port %s", node, wantPort)
	}
	table := s.ok(t, "cluster", "metadata")
	wantStrings(t, "cluster metadata role", column(t, table, "ROLE"), "leader")
	wantStrings(t, "cluster metadata status", column(t, table, "STATUS"), "healthy")
}
