package wire

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// randomBatch encodes count messages of up to payloadMax bytes.
func randomBatch(random *rand.Rand, count, payloadMax int) []byte {
	messages := make([]OutgoingMessage, count)
	for index := range messages {
		payload := make([]byte, 1+random.IntN(payloadMax))
		for at := range payload {
			payload[at] = byte(random.Uint32())
		}
		messages[index] = OutgoingMessage{ID: Uint128{Lo: uint64(index + 1)}, OriginTimestamp: 1000 + uint64(index),
			Payload: payload}
	}
	batch := make([]byte, BatchBytes(messages))
	EncodeBatch(batch, messages)
	return batch
}

// validateInPieces runs the incremental validator over batch, fed in
// random cuts, with a stamped hasher alongside.
func validateInPieces(random *rand.Rand, batch []byte) (uint64, error) {
	var validator BatchValidator
	var stamped BatchHasher
	header := append([]byte(nil), batch[:BatchHeaderBytes]...)
	binary.LittleEndian.PutUint64(header[batchOffsetBaseOffset:], 77)
	stamped.Start(header)
	if err := validator.Start(batch, len(batch), true, &stamped); err != nil {
		return 0, err
	}
	for arrived := BatchHeaderBytes; arrived < len(batch); {
		arrived = min(len(batch), arrived+1+random.IntN(3000))
		if err := validator.Advance(batch[:arrived]); err != nil {
			return 0, err
		}
		if validator.Checked() > arrived {
			panic("checked past the arrived bytes")
		}
	}
	if _, err := validator.Finish(); err != nil {
		return 0, err
	}
	return stamped.Sum64(), nil
}

// TestBatchValidatorInPieces: fed a batch in random cuts, the validator
// finds what ValidateBatch finds, the same status for every corruption,
// and its stamped hasher computes the checksum of the stamped record.
func TestBatchValidatorInPieces(t *testing.T) {
	random := rand.New(rand.NewPCG(7, 8))
	for round := range 200 {
		batch := randomBatch(random, 1+random.IntN(40), 500)
		if round%2 == 1 {
			switch random.IntN(4) {
			case 0:
				batch[BatchHeaderBytes+random.IntN(len(batch)-BatchHeaderBytes)] ^= 1
			case 1:
				batch[batchOffsetChecksum] ^= 1
			case 2:
				binary.LittleEndian.PutUint32(batch[batchOffsetMessageCount:], uint32(random.IntN(50)))
			case 3:
				batch[batchOffsetLength] ^= 4
			}
		}
		_, whole := ValidateBatch(batch)
		sum, pieces := validateInPieces(random, batch)
		if StatusOf(whole) != StatusOf(pieces) {
			t.Fatalf("round %d: whole %v, in pieces %v", round, whole, pieces)
		}
		if whole != nil {
			continue
		}
		StampBatch(batch, 0, 77, 0)
		if got := binary.LittleEndian.Uint64(batch[batchOffsetChecksum:]); got != sum {
			t.Fatalf("round %d: stamped checksum %x, hashed alongside %x", round, got, sum)
		}
	}
}

// TestSendMessagesDecodePrefix: the envelope read from a body's first
// bytes agrees with Decode of the whole body, and a prefix too short to
// hold the batch header is an error.
func TestSendMessagesDecodePrefix(t *testing.T) {
	random := rand.New(rand.NewPCG(3, 4))
	batch := randomBatch(random, 20, 300)
	request := SendMessages{Stream: NumericID(1), Topic: NumericID(2),
		Partitioning: PartitionID(3), MessagesCount: 20, Batch: batch}
	body := make([]byte, request.EncodedSize())
	request.Encode(body)
	var whole, prefix SendMessages
	if _, err := whole.Decode(body); err != nil {
		t.Fatal(err)
	}
	at, err := prefix.DecodePrefix(body[:len(body)-len(batch)+BatchHeaderBytes], len(body))
	if err != nil || at != len(body)-len(batch) || prefix.Partitioning.PartitionID != whole.Partitioning.PartitionID ||
		prefix.MessagesCount != 20 || prefix.Batch != nil {
		t.Fatalf("prefix decode: at %d, err %v, %+v", at, err, prefix)
	}
	if _, err := prefix.DecodePrefix(body[:len(body)-len(batch)+BatchHeaderBytes-1], len(body)); err == nil {
		t.Fatal("a prefix without the whole batch header decoded")
	}
	if _, err := prefix.DecodePrefix(body[:len(body)-len(batch)+BatchHeaderBytes], len(body)+1); err == nil {
		t.Fatal("a body whose batch length lies decoded")
	}
}
