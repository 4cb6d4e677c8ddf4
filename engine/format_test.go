package engine

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
)

// batchVectors is the part of the shared golden vector file the engine
// checks: a producer's batch, the stored record the reference server made
// of it, and a sliced poll view.
type batchVectors struct {
	SendMessages struct {
		PayloadHex         string `json:"payload_hex"`
		BatchOffsetPayload int    `json:"batch_offset_in_payload"`
	} `json:"send_messages"`
	PollMessages struct {
		PayloadHex       string `json:"payload_hex"`
		SlicedPayloadHex string `json:"sliced_payload_hex"`
	} `json:"poll_messages"`
}

func loadBatchVectors(t *testing.T) (sent, stored, sliced []byte) {
	t.Helper()
	raw, err := os.ReadFile("../../shared/protocol/vectors/messages_batch.json")
	if err != nil {
		t.Skipf("golden vectors not available: %v", err)
	}
	var vectors batchVectors
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	decode := func(text string) []byte {
		value, err := hex.DecodeString(text)
		if err != nil {
			t.Fatal(err)
		}
		return value
	}
	send := decode(vectors.SendMessages.PayloadHex)
	// Poll reply bodies start with the 16-byte prefix (PROTOCOL.md §8.5).
	return send[vectors.SendMessages.BatchOffsetPayload:], decode(vectors.PollMessages.PayloadHex)[16:],
		decode(vectors.PollMessages.SlicedPayloadHex)[16:]
}

// TestGoldenBatchStamp checks the batch accessors against the reference
// server's bytes: stamping the producer's batch with partition 2, offset
// 100 and the server timestamp yields the stored record byte for byte, and
// slicing offset 101 yields the reference's sliced record.
func TestGoldenBatchStamp(t *testing.T) {
	sent, stored, sliced := loadBatchVectors(t)
	if reason := invalidBatch(sent); reason != "" {
		t.Fatalf("producer batch: %s", reason)
	}
	if reason := invalidBatch(stored); reason != "" {
		t.Fatalf("stored record: %s", reason)
	}
	stamped := append([]byte(nil), sent...)
	stampBatch(stamped, 2, 100, batchBaseTimestamp(stored))
	if !bytes.Equal(stamped, stored) {
		t.Fatalf("stamped record differs from the reference:\n got %x\nwant %x", stamped[:64], stored[:64])
	}
	out, taken, _ := appendSlice(make([]byte, 0, len(stored)), stored, 101, 1)
	if taken != 1 || !bytes.Equal(out, sliced) {
		t.Fatalf("sliced record (%d messages) differs:\n got %x\nwant %x", taken, out, sliced)
	}
	if invalidLayout(stored) != "" {
		t.Fatal("stored record fails the layout check")
	}
}

// TestBatchRejects flips one byte in each field class and expects the
// full check to name it.
func TestBatchRejects(t *testing.T) {
	_, stored, _ := loadBatchVectors(t)
	cases := []struct {
		name     string
		position int
		want     string
	}{
		{"reserved header", 100, "wire: batch: batch reserved byte not zero at offset 100 (InvalidReservedField)"},
		{"base offset", batchBaseOffsetAt, "wire: batch: batch checksum mismatch at offset 40 (InvalidBatchChecksum)"},
		{"payload byte", batchHeaderBytes + frameHeaderBytes, "wire: batch: message checksum mismatch at offset 256 (InvalidMessageChecksum)"},
		{"frame reserved", batchHeaderBytes + 40, "wire: batch: message reserved bytes not zero at offset 296 (InvalidReservedField)"},
		{"batch length", batchLengthAt, "batch_length does not match the record"},
		{"offset delta", batchHeaderBytes + frameOffsetDeltaAt, "offset_delta is not the frame index"},
	}
	for _, c := range cases {
		damaged := append([]byte(nil), stored...)
		damaged[c.position] ^= 0x40
		if got := invalidBatch(damaged); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSegmentNames(t *testing.T) {
	if got := segmentStem(16000000); got != "00000000000016000000" {
		t.Fatalf("stem = %q", got)
	}
	offset, ok := parseSegmentName("00000000000016000000.log", logSuffix)
	if !ok || offset != 16000000 {
		t.Fatalf("parse = %d, %v", offset, ok)
	}
	for _, bad := range []string{"16000000.log", "00000000000016000000.index", "0000000000001600000x.log"} {
		if _, ok := parseSegmentName(bad, logSuffix); ok {
			t.Fatalf("%q parsed as a log name", bad)
		}
	}
}
