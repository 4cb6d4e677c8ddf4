package wire

import (
	"bytes"
	"testing"
)

// summaryRecord encodes count messages of payloadBytes each (plus one
// user header on odd ones), stamped at baseOffset, origins from origin.
func summaryRecord(count int, payloadBytes int, baseOffset uint64, origin uint64) []byte {
	messages := make([]OutgoingMessage, count)
	for index := range messages {
		messages[index] = OutgoingMessage{OriginTimestamp: origin + uint64(index),
			Payload: bytes.Repeat([]byte{byte(index + 1)}, payloadBytes)}
		if index%2 == 1 {
			messages[index].UserHeaders = []byte{1, 2, 3}
		}
	}
	record := make([]byte, BatchBytes(messages))
	EncodeBatch(record, messages)
	StampBatch(record, 0, baseOffset, 99)
	return record
}

// TestPollSummary: Decode's summary matches what walking the messages
// gives: payload bytes without user headers, the first offset and origin,
// and whether offsets run without a gap. Rows: one record, two adjacent
// records, two records with a gap between them, and no records.
func TestPollSummary(t *testing.T) {
	for _, row := range []struct {
		name    string
		records [][]byte
	}{
		{"one record", [][]byte{summaryRecord(5, 100, 40, 1000)}},
		{"adjacent records", [][]byte{summaryRecord(3, 10, 7, 500), summaryRecord(4, 20, 10, 600)}},
		{"a gap", [][]byte{summaryRecord(3, 10, 7, 500), summaryRecord(4, 20, 11, 600)}},
		{"no records", nil},
	} {
		records := bytes.Join(row.records, nil)
		count := uint32(0)
		for _, record := range row.records {
			count += readBatchHeader(record).MessageCount
		}
		payload := make([]byte, PollPrefixBytes+len(records))
		EncodePollPrefix(payload, 1, 0, count)
		copy(payload[PollPrefixBytes:], records)
		var polled PolledMessages
		if err := DecodeAll(&polled, payload); err != nil {
			t.Fatalf("%s: %v", row.name, err)
		}
		want := PollSummary{OffsetsInOrder: true}
		iterator := polled.Messages()
		for index := uint64(0); ; index++ {
			message, ok := iterator.Next()
			if !ok {
				break
			}
			if index == 0 {
				want.OffsetFirst, want.OriginFirst = message.Offset, message.OriginTimestamp
			} else if message.Offset != want.OffsetFirst+index {
				want.OffsetsInOrder = false
			}
			want.PayloadBytes += uint64(len(message.Payload))
		}
		if got := polled.Summary(); got != want {
			t.Fatalf("%s: summary %+v, want %+v", row.name, got, want)
		}
		if row.name == "a gap" && want.OffsetsInOrder || row.name == "adjacent records" && !want.OffsetsInOrder {
			t.Fatalf("%s: the rows do not cover what they name", row.name)
		}
	}
}
