package shard

import (
	"testing"
	"time"

	"github.com/whippetio/whippet/ring"
	"github.com/whippetio/whippet/wire"
)

// TestLimits asserts the relationships between the named limits, each
// with the reason it must hold.
func TestLimits(t *testing.T) {
	check := func(ok bool, why string) {
		t.Helper()
		if !ok {
			t.Error(why)
		}
	}
	check(queueSlotCount&(queueSlotCount-1) == 0, "queue slots are a power of two: indexes are masked, not divided")
	check(messagesPerTurnMax <= queueSlotCount, "a turn never takes more messages than a queue holds")
	check(shardCountMax*shardCountMax*queueSlotCount <= 1<<22, "the queues of all ordered pairs stay within 4M slots")
	check(shardCountMax <= cpuSetBits, "every shard can be pinned to a CPU a CPUSet names")
	check(completionsPerTurnMax >= recvBufferCount, "one turn can reap a receive for every provided buffer")
	check(streamFrameBytesMin >= directRecvBytesMin+progressRecvBytes,
		"a streamed frame is large enough to be received into its buffer, in more than one step")
	check(wire.HeaderBytes+streamHeadBytesMin <= recvBufferBytes,
		"the first receive buffer of a frame holds what the front looks at before it streams")
	check(streamHoldMax >= 10*time.Millisecond, "a stream is not dropped before a megabyte could arrive over a slow link")
	check(recvBufferCount&(recvBufferCount-1) == 0, "a provided-buffer ring holds a power of two buffers")
	check(recvBufferBytes%4096 == 0, "receive buffers are whole pages")
	check(frameHeadBytesMax < frameBytesMax, "a frame's head fits within the largest frame")
	check(frameHeadBytesMax >= 256, "the handler may see a whole 256-byte Iggy VSR header")
	check(sendSpansMax == 2*pollSpansMax+1, "a vectored send carries a reply's spans and the buffer pieces between them")
	check(sendSpansMax <= 1024, "a vectored send stays within IOV_MAX")
	check(sendQueueLenMax == inflightRequestsMax+pushQueueLenMax, "every in-flight reply fits the send queue beside the pushes")
	check(pausedInputBytesMax >= recvBufferBytes, "a pause can park at least the receive that was in flight")
	check(pausedInputBytesMax == recvBufferCount*recvBufferBytes, "a pause parks at most what every provided buffer can carry")
	check(poolClassBytesMin<<(poolClassCount-1) == frameBytesMax, "the pool's largest class is the largest frame")
	check(poolBuffersPerClassMax >= inflightRequestsMax/2, "a busy connection's frames recycle through the pool")
	check(connectionsHandoffMax <= queueSlotCount, "held handovers are fewer than one queue's slots")
	check(spinIdleTurnsMax > 0, "spinning stops only after fruitless spins")
	check(idleTrimDelay >= 100*spinMax, "an idle trim waits far longer than any spin: a pause between requests keeps its pages")
	check(timersPerShardMax >= connectionsPerShardMax, "a timer per connection (idle timeouts) fits")
	check(fileOpsInFlightMax >= completionsPerTurnMax, "file ops can keep a turn's completions busy")
	check(acceptBacklog >= connectionsHandoffMax, "the backlog absorbs a burst while handovers wait")
	check(affinityRequestsMin >= 2, "one stray request to another shard never moves a connection")
	check(affinityMoveIntervalMin >= 100*time.Millisecond, "a connection moves rarely next to the requests a move spares hops on")
	const journalBytes = 4 << 20 // the engine's default journal
	check(uringLargeClassMapBytes >= uringRingPartitionsPerShard*2*journalBytes,
		"the journal class holds both journals of uringRingPartitionsPerShard partitions")
	check(uringLargeClassBytesMin <= journalBytes, "the journal class is a large class")
	check(uringClassBytesMin<<(uringClassCount-1) >= frameBytesMax, "the largest io_uring class holds the largest frame")
	fixedSlots := 0
	for class := range uringClassCount {
		if uringFixedClass(class) {
			fixedSlots += min(max(1, uringClassMapBytesOf(class)/(uringClassBytesMin<<class)), ring.PoolBuffersMax)
		}
	}
	check(fixedSlots <= ring.PoolBuffersMax, "every fixed class's buffers fit the ring's fixed-buffer table")
}
