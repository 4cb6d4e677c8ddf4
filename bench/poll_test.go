package bench

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// pollRecord builds one stored batch of count messages starting at
// baseOffset, stamped as the server stamps it.
func pollRecord(baseOffset uint64, count int, origin time.Time) []byte {
	pool := []byte(strings.Repeat("x", 64))
	batcher := newBatcher(pool, 1, 1, Fixed(10), Fixed(uint32(count)))
	messages, _ := batcher.next(uint32(count), origin)
	record := make([]byte, wire.BatchBytes(messages))
	wire.EncodeBatch(record, messages)
	wire.StampBatch(record, 0, baseOffset, uint64(origin.UnixMicro()))
	return record
}

// pollPayload is a poll reply payload holding records of count messages
// in all, as the client receives it.
func pollPayload(count int, records ...[]byte) []byte {
	payload := wire.PollPrefixBytes
	for _, record := range records {
		payload += len(record)
	}
	out := make([]byte, wire.PollPrefixBytes, payload)
	wire.EncodePollPrefix(out, 0, 0, uint32(count))
	for _, record := range records {
		out = append(out, record...)
	}
	return out
}

// pollReply decodes a poll reply holding one stored batch of count
// messages starting at baseOffset, as the client does.
func pollReply(t testing.TB, baseOffset uint64, count int, origin time.Time) *wire.PolledMessages {
	t.Helper()
	var reply wire.PolledMessages
	if err := wire.DecodeAll(&reply, pollPayload(count, pollRecord(baseOffset, count, origin))); err != nil {
		t.Fatal(err)
	}
	return &reply
}

func TestReadPoll(t *testing.T) {
	origin := time.UnixMicro(1_700_000_000_000_000)
	result, err := readPoll(pollReply(t, 40, 5, origin))
	if err != nil {
		t.Fatal(err)
	}
	if result.first != 40 || result.count != 5 || result.userBytes != 50 || !result.origin.Equal(origin) {
		t.Errorf("read %+v, want offsets 40..44, 50 payload bytes, origin %v", result, origin)
	}
	var gap wire.PolledMessages
	if err := wire.DecodeAll(&gap, pollPayload(6, pollRecord(0, 3, origin), pollRecord(4, 3, origin))); err != nil {
		t.Fatal(err)
	}
	if _, err := readPoll(&gap); err == nil {
		t.Error("a reply with a gap in its offsets must fail")
	}
}

// TestGroupCheck pins the duplicate and gap detection of group polls.
func TestGroupCheck(t *testing.T) {
	group := &groupState{id: 3, next: map[uint32]uint64{}}
	if err := group.check(1, 0, 10); err != nil {
		t.Fatal(err)
	}
	if err := group.check(1, 10, 5); err != nil {
		t.Fatal(err)
	}
	if err := group.check(1, 12, 5); err == nil {
		t.Error("offset 12 after 0..14 is a duplicate and must fail")
	}
	if err := group.check(2, 1, 5); err == nil {
		t.Error("offset 1 first on a fresh partition is a gap and must fail")
	}
}

// TestBatcher checks sizes, ids and stamps of built batches.
func TestBatcher(t *testing.T) {
	pool := newPayloadPool(rand.New(rand.NewPCG(1, 2)))
	batcher := newBatcher(pool, 42, 7, Range{10, 20}, Range{1, 5})
	seen := map[uint64]bool{}
	origin := time.UnixMicro(123456)
	other := newBatcher(pool, 42, 8, Range{10, 20}, Range{1, 5})
	first, _ := other.next(1, origin)
	high := first[0].ID.Hi
	for range 50 {
		count := batcher.drawCount()
		if count < 1 || count > 5 {
			t.Fatalf("count %d outside 1..5", count)
		}
		messages, userBytes := batcher.next(count, origin)
		var sum uint64
		for _, message := range messages {
			if len(message.Payload) < 10 || len(message.Payload) > 20 || message.ID.Hi == high || message.ID.Hi != messages[0].ID.Hi || seen[message.ID.Lo] ||
				message.OriginTimestamp != 123456 {
				t.Fatalf("message %+v", message)
			}
			seen[message.ID.Lo] = true
			sum += uint64(len(message.Payload))
		}
		if sum != userBytes || len(messages) != int(count) {
			t.Fatalf("batch of %d messages, %d bytes, reported %d", len(messages), sum, userBytes)
		}
	}
	for _, char := range pool[:1000] {
		if !strings.ContainsRune(alphabet, rune(char)) {
			t.Fatalf("payload byte %q is not alphanumeric", char)
		}
	}
}
