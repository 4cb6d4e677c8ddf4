package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// clusterTopic is the stream and topic a cluster test writes.
type clusterTopic struct {
	stream, topic uint32
	partitions    uint32
}

// createTopic creates a stream and a topic of partitions (persisted)
// through the leader, and waits until every live node serves it.
func (c *testCluster) createTopic(partitions uint32, live []int) clusterTopic {
	c.t.Helper()
	ctx := ctxTimeout(c.t)
	leader := c.following(live[0])
	stream := must[*wire.StreamInfo](c.t, "create stream")(leader.CreateStream(ctx, "orders", nil))
	topic := must[*wire.TopicDetails](c.t, "create topic")(leader.CreateTopic(ctx, &wire.CreateTopic{
		Stream: id(stream.ID), PartitionsCount: partitions, Name: "fills",
		Options: wire.Headers{wire.StringHeader(wire.OptionDurability, "persisted")}}))
	created := clusterTopic{stream: stream.ID, topic: topic.ID, partitions: partitions}
	for _, replica := range live {
		c.eventually(20*time.Second, fmt.Sprintf("node %d serves the topic", replica), func() string {
			pinned, err := c.pinned(replica)
			if err != nil {
				return err.Error()
			}
			defer func() { _ = pinned.Close() }()
			details, err := pinned.GetTopic(ctx, id(created.stream), id(created.topic))
			if err != nil {
				return err.Error()
			}
			if details.PartitionsCount != partitions {
				return fmt.Sprintf("%d partitions", details.PartitionsCount)
			}
			return ""
		})
	}
	return created
}

// eventually retries check until it returns "" or timeout passes.
func (c *testCluster) eventually(timeout time.Duration, what string, check func() string) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		why := check()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: not after %v: %s\n%s", what, timeout, why, c.logs())
		}
		time.Sleep(50 * time.Millisecond) // real processes: there is no clock to drive
	}
}

// producer sends numbered batches to one partition and records which
// were acknowledged. A batch whose outcome is unknown (the connection
// broke, a timeout) is never resent: it may or may not be in the log,
// but at most once. Payloads are "<lane>-<sequence>".
type producer struct {
	lane      string
	target    clusterTopic
	partition uint32
	client    *client.Client
	batch     int

	mu       sync.Mutex
	acked    map[string]bool
	unknown  map[string]bool
	failures []string
	sent     atomic.Int64
	lastAck  atomic.Int64 // UnixNano of the latest acknowledgement
	ackTimes []time.Time  // when each acknowledged batch was
}

func newProducer(lane string, target clusterTopic, partition uint32, c *client.Client, batch int) *producer {
	return &producer{lane: lane, target: target, partition: partition, client: c, batch: batch,
		acked: map[string]bool{}, unknown: map[string]bool{}}
}

// run sends until stop is closed.
func (p *producer) run(stop <-chan struct{}, done *sync.WaitGroup) {
	defer done.Done()
	for sequence := 0; ; {
		select {
		case <-stop:
			return
		default:
		}
		sequence = p.sendOne(sequence, 10*time.Second)
	}
}

// sendOne sends the batch starting at sequence and returns the next
// sequence.
func (p *producer) sendOne(sequence int, timeout time.Duration) int {
	batch := make([]wire.OutgoingMessage, p.batch)
	names := make([]string, p.batch)
	for i := range batch {
		names[i] = p.lane + "-" + strconv.Itoa(sequence+i)
		batch[i] = wire.OutgoingMessage{Payload: []byte(names[i])}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err := p.client.SendMessages(ctx, id(p.target.stream), id(p.target.topic), wire.PartitionID(p.partition), batch)
	p.sent.Add(int64(len(batch)))
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, name := range names {
		if err == nil {
			p.acked[name] = true
		} else {
			p.unknown[name] = true
		}
	}
	if err == nil {
		now := time.Now()
		p.lastAck.Store(now.UnixNano())
		p.ackTimes = append(p.ackTimes, now)
	} else if len(p.failures) < 20 {
		p.failures = append(p.failures, err.Error())
	}
	return sequence + len(batch)
}

// outage is the longest wait between consecutive acknowledgements (the
// failure counting as one) that ended after at: replies already on their
// way when the node failed can arrive just after it, so the first gap is
// not always the stall. False when nothing was acknowledged after at.
func (p *producer) outage(at time.Time) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	longest, previous, after := time.Duration(0), at, false
	for _, acked := range p.ackTimes {
		if !acked.After(at) {
			continue
		}
		longest, previous, after = max(longest, acked.Sub(previous)), acked, true
	}
	return longest, after
}

