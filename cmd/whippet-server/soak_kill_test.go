package main

import (
	"context"
	"flag"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// The kill -9 loop: producers write to persisted and written topics while
// the server is killed with SIGKILL at a seeded random moment, again and
// again on the same data directory. After every restart each acknowledged
// message must be readable at its offset, once, with its id and payload,
// and every acknowledged consumer offset must be stored. A SIGKILL is a
// process crash, not a power loss: the page cache survives, so a written
// topic (acknowledged once its O_DIRECT write completed) loses nothing
// either.

var (
	killSeed   = flag.Uint64("kill.seed", 0, "seed of the kill -9 loop (0: drawn from the clock)")
	killCycles = flag.Int("kill.cycles", 0, "cycles of the kill -9 loop (0: 50, or 3 in -short)")
)

const (
	killCyclesLong  = 50
	killCyclesShort = 3
	killDelayMin    = 50 * time.Millisecond
	killDelaySpread = 400 * time.Millisecond
	killBatchMax    = 32
	killPayloadMax  = 512
	// One batch in killLargeEvery is large (600 messages of 1000–2000
	// bytes, 0.6–1.2 MB): received while it is written, in pieces, into
	// space allocated ahead.
	killLargeEvery      = 8
	killLargeBatch      = 600
	killLargePayloadMin = 1000
	killPollCount       = 1000
	killConsumers       = 3
	killOffsetPauseMax  = 20 * time.Millisecond
)

// killTopic is one topic of the loop.
type killTopic struct {
	name       string
	durability string
	partitions uint32
}

var killTopics = []killTopic{{"persisted", "persisted", 4}, {"written", "written", 2}}

// killRecord is what the test knows of one message.
type killRecord struct {
	id       wire.Uint128
	checksum uint32
	length   int
}

// killLane is one partition's ledger: acknowledged (or since observed)
// messages by offset, and the batch in flight when the server died, which
// may or may not have been stored.
type killLane struct {
	topic, partition uint32
	mu               sync.Mutex
	expected         map[uint64]killRecord
	high             uint64 // one past the highest acknowledged offset
	inFlight         map[wire.Uint128]killRecord
	nextID           uint64
	acked, verified  uint64
	unacked          uint64 // in-flight messages found stored after a kill
}

// killOffset is one consumer offset's ledger.
type killOffset struct {
	acked, inFlight uint64
	hasAcked, maybe bool
}

// killOffsetKey names a stored offset: consumer 1..killConsumers is a
// single consumer, 0 the topic's consumer group.
type killOffsetKey struct {
	lane     int
	consumer uint32
}

// killLoop is the state shared by the cycles.
type killLoop struct {
	t       *testing.T
	s       *server
	lanes   []*killLane
	mu      sync.Mutex
	offsets map[killOffsetKey]*killOffset
	killed  atomic.Bool
}

// TestKillLoop runs the kill -9 loop: 50 cycles, or 3 in -short.
func TestKillLoop(t *testing.T) {
	cycles := *killCycles
	if cycles == 0 {
		cycles = killCyclesLong
		if testing.Short() {
			cycles = killCyclesShort
		}
	}
	seed := *killSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -kill.seed %d), %d cycles", seed, seed, cycles)
	began := time.Now()
	loop := newKillLoop(t)
	random := rand.New(rand.NewPCG(seed, 0))
	var restartTotal time.Duration
	for cycle := range cycles {
		restartTotal += loop.cycle(cycle, seed, random)
		if t.Failed() {
			t.Fatalf("cycle %d of seed %d failed", cycle, seed)
		}
	}
	var acked, verified, unacked uint64
	for _, lane := range loop.lanes {
		acked += lane.acked
		verified += lane.verified
		unacked += lane.unacked
		t.Logf("topic %d partition %d: %d acknowledged, %d unacknowledged in flight at a kill and stored, %d on file",
			lane.topic, lane.partition, lane.acked, lane.unacked, lane.high)
	}
	t.Logf("seed %d: %d cycles in %v (restarts %v), %d messages acknowledged (+%d in flight and stored), "+
		"%d message checks after restarts, %d consumer offsets", seed, cycles, time.Since(began).Round(time.Millisecond),
		restartTotal.Round(time.Millisecond), acked, unacked, verified, len(loop.offsets))
}

func newKillLoop(t *testing.T) *killLoop {
	s := startServer(t)
	admin := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "stream")(admin.CreateStream(ctx, "kill", nil))
	loop := &killLoop{t: t, s: s, offsets: map[killOffsetKey]*killOffset{}}
	for topicID, topic := range killTopics {
		must[*wire.TopicDetails](t, "topic")(admin.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0),
			PartitionsCount: topic.partitions, Name: topic.name,
			Options: wire.Headers{wire.StringHeader(wire.OptionDurability, topic.durability)}}))
		must[*wire.ConsumerGroupInfo](t, "group")(admin.CreateConsumerGroup(ctx, id(0), id(uint32(topicID)), "g"))
		for partition := range topic.partitions {
			loop.lanes = append(loop.lanes, &killLane{topic: uint32(topicID), partition: partition,
				expected: map[uint64]killRecord{}, nextID: 1})
		}
	}
	check(t, "close", admin.Close())
	return loop
}

