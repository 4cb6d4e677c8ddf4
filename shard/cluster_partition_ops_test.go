package shard

import (
	"fmt"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// markedCluster starts three in-process nodes with one partition holding
// 20 messages, marked (applied mark persisted).
func markedCluster(t *testing.T) (*memoryNet, []*clusterTestNode) {
	memory, nodes := startMemoryCluster(t)
	nodes[0].setup(t, 1)
	checkSame(t, nodes, 1, 0)
	for i := range 20 {
		nodes[i%3].send(t, 0, fmt.Sprintf("m%d", i))
	}
	checkSame(t, nodes, 1, 20)
	time.Sleep(300 * time.Millisecond) // data ticks mark what is applied (fdatasync + app record)
	return memory, nodes
}

func purgeTopic(t *testing.T, n *clusterTestNode) {
	n.write(t, wire.OperationPurgeTopic, &wire.TopicTarget{Stream: wire.NumericID(0), Topic: wire.NumericID(0)})
}

// TestClusterPurgeReplicates: a PurgeTopic acknowledged by one node
// empties the partition on that node only; the other replicas keep every
// message (the purge never enters the partition's group).
func TestClusterPurgeReplicates(t *testing.T) {
	_, nodes := markedCluster(t)
	purgeTopic(t, nodes[0])
	waitEmpty(t, nodes)
}

// TestClusterPurgeThenRestart: the node that ran the purge restarts
// and its partition refuses to open ("holds fewer messages than its
// applied mark"): the applied mark still names the pre-purge offset.
func TestClusterPurgeThenRestart(t *testing.T) {
	memory, nodes := markedCluster(t)
	purger := (memory.primary(0) + 1) % 3
	purgeTopic(t, nodes[purger])
	waitEmpty(t, nodes[purger:purger+1])
	time.Sleep(300 * time.Millisecond)
	memory.setUp(purger, false)
	nodes[purger].stop()
	nodes[purger] = startClusterServer(t, purger, 3, nodes[purger].dir, memoryTransport(memory, purger))
	nodes[(purger+1)%3].send(t, 0, "after-restart")
	got := nodes[purger].waitPoll(t, 0, 1)
	if len(got) == 0 {
		t.Fatalf("restarted node %d does not serve the partition after a purge and a restart", purger)
	}
}

// waitEmpty waits until every node's partition 0 holds no message.
func waitEmpty(t *testing.T, nodes []*clusterTestNode) {
	t.Helper()
	for _, n := range nodes {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			got, found := n.poll(t, 0)
			if found && len(got) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("a node still holds %v after the purge", got)
			}
		}
	}
}

// TestClusterRecreateTopic: deleting a topic leaves its partitions'
// replication groups open (and their journals on disk); a topic created
// again under the same ids maps to the same group ids, whose Open fails
// ("already open"), so the new topic's partitions never serve.
func TestClusterRecreateTopic(t *testing.T) {
	_, nodes := markedCluster(t)
	nodes[1].write(t, wire.OperationDeleteTopic, &wire.TopicTarget{Stream: wire.NumericID(0), Topic: wire.NumericID(0)})
	nodes[1].write(t, wire.OperationCreateTopic, &wire.CreateTopic{Stream: wire.NumericID(0), PartitionsCount: 1, Name: "t"})
	checkSame(t, nodes, 1, 0) // every node applied the create (a node that has not answers 20)
	nodes[2].send(t, 0, "fresh")
	checkSame(t, nodes, 1, 1)
}

// TestClusterPurgeThenSend: after a replicated purge every node takes
// the next message at offset 0, and a node restarted after the purge and
// more sends opens at the same state.
func TestClusterPurgeThenSend(t *testing.T) {
	memory, nodes := markedCluster(t)
	purgeTopic(t, nodes[2])
	waitEmpty(t, nodes)
	if base := nodes[1].send(t, 0, "a", "b"); base != 0 {
		t.Fatalf("the first message after a purge took offset %d", base)
	}
	checkSame(t, nodes, 1, 2)
	purgeTopic(t, nodes[0]) // a second generation
	waitEmpty(t, nodes)
	nodes[0].send(t, 0, "c")
	checkSame(t, nodes, 1, 1)
	memory.setUp(1, false)
	nodes[1].stop()
	nodes[1] = startClusterServer(t, 1, 3, nodes[1].dir, memoryTransport(memory, 1))
	memory.setUp(1, true)
	nodes[2].send(t, 0, "d")
	checkSame(t, nodes, 1, 2)
}

