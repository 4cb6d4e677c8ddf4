package main

import (
	"context"
	"hash/crc32"
	"math/rand/v2"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// storeOffsets stores random single-consumer and group offsets below the
// acknowledged high marks until the server dies, recording each
// acknowledged one.
func (l *killLoop) storeOffsets(random *rand.Rand) {
	c, err := l.dialQuiet()
	if err != nil {
		l.unexpected("dial", err)
		return
	}
	defer func() { _ = c.Close() }() // the server may be gone
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for topic := range killTopics {
		if err := c.JoinConsumerGroup(ctx, wire.GroupTarget{Stream: id(0), Topic: id(uint32(topic)), Group: id(0)}); err != nil {
			l.unexpected("join", err)
			return
		}
	}
	for !l.killed.Load() { // with nothing acknowledged yet no call would notice the kill
		index := random.IntN(len(l.lanes))
		lane := l.lanes[index]
		high := lane.ackedHigh()
		if high > 0 {
			key := killOffsetKey{lane: index, consumer: uint32(random.IntN(killConsumers + 1))}
			value := random.Uint64N(high)
			l.mu.Lock()
			entry := l.offsets[key]
			if entry == nil {
				entry = &killOffset{}
				l.offsets[key] = entry
			}
			entry.inFlight, entry.maybe = value, true
			l.mu.Unlock()
			err := c.StoreConsumerOffset(ctx, l.offsetTarget(key), value)
			if err != nil {
				l.unexpected("store offset", err)
				return
			}
			l.mu.Lock()
			entry.acked, entry.hasAcked, entry.maybe = value, true, false
			l.mu.Unlock()
		}
		pause := time.NewTimer(time.Duration(random.Int64N(int64(killOffsetPauseMax))))
		<-pause.C
	}
}

func (l *killLoop) offsetTarget(key killOffsetKey) wire.OffsetTarget {
	lane := l.lanes[key.lane]
	consumer := single(key.consumer)
	if key.consumer == 0 {
		consumer = groupConsumer(0)
	}
	return wire.OffsetTarget{Consumer: consumer, Stream: id(0), Topic: id(lane.topic),
		Partition: wire.PartitionOf(lane.partition)}
}

// verifyLane reads the whole partition: offsets contiguous from 0, every
// acknowledged offset holding its message, ids unique, and nothing that was
// never sent. A stored in-flight message becomes expected from now on.
func (l *killLoop) verifyLane(c *client.Client, lane *killLane) {
	t := l.t
	ctx := ctxTimeout(t)
	seen := map[wire.Uint128]uint64{}
	var offset uint64
	for {
		polled, err := c.PollMessages(ctx, &wire.PollMessages{Consumer: single(0), Stream: id(0), Topic: id(lane.topic),
			Partition: wire.PartitionOf(lane.partition), Strategy: wire.Strategy{Kind: wire.StrategyOffset, Value: offset},
			Count: killPollCount})
		if err != nil {
			t.Fatalf("topic %d partition %d: poll at %d: %v", lane.topic, lane.partition, offset, err)
		}
		count := 0
		iterator := polled.Messages()
		for message, ok := iterator.Next(); ok; message, ok = iterator.Next() {
			if message.Offset != offset {
				t.Fatalf("topic %d partition %d: offset %d where %d was due", lane.topic, lane.partition,
					message.Offset, offset)
			}
			if earlier, twice := seen[message.Header.ID]; twice {
				t.Fatalf("topic %d partition %d: message id %v at offsets %d and %d", lane.topic, lane.partition,
					message.Header.ID, earlier, offset)
			}
			seen[message.Header.ID] = offset
			l.checkMessage(lane, offset, message)
			offset++
			count++
		}
		if count == 0 {
			break
		}
	}
	if offset < lane.high {
		t.Fatalf("topic %d partition %d: %d messages after the kill, offsets up to %d were acknowledged",
			lane.topic, lane.partition, offset, lane.high-1)
	}
	lane.high = offset
	lane.verified += offset
	clear(lane.inFlight)
}

// checkMessage compares one stored message with the ledger.
func (l *killLoop) checkMessage(lane *killLane, offset uint64, message wire.PolledMessage) {
	got := killRecord{id: message.Header.ID, checksum: crc32.ChecksumIEEE(message.Payload), length: len(message.Payload)}
	want, acknowledged := lane.expected[offset]
	if !acknowledged {
		inFlight, sent := lane.inFlight[got.id]
		if !sent || inFlight != got {
			l.t.Fatalf("topic %d partition %d offset %d: message %+v was never sent (or its payload changed)",
				lane.topic, lane.partition, offset, got)
		}
		lane.expected[offset] = got
		lane.unacked++
		return
	}
	if got != want {
		l.t.Fatalf("topic %d partition %d offset %d: stored %+v, acknowledged %+v", lane.topic, lane.partition,
			offset, got, want)
	}
}

// verifyOffsets reads every consumer offset stored so far: the last
// acknowledged value, or the one in flight at the kill.
func (l *killLoop) verifyOffsets(c *client.Client) {
	ctx := ctxTimeout(l.t)
	for key, entry := range l.offsets {
		info, found, err := c.GetConsumerOffset(ctx, l.offsetTarget(key))
		if err != nil {
			l.t.Fatalf("get offset %+v: %v", key, err)
		}
		switch {
		case found && entry.maybe && info.StoredOffset == entry.inFlight:
		case found && entry.hasAcked && info.StoredOffset == entry.acked:
		case !found && !entry.hasAcked:
		default:
			l.t.Fatalf("consumer %d on topic %d partition %d: stored %d (found %v), acknowledged %d (%v), in flight %d (%v)",
				key.consumer, l.lanes[key.lane].topic, l.lanes[key.lane].partition, info.StoredOffset, found,
				entry.acked, entry.hasAcked, entry.inFlight, entry.maybe)
		}
		if found {
			entry.acked, entry.hasAcked = info.StoredOffset, true
		}
		entry.maybe = false
	}
}
