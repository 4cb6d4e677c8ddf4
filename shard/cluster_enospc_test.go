package shard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestClusterENOSPCKeepsReplicasSame: node 2's data directory fills up
// (its group journal is elsewhere and keeps working). Committed appends
// cannot be written on node 2: its engine keeps the writes and retries
// them, its apply waits, and nothing is skipped; once space returns, node
// 2 holds every message at the same offset as nodes 0 and 1.
func TestClusterENOSPCKeepsReplicasSame(t *testing.T) {
	base := t.TempDir()
	small := filepath.Join(base, "small")
	if err := os.MkdirAll(small, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", small, "tmpfs", 0, "size=12m"); err != nil {
		t.Skipf("tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(small, unix.MNT_DETACH) })
	filler := filepath.Join(small, "filler")
	if err := os.WriteFile(filler, make([]byte, 8<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	memory := newMemoryNet(3)
	nodes := make([]*clusterTestNode, 3)
	for i := range 2 {
		dir := fmt.Sprintf("%s/n%d", base, i)
		nodes[i] = startClusterServerSplit(t, i, 3, dir, dir+"/cluster", memoryTransport(memory, i))
	}
	nodes[2] = startClusterServerSplit(t, 2, 3, small+"/data", base+"/n2cluster", memoryTransport(memory, 2))
	nodes[0].setup(t, 1)
	checkSame(t, nodes, 1, 0)
	payload := strings.Repeat("x", 8<<10)
	sent := 0
	for ; sent < 800; sent++ { // 6.4 MiB: more than node 2 has free
		nodes[sent%2].send(t, 0, fmt.Sprintf("%d-%s", sent, payload))
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		nodes[0].send(t, 0, fmt.Sprintf("after-%d", i))
		sent++
	}
	first := nodes[0].waitPoll(t, 0, sent)
	got := nodes[2].waitPoll(t, 0, sent)
	t.Logf("node 0 holds %d messages, node 2 holds %d", len(first), len(got))
	if len(got) != len(first) {
		t.Fatalf("node 2 serves %d messages (last %q), node 0 %d (last %q): the replicas diverged without node 2 stopping",
			len(got), short(got[len(got)-1]), len(first), short(first[len(first)-1]))
	}
	for i := range first {
		if short(first[i]) != short(got[i]) {
			t.Fatalf("offset-wise divergence at #%d: node 0 %q, node 2 %q", i, short(first[i]), short(got[i]))
		}
	}
}

func short(s string) string { return s[:min(len(s), 24)] }