// TestClusterDeleteSegmentsThroughGroup: DeleteSegments on a backup goes
// through the partition's log and answers; the active segment stays, so
// every node keeps every message.
func TestClusterDeleteSegmentsThroughGroup(t *testing.T) {
	memory, nodes := markedCluster(t)
	backup := (memory.primary(partitionGroup(PartitionKey{})) + 2) % 3
	nodes[backup].write(t, wire.OperationDeleteSegments, &wire.DeleteSegments{Stream: wire.NumericID(0),
		Topic: wire.NumericID(0), PartitionID: 0, SegmentsCount: 1})
	nodes[backup].send(t, 0, "after")
	checkSame(t, nodes, 1, 21)
}

// TestClusterRecreateTopicAfterRestart: a deleted topic's partition group
// and journal are gone on every node once the delete answered; a node
// restarted after the delete opens the topic created again under the same
// ids as a fresh group, and every node serves it from offset 0.
func TestClusterRecreateTopicAfterRestart(t *testing.T) {
	memory, nodes := markedCluster(t)
	nodes[1].write(t, wire.OperationDeleteTopic, &wire.TopicTarget{Stream: wire.NumericID(0), Topic: wire.NumericID(0)})
	waitJournalsGone(t, nodes, PartitionKey{}, 5*time.Second)
	memory.setUp(2, false)
	nodes[2].stop()
	nodes[2] = startClusterServer(t, 2, 3, nodes[2].dir, memoryTransport(memory, 2))
	memory.setUp(2, true)
	nodes[0].write(t, wire.OperationCreateTopic, &wire.CreateTopic{Stream: wire.NumericID(0), PartitionsCount: 1, Name: "t"})
	checkSame(t, nodes, 1, 0)
	if base := nodes[2].send(t, 0, "fresh"); base != 0 {
		t.Fatalf("the recreated partition took its first message at offset %d", base)
	}
	checkSame(t, nodes, 1, 1)
}

// storedOffset returns n's stored offset of consumer 1 on partition 0.
func (n *clusterTestNode) storedOffset(t *testing.T) (uint64, bool) {
	body := &wire.GetConsumerOffset{OffsetTarget: wire.OffsetTarget{
		Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(1)},
		Stream:   wire.NumericID(0), Topic: wire.NumericID(0), Partition: wire.PartitionOf(0)}}
	r := n.request(t, wire.OperationNonReplicated, wire.CodeGetConsumerOffset, body)
	if r.Err() != nil {
		t.Fatalf("get offset: %v", r.Err())
	}
	if len(r.Payload) == 0 {
		return 0, false
	}
	var info wire.ConsumerOffsetInfo
	if err := wire.DecodeAll(&info, r.Payload); err != nil {
		t.Fatal(err)
	}
	return info.StoredOffset, true
}

// waitOffsets waits until every node stores want for consumer 1.
func waitOffsets(t *testing.T, nodes []*clusterTestNode, want uint64) {
	t.Helper()
	for i, n := range nodes {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			got, found := n.storedOffset(t)
			if found && got == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d stores %d (found %v), want %d", i, got, found, want)
			}
		}
	}
}

// TestClusterAutoCommitReplicates: a poll's auto-commit and a stored
// offset, made on any node, are stored on every node.
func TestClusterAutoCommitReplicates(t *testing.T) {
	memory, nodes := markedCluster(t)
	key := PartitionKey{}
	backup := (memory.primary(partitionGroup(key)) + 1) % 3
	body := &wire.PollMessages{Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(1)},
		Stream: wire.NumericID(0), Topic: wire.NumericID(0), Partition: wire.PartitionOf(0),
		Strategy: wire.Strategy{Kind: wire.StrategyOffset}, Count: 5, AutoCommit: true}
	r := nodes[backup].request(t, wire.OperationNonReplicated, wire.CodePollMessages, body)
	if r.Err() != nil {
		t.Fatalf("poll: %v", r.Err())
	}
	// The poll answers once its commit applied on the node that served it.
	if got, found := nodes[backup].storedOffset(t); !found || got != 4 {
		t.Fatalf("the polling node stores %d (found %v) right after the poll", got, found)
	}
	waitOffsets(t, nodes, 4)
	target := wire.OffsetTarget{Consumer: body.Consumer, Stream: body.Stream, Topic: body.Topic, Partition: body.Partition}
	store := &wire.StoreConsumerOffset{OffsetTarget: target, Offset: 11}
	nodes[(backup+1)%3].write(t, wire.OperationStoreConsumerOffset, store)
	waitOffsets(t, nodes, 11)
}