func (p *producer) ackedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acked)
}

// readPartition reads a whole partition from node replica, in offset
// order, checking that offsets are contiguous from 0.
func (c *testCluster) readPartition(replica int, target clusterTopic, partition uint32) ([]string, error) {
	pinned, err := c.pinned(replica)
	if err != nil {
		return nil, err
	}
	defer func() { _ = pinned.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out []string
	for {
		polled, err := pinned.PollMessages(ctx, &wire.PollMessages{Consumer: single(1), Stream: id(target.stream),
			Topic: id(target.topic), Partition: wire.PartitionOf(partition),
			Strategy: wire.Strategy{Kind: wire.StrategyOffset, Value: uint64(len(out))}, Count: 1000})
		if err != nil {
			return out, err
		}
		iterator := polled.Messages()
		count := 0
		for message, ok := iterator.Next(); ok; message, ok = iterator.Next() {
			if message.Offset != uint64(len(out)) {
				return out, fmt.Errorf("offset %d at position %d", message.Offset, len(out))
			}
			out = append(out, string(message.Payload))
			count++
		}
		if count == 0 {
			return out, nil
		}
	}
}

// verifyLog checks a partition's contents against what the producers
// saw: every acknowledged message present exactly once, nothing present
// twice, nothing that was never sent, and each lane's messages in the
// order it sent them. It returns the number of acknowledged messages.
func verifyLog(contents []string, producers []*producer) (int, string) {
	seen := make(map[string]int, len(contents))
	lastSequence := map[string]int{}
	for position, name := range contents {
		if first, ok := seen[name]; ok {
			return 0, fmt.Sprintf("%q at offsets %d and %d", name, first, position)
		}
		seen[name] = position
		cut := strings.LastIndexByte(name, '-')
		if cut < 0 {
			return 0, fmt.Sprintf("unknown message %q at offset %d", name, position)
		}
		sequence, err := strconv.Atoi(name[cut+1:])
		if err != nil {
			return 0, fmt.Sprintf("unknown message %q at offset %d", name, position)
		}
		lane := name[:cut]
		if last, ok := lastSequence[lane]; ok && sequence <= last {
			return 0, fmt.Sprintf("%q at offset %d after sequence %d: out of order", name, position, last)
		}
		lastSequence[lane] = sequence
	}
	acked := 0
	for _, p := range producers {
		p.mu.Lock()
		for name := range p.acked {
			if _, ok := seen[name]; !ok {
				p.mu.Unlock()
				return 0, fmt.Sprintf("acknowledged %q is missing", name)
			}
			acked++
		}
		for _, name := range contents {
			if strings.HasPrefix(name, p.lane+"-") && !p.acked[name] && !p.unknown[name] {
				p.mu.Unlock()
				return 0, fmt.Sprintf("%q was never sent", name)
			}
		}
		p.mu.Unlock()
	}
	return acked, ""
}

// awaitSameLog waits until every listed node holds the same contents of
// a partition, which verifyLog accepts against the producers of that
// partition, and returns them.
func (c *testCluster) awaitSameLog(nodes []int, target clusterTopic, partition uint32, producers []*producer,
	timeout time.Duration) []string {
	c.t.Helper()
	producers = lanesOf(producers, partition)
	var reference []string
	c.eventually(timeout, fmt.Sprintf("partition %d identical on nodes %v", partition, nodes), func() string {
		reference = nil
		var problems []string
		all := map[int][]string{}
		for _, replica := range nodes {
			contents, err := c.readPartition(replica, target, partition)
			if err != nil {
				problems = append(problems, fmt.Sprintf("node %d: %v", replica, err))
				continue
			}
			all[replica] = contents
			if _, why := verifyLog(contents, producers); why != "" {
				problems = append(problems, fmt.Sprintf("node %d (%d messages): %s", replica, len(contents), why))
			}
		}
		if len(problems) > 0 {
			for _, replica := range nodes {
				if contents, ok := all[replica]; ok {
					problems = append(problems, fmt.Sprintf("node %d around first diff: %s", replica, aroundDiff(contents, all)))
				}
			}
			return strings.Join(problems, "; ")
		}
		for _, replica := range nodes {
			contents := all[replica]
			if reference != nil && !slices.Equal(contents, reference) {
				return fmt.Sprintf("node %d holds %d messages, node %d %d", replica, len(contents), nodes[0], len(reference))
			}
			reference = contents
		}
		return ""
	})
	return reference
}

// lanesOf returns the producers writing partition.
func lanesOf(producers []*producer, partition uint32) []*producer {
	var out []*producer
	for _, p := range producers {
		if p.partition == partition {
			out = append(out, p)
		}
	}
	return out
}

// probeFailover sends one message at a time to partition through node
// replica until one is acknowledged and returns when that was. The probe
// is a lane of its own, so verifyLog holds it to the same rules.
func probeFailover(probe *producer, deadline time.Time) (time.Time, bool) {
	for sequence := 0; time.Now().Before(deadline); {
		before := probe.ackedCount()
		sequence = probe.sendOne(sequence, time.Until(deadline))
		if probe.ackedCount() > before {
			return time.Now(), true
		}
		time.Sleep(10 * time.Millisecond) // a refusal came back at once: do not spin
	}
	return time.Time{}, false
}

// probeMetadataFailover creates streams through c, one at a time, until
// one is acknowledged, and returns when that was. A create whose outcome
// was unknown may have committed: its replay answering "already exists"
// also proves the metadata group commits again.
func probeMetadataFailover(c *client.Client, deadline time.Time) (time.Time, bool) {
	for attempt := 0; time.Now().Before(deadline); attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Until(deadline))
		_, err := c.CreateStream(ctx, "failover-probe", nil)
		cancel()
		if err == nil || client.StatusOf(err) == wire.StatusStreamNameAlreadyExists {
			return time.Now(), true
		}
		time.Sleep(10 * time.Millisecond) // a refusal came back at once: do not spin
	}
	return time.Time{}, false
}

// survivors lists the replicas of a size-node cluster other than down.
func survivors(size int, down ...int) []int {
	var out []int
	for replica := range size {
		if !slices.Contains(down, replica) {
			out = append(out, replica)
		}
	}
	return out
}

func logProducers(t *testing.T, producers []*producer) {
	t.Helper()
	for _, p := range producers {
		p.mu.Lock()
		t.Logf("lane %s: %d sent, %d acknowledged, %d unknown; first failures %q", p.lane, p.sent.Load(),
			len(p.acked), len(p.unknown), p.failures[:min(3, len(p.failures))])
		p.mu.Unlock()
	}
}

// aroundDiff shows contents around the first position where the nodes'
// contents differ (the end when they agree), for a failure message.
func aroundDiff(contents []string, all map[int][]string) string {
	first := len(contents)
	for _, other := range all {
		for i := 0; i < min(len(other), len(contents)); i++ {
			if other[i] != contents[i] {
				first = min(first, i)
				break
			}
		}
	}
	from, to := max(0, first-3), min(len(contents), first+4)
	return fmt.Sprintf("first diff %d: %v", first, contents[from:to])
}
