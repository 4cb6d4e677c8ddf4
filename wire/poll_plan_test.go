package wire

import (
	"slices"
	"testing"

	"github.com/whippetio/whippet/internal/invariant"
)

// storedBatches returns count stamped batches of perBatch messages with
// contiguous offsets from 0.
func storedBatches(t testing.TB, count, perBatch int) [][]byte {
	var batches [][]byte
	for i := range count {
		messages := make([]OutgoingMessage, perBatch)
		for j := range messages {
			messages[j] = OutgoingMessage{ID: Uint128{Lo: uint64(i*perBatch + j + 1)}, Payload: []byte("payload")}
		}
		batch := make([]byte, BatchBytes(messages))
		EncodeBatch(batch, messages)
		StampBatch(batch, 0, uint64(i*perBatch), 1000)
		if _, err := ValidateBatch(batch); err != nil {
			t.Fatal(err)
		}
		batches = append(batches, batch)
	}
	return batches
}

// planOffsets encodes the plan, decodes it as a client would, checks every
// record and returns the served offsets.
func planOffsets(t *testing.T, plan *PollPlan) []uint64 {
	payload := make([]byte, plan.PayloadBytes)
	EncodePoll(payload, 0, 8, plan)
	var polled PolledMessages
	if err := DecodeAll(&polled, payload); err != nil {
		t.Fatalf("planned reply does not decode: %v", err)
	}
	for _, slice := range plan.Slices {
		if _, err := VerifyRecord(append(slice.Header[:], slice.Frames...)); err != nil {
			t.Fatalf("planned record does not verify: %v", err)
		}
	}
	var offsets []uint64
	iterator := polled.Messages()
	for message, ok := iterator.Next(); ok; message, ok = iterator.Next() {
		offsets = append(offsets, message.Offset)
	}
	return offsets
}

// TestPlanPoll: the plan serves whole batches while they fit, slices the
// first and last, respects the count and the byte cap, and always serves
// one message when one qualifies.
func TestPlanPoll(t *testing.T) {
	batches := storedBatches(t, 3, 3)
	oneRecord := PollPrefixBytes + len(batches[0])
	rows := []struct {
		name     string
		first    uint64
		count    uint32
		bytesMax int
		want     []uint64
	}{
		{"from the middle of the first batch", 1, 100, BodyBytesMax, []uint64{1, 2, 3, 4, 5, 6, 7, 8}},
		{"count ends inside a batch", 1, 4, BodyBytesMax, []uint64{1, 2, 3, 4}},
		{"byte cap of one record", 0, 100, oneRecord, []uint64{0, 1, 2}},
		{"byte cap ends inside a batch", 0, 100, oneRecord + BatchHeaderBytes + 60, []uint64{0, 1, 2, 3}},
		{"cap below one message still serves one", 4, 100, PollPrefixBytes, []uint64{4}},
		{"past the end", 9, 100, BodyBytesMax, nil},
		{"count zero", 0, 0, BodyBytesMax, nil},
	}
	var plan PollPlan
	for _, row := range rows {
		PlanPoll(&plan, batches, row.first, row.count, row.bytesMax)
		got := planOffsets(t, &plan)
		if !slices.Equal(got, row.want) || plan.MessagesCount != uint32(len(row.want)) {
			t.Errorf("%s: offsets %v (count %d), want %v", row.name, got, plan.MessagesCount, row.want)
		}
		if len(row.want) > 1 && plan.PayloadBytes > max(row.bytesMax, PollPrefixBytes) {
			t.Errorf("%s: %d payload bytes above the cap %d", row.name, plan.PayloadBytes, row.bytesMax)
		}
	}
	allocs := testing.AllocsPerRun(50, func() { PlanPoll(&plan, batches, 1, 100, BodyBytesMax) })
	if allocs != 0 && !invariant.Enabled { // invariant builds re-verify sliced records
		t.Fatalf("PlanPoll with a reused plan allocates %.1f", allocs)
	}
}
