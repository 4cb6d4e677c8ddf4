package client

import (
	"sync"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// TestGroupConsumer: the consumer joins when the first sync says it is not
// a member, polls its partitions round robin, and syncs again after the
// resync sentinel.
func TestGroupConsumer(t *testing.T) {
	var mu sync.Mutex
	var log []string
	member := false
	polls := 0
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) {
		mu.Lock()
		defer mu.Unlock()
		header, body := decodeRequest(t, frame)
		switch header.CommandCode() {
		case wire.CodeSyncConsumerGroup:
			log = append(log, "sync")
			if !member {
				return [][]byte{replyFrame(t, frame, nil)}, false
			}
			return [][]byte{replyFrame(t, frame, &wire.GroupAssignment{Generation: 1, Partitions: []uint32{0, 2}})}, false
		case wire.CodeJoinConsumerGroup:
			log, member = append(log, "join"), true
		case wire.CodePollMessages:
			var poll wire.PollMessages
			if err := wire.DecodeAll(&poll, body); err != nil || poll.Consumer.Kind != wire.ConsumerGroup {
				t.Errorf("group poll %+v: %v", poll, err)
			}
			polls++
			log = append(log, "poll "+string(rune('0'+poll.Partition.ID)))
			partition := poll.Partition.ID
			if polls == 3 {
				partition = wire.PollPartitionResync
			}
			return [][]byte{replyFrame(t, frame, &wire.PolledMessages{PartitionID: partition})}, false
		}
		return [][]byte{replyFrame(t, frame, nil)}, false
	})
	ctx := testContext(t)
	client, err := Dial(ctx, testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	consumer := client.GroupConsumer(groupZero)
	for range 4 {
		if _, err := consumer.Poll(ctx, wire.Strategy{Kind: wire.StrategyNext}, 10, true); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"sync", "join", "sync", "poll 0", "poll 2", "poll 0", "sync", "poll 2"}
	mu.Lock()
	defer mu.Unlock()
	if len(log) != len(want) {
		t.Fatalf("conversation %v, want %v", log, want)
	}
	for i := range want {
		if log[i] != want[i] {
			t.Fatalf("conversation %v, want %v", log, want)
		}
	}
}
