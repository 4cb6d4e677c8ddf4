package shard

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// TestClusterWipedBackupKeepsAck: the primary and one backup ("acker")
// commit a message while the other backup is down; the primary stops and
// the acker comes back with a wiped data directory. The acker must not
// vote as if intact: it and the lagging backup must not form a view
// without the message (which the view would then truncate). Once the primary returns, every node holds the acknowledged message at
// its offset.
func TestClusterWipedBackupKeepsAck(t *testing.T) {
	memory, nodes := markedCluster(t)
	key := PartitionKey{Stream: 0, Topic: 0, Partition: 0}
	primary := memory.primary(partitionGroup(key))
	lagging, acker := (primary+1)%3, (primary+2)%3
	memory.setUp(lagging, false)
	nodes[lagging].stop()
	nodes[primary].send(t, 0, "acked")
	if got := nodes[acker].waitPoll(t, 0, 21); len(got) != 21 {
		t.Fatalf("the acking backup holds %d", len(got))
	}
	for _, i := range []int{primary, acker} {
		memory.setUp(i, false)
		nodes[i].stop()
	}
	if err := os.RemoveAll(nodes[acker].dir); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{lagging, acker} {
		memory.setUp(i, true)
		nodes[i] = startClusterServer(t, i, 3, nodes[i].dir, memoryTransport(memory, i))
	}
	time.Sleep(time.Second) // ten heartbeat timeouts: time enough to form a view
	if got, _ := nodes[lagging].poll(t, 0); len(got) != 20 {
		t.Fatalf("the lagging node serves %d messages without the primary: %v", len(got), got)
	}
	memory.setUp(primary, true)
	nodes[primary] = startClusterServer(t, primary, 3, nodes[primary].dir, memoryTransport(memory, primary))
	nodes[lagging].send(t, 0, "after")
	got := nodes[acker].waitPoll(t, 0, 22)
	want := nodes[primary].waitPoll(t, 0, 22)
	if len(want) < 22 || !strings.HasSuffix(want[20], ":acked") {
		t.Fatalf("the acknowledged message is not at offset 20: %v", want)
	}
	for _, n := range nodes {
		if got = n.waitPoll(t, 0, len(want)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("a node holds %v, the primary %v", got, want)
		}
	}
}

// TestClusterCreateTopicWithNodeDown: a topic created while one node is
// down serves at once on the other two (its partition groups are new to
// the nodes that create them, so they start without waiting for the
// missing node), and the missing node, back, catches up.
func TestClusterCreateTopicWithNodeDown(t *testing.T) {
	memory, nodes := startMemoryCluster(t)
	nodes[0].write(t, wire.OperationCreateStream, &wire.CreateStream{Name: "s"})
	memory.setUp(2, false)
	nodes[2].stop()
	nodes[0].write(t, wire.OperationCreateTopic, &wire.CreateTopic{Stream: wire.NumericID(0), PartitionsCount: 2, Name: "t"})
	for i := range 4 {
		nodes[i%2].send(t, uint32(i%2), fmt.Sprintf("m%d", i))
	}
	checkSame(t, nodes[:2], 2, 2)
	memory.setUp(2, true)
	nodes[2] = startClusterServer(t, 2, 3, nodes[2].dir, memoryTransport(memory, 2))
	nodes[2].waitPoll(t, 0, 2) // it applied the metadata that creates the topic
	nodes[2].send(t, 0, "back")
	checkSame(t, nodes, 1, 3)
}
