package main

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// TestVerifyLog: the cluster tests' checker rejects each way a replicated
// log can be wrong (a lost acknowledged message, a duplicate, a reorder, a
// message nobody sent) and accepts a log missing only messages whose
// outcome was unknown.
func TestVerifyLog(t *testing.T) {
	lane := &producer{lane: "p0", acked: map[string]bool{"p0-0": true, "p0-1": true, "p0-3": true},
		unknown: map[string]bool{"p0-2": true}}
	other := &producer{lane: "p1", acked: map[string]bool{"p1-0": true}, unknown: map[string]bool{}}
	lanes := []*producer{lane, other}
	for _, row := range []struct {
		name     string
		contents []string
		why      string
	}{
		{"all, unknown present", []string{"p0-0", "p1-0", "p0-1", "p0-2", "p0-3"}, ""},
		{"unknown absent", []string{"p0-0", "p0-1", "p1-0", "p0-3"}, ""},
		{"acknowledged lost", []string{"p0-0", "p0-1", "p1-0"}, "missing"},
		{"duplicate", []string{"p0-0", "p0-1", "p0-1", "p1-0", "p0-3"}, "at offsets 1 and 2"},
		{"reordered", []string{"p0-1", "p0-0", "p1-0", "p0-3"}, "out of order"},
		{"never sent", []string{"p0-0", "p0-1", "p1-0", "p0-3", "p0-4"}, "never sent"},
		{"foreign", []string{"p0-0", "p0-1", "p1-0", "p0-3", "garbage"}, "unknown message"},
	} {
		t.Run(row.name, func(t *testing.T) {
			acked, why := verifyLog(row.contents, lanes)
			if row.why == "" && (why != "" || acked != 4) {
				t.Fatalf("verifyLog = %d, %q; want 4 acknowledged, accepted", acked, why)
			}
			if row.why != "" && !strings.Contains(why, row.why) {
				t.Fatalf("verifyLog = %q, want it to say %q", why, row.why)
			}
		})
	}
}

// TestClusterHarnessOneNode runs the cluster tests' producers, reader,
// checker, kill, restart and probe against one plain node, so that the
// harness itself is known to work wherever the cluster tests skip: the
// node is killed under load and restarted, and the probe measures how
// long until it serves again.
func TestClusterHarnessOneNode(t *testing.T) {
	ports, err := reservePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	single := startServer(t, "WHIPPET_TCP_ADDRESS="+ports[0]) // a restart comes back on the same address
	c := &testCluster{t: t, nodes: []*server{single}, clientAddresses: []string{single.address}}
	target := c.createTopic(2, []int{0})
	if leader := c.awaitStable(10 * time.Second); leader != 0 {
		t.Fatalf("one node names leader %d", leader)
	}
	pinned, err := c.pinned(0)
	if err != nil {
		t.Fatal(err)
	}
	probe := newProducer("probe", target, 1, pinned, 1)
	stop := make(chan struct{})
	var running sync.WaitGroup
	var lanes []*producer
	for partition := range target.partitions {
		lane := newProducer("h"+string(rune('0'+partition)), target, partition, c.following(0), 7)
		lanes = append(lanes, lane)
		running.Add(1)
		go lane.run(stop, &running)
	}
	time.Sleep(300 * time.Millisecond) // let both lanes send a few batches
	killed := c.kill(0)
	c.restart(0)
	served, ok := probeFailover(probe, killed.Add(30*time.Second))
	if !ok {
		t.Fatalf("the restarted node acknowledged nothing\n%s", c.logs())
	}
	t.Logf("killed, restarted and serving again after %v", served.Sub(killed))
	time.Sleep(300 * time.Millisecond) // the producers reconnect and go on
	close(stop)
	running.Wait()
	lanes = append(lanes, probe)
	for partition := range target.partitions {
		contents := c.awaitSameLog([]int{0}, target, partition, lanes, 10*time.Second)
		acked, _ := verifyLog(contents, lanesOf(lanes, partition))
		if acked == 0 || len(contents) < acked {
			logProducers(t, lanes)
			t.Fatalf("partition %d holds %d messages, %d acknowledged", partition, len(contents), acked)
		}
	}
	for _, lane := range lanes {
		if last := time.Unix(0, lane.lastAck.Load()); last.Before(killed) {
			logProducers(t, lanes)
			t.Fatalf("lane %s acknowledged nothing after the restart", lane.lane)
		}
	}
}