// cycle runs producers and an offset writer, kills the server after a
// seeded delay, starts it again and verifies everything; it returns the
// restart's duration.
func (l *killLoop) cycle(cycle int, seed uint64, random *rand.Rand) time.Duration {
	delay := killDelayMin + time.Duration(random.Int64N(int64(killDelaySpread)))
	l.killed.Store(false)
	var wg sync.WaitGroup
	for index, lane := range l.lanes {
		wg.Add(1)
		laneRandom := rand.New(rand.NewPCG(seed, uint64(cycle)<<16|uint64(index)+1))
		go func() {
			defer wg.Done()
			l.produce(lane, laneRandom)
		}()
	}
	wg.Add(1)
	offsetRandom := rand.New(rand.NewPCG(seed, uint64(cycle)<<16|0xffff))
	go func() {
		defer wg.Done()
		l.storeOffsets(offsetRandom)
	}()
	timer := time.NewTimer(delay)
	<-timer.C
	l.killed.Store(true)
	if err := l.s.command.Process.Kill(); err != nil {
		l.t.Fatal(err)
	}
	<-l.s.exited
	l.s.command = nil
	wg.Wait()
	began := time.Now()
	l.s.start()
	restart := time.Since(began)
	logs := l.s.logs.String()
	if torn, rebuilt := strings.Count(logs, "torn"), strings.Count(logs, "rebuilding index"); torn+rebuilt > 0 {
		l.t.Logf("cycle %d (kill after %v): recovery truncated %d torn tails, rebuilt %d indexes", cycle, delay, torn,
			rebuilt)
	}
	c := l.s.dial(l.t)
	for _, lane := range l.lanes {
		l.verifyLane(c, lane)
	}
	l.verifyOffsets(c)
	check(l.t, "close", c.Close())
	return restart
}

// dialQuiet connects without reconnecting: a broken connection ends the
// producer.
func (l *killLoop) dialQuiet() (*client.Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return client.Dial(ctx, client.Options{Address: l.s.address, Username: "iggy", Password: "iggy",
		ReconnectAttempts: -1, ReplyTimeout: 10 * time.Second})
}

// produce sends one batch at a time until the server dies.
func (l *killLoop) produce(lane *killLane, random *rand.Rand) {
	c, err := l.dialQuiet()
	if err != nil {
		l.unexpected("dial", err)
		return
	}
	defer func() { _ = c.Close() }() // the server may be gone
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		outgoing, records := lane.batch(random)
		confirmations, err := c.SendMessages(ctx, id(0), id(lane.topic), wire.PartitionID(lane.partition), outgoing)
		if err != nil {
			l.unexpected("send", err)
			return
		}
		if len(confirmations) != 1 || confirmations[0].PartitionID != lane.partition {
			l.t.Errorf("send to partition %d confirmed %+v", lane.partition, confirmations)
			return
		}
		lane.acknowledge(confirmations[0].BaseOffset, records)
	}
}

// unexpected fails the test for an error that came before the kill.
func (l *killLoop) unexpected(what string, err error) {
	if !l.killed.Load() {
		l.t.Errorf("%s before the kill: %v", what, err)
	}
}

// batch builds the next batch and records it as in flight.
func (lane *killLane) batch(random *rand.Rand) ([]wire.OutgoingMessage, []killRecord) {
	count, payloadMin, payloadMax := 1+random.IntN(killBatchMax), 1, killPayloadMax
	if random.IntN(killLargeEvery) == 0 {
		count, payloadMin, payloadMax = killLargeBatch, killLargePayloadMin, 2*killLargePayloadMin
	}
	outgoing := make([]wire.OutgoingMessage, count)
	records := make([]killRecord, count)
	lane.mu.Lock()
	defer lane.mu.Unlock()
	clear(lane.inFlight)
	if lane.inFlight == nil {
		lane.inFlight = map[wire.Uint128]killRecord{}
	}
	for i := range outgoing {
		payload := make([]byte, payloadMin+random.IntN(payloadMax-payloadMin+1))
		for j := range payload {
			payload[j] = byte(random.Uint32())
		}
		messageID := wire.Uint128{Lo: lane.nextID, Hi: uint64(lane.topic)<<32 | uint64(lane.partition) + 1}
		lane.nextID++
		outgoing[i] = wire.OutgoingMessage{ID: messageID, Payload: payload}
		records[i] = killRecord{id: messageID, checksum: crc32.ChecksumIEEE(payload), length: len(payload)}
		lane.inFlight[messageID] = records[i]
	}
	return outgoing, records
}

func (lane *killLane) acknowledge(base uint64, records []killRecord) {
	lane.mu.Lock()
	defer lane.mu.Unlock()
	for i, record := range records {
		lane.expected[base+uint64(i)] = record
	}
	lane.high = max(lane.high, base+uint64(len(records)))
	lane.acked += uint64(len(records))
	clear(lane.inFlight)
}

// ackedHigh returns one past the highest acknowledged offset.
func (lane *killLane) ackedHigh() uint64 {
	lane.mu.Lock()
	defer lane.mu.Unlock()
	return lane.high
}
