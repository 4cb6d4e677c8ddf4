package wire

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/zeebo/xxh3"
)

// Differential tests of the incremental validator: against a plain
// reimplementation of the whole-record check (the rules of §8.2-§8.4
// written out once more, one pass, one hash call), random and corrupted
// records fed in random cuts must get the same verdict, the same first
// fault (status, offset, reason) and, when valid, the same checksum.

// referenceCheck is the whole-record check written out plainly.
func referenceCheck(batch []byte, admission bool) error {
	var header BatchHeader
	if _, err := header.Decode(batch); err != nil {
		return err
	}
	if header.BatchLength != uint64(len(batch)) {
		return &BatchError{Code: StatusInvalidMessagesSize, Offset: batchOffsetLength, What: "batch length differs from the record"}
	}
	if header.MessageCount == 0 {
		return &BatchError{Code: StatusInvalidMessagesCount, Offset: batchOffsetMessageCount, What: "batch without messages"}
	}
	sums := append([]byte(nil), batch[:batchOffsetChecksum]...)
	sums = append(sums, batch[batchOffsetMessageCount:batchOffsetMessageCount+4]...)
	count, deltaNext := uint32(0), uint64(0)
	for position := BatchHeaderBytes; position < len(batch); count++ {
		if len(batch)-position < MessageHeaderBytes {
			return &BatchError{Code: StatusInvalidMessagesSize, Offset: position, What: "truncated message header"}
		}
		frame := batch[position:]
		if binary.LittleEndian.Uint64(frame[messageOffsetReserved:]) != 0 {
			return &BatchError{Code: StatusInvalidReservedField, Offset: position + messageOffsetReserved,
				What: "message reserved bytes not zero"}
		}
		payload := binary.LittleEndian.Uint32(frame[messageOffsetPayloadLength:])
		headers := binary.LittleEndian.Uint32(frame[messageOffsetUserHeadersLength:])
		if payload > PayloadBytesMax {
			return &BatchError{Code: StatusTooBigMessagePayload, Offset: position + messageOffsetPayloadLength,
				What: "payload above 64000000 bytes"}
		}
		if headers > UserHeadersBytesMax {
			return &BatchError{Code: StatusTooBigUserHeaders, Offset: position + messageOffsetUserHeadersLength,
				What: "user headers above 100000 bytes"}
		}
		size := MessageHeaderBytes + int(payload) + int(headers)
		if size > len(frame) {
			return &BatchError{Code: StatusInvalidMessagesSize, Offset: position, What: "message overruns the batch"}
		}
		if xxh3.Hash(frame[8:size]) != binary.LittleEndian.Uint64(frame) {
			return &BatchError{Code: StatusInvalidMessageChecksum, Offset: position, What: "message checksum mismatch"}
		}
		delta := binary.LittleEndian.Uint32(frame[messageOffsetOffsetDelta:])
		if uint64(delta) < deltaNext || admission && delta != count {
			return &BatchError{Code: StatusInvalidMessagesCount, Offset: position + messageOffsetOffsetDelta,
				What: "offset delta out of sequence"}
		}
		deltaNext = uint64(delta) + 1
		sums = append(sums, frame[:8]...)
		position += size
	}
	if count != header.MessageCount {
		return &BatchError{Code: StatusInvalidMessagesCount, Offset: batchOffsetMessageCount,
			What: "message count differs from the frames"}
	}
	if xxh3.Hash(sums) != header.BatchChecksum {
		return &BatchError{Code: StatusInvalidBatchChecksum, Offset: batchOffsetChecksum, What: "batch checksum mismatch"}
	}
	return nil
}

// referenceChecksum is the batch checksum over header's fields (its
// checksum field excluded) and every frame's checksum, in one hash call.
func referenceChecksum(header, batch []byte) uint64 {
	sums := append([]byte(nil), header[:batchOffsetChecksum]...)
	sums = append(sums, header[batchOffsetMessageCount:batchOffsetMessageCount+4]...)
	for position := BatchHeaderBytes; position < len(batch); {
		frame := batch[position:]
		sums = append(sums, frame[:8]...)
		position += MessageHeaderBytes + int(binary.LittleEndian.Uint32(frame[messageOffsetPayloadLength:])) +
			int(binary.LittleEndian.Uint32(frame[messageOffsetUserHeadersLength:]))
	}
	return xxh3.Hash(sums)
}

// sameError reports whether two verdicts are the same fault.
func sameError(a, b error) bool {
	var batchA, batchB *BatchError
	if errors.As(a, &batchA) && errors.As(b, &batchB) {
		return *batchA == *batchB
	}
	return a == nil && b == nil || a != nil && b != nil && a.Error() == b.Error()
}

// mutate damages batch in one of the ways a client or a network can.
func mutate(random *rand.Rand, batch []byte) []byte {
	frames := []int{}
	for position := BatchHeaderBytes; position+MessageHeaderBytes <= len(batch); {
		frames = append(frames, position)
		size := readMessageHeader(batch[position:]).FrameBytes()
		if size <= 0 {
			break
		}
		position += size
	}
	if len(frames) == 0 || len(batch) <= BatchHeaderBytes {
		batch[random.IntN(len(batch))] ^= 0x10
		return batch
	}
	frame := frames[random.IntN(len(frames))]
	switch random.IntN(10) {
	case 0:
		batch[random.IntN(len(batch))] ^= byte(1 + random.IntN(255))
	case 1:
		binary.LittleEndian.PutUint32(batch[frame+messageOffsetPayloadLength:], random.Uint32()%uint32(len(batch)))
	case 2:
		binary.LittleEndian.PutUint32(batch[frame+messageOffsetUserHeadersLength:], random.Uint32()%200_000)
	case 3:
		batch[frame+messageOffsetReserved+random.IntN(8)] = 1
	case 4:
		binary.LittleEndian.PutUint32(batch[frame+messageOffsetOffsetDelta:], uint32(random.IntN(4)))
	case 5: // cut inside a frame, the length field following
		batch = batch[:BatchHeaderBytes+random.IntN(len(batch)-BatchHeaderBytes)]
		binary.LittleEndian.PutUint64(batch[batchOffsetLength:], uint64(len(batch)))
	case 6:
		binary.LittleEndian.PutUint32(batch[batchOffsetMessageCount:], uint32(random.IntN(len(frames)+2)))
	case 7:
		batch[batchOffsetReserved+random.IntN(BatchHeaderBytes-batchOffsetReserved)] = 1
	case 8:
		binary.LittleEndian.PutUint32(batch[frame+messageOffsetPayloadLength:], PayloadBytesMax+1)
	case 9:
		binary.LittleEndian.PutUint64(batch[batchOffsetLength:], uint64(len(batch)+random.IntN(3)-1))
	}
	return batch
}

// splitValidate runs the incremental validator over batch arriving in
// random cuts, starting from its header only as a store does, with a
// stamped hasher alongside; it returns the verdict and the stamped sum.
func splitValidate(random *rand.Rand, batch, stampedHeader []byte, admission bool) (uint64, error) {
	var validator BatchValidator
	var stamped BatchHasher
	stamped.Start(stampedHeader)
	if err := validator.Start(batch[:BatchHeaderBytes], len(batch), admission, &stamped); err != nil {
		return 0, err
	}
	step := 1 + random.IntN(4096)
	for arrived := BatchHeaderBytes; ; {
		if err := validator.Advance(batch[:arrived]); err != nil {
			return 0, err
		}
		if arrived == len(batch) {
			break
		}
		arrived = min(len(batch), arrived+1+random.IntN(step))
	}
	if _, err := validator.Finish(); err != nil {
		return 0, err
	}
	return stamped.Sum64(), nil
}

// diffOne compares the validators on batch; it fails t on a difference.
func diffOne(t *testing.T, random *rand.Rand, batch []byte) {
	t.Helper()
	if len(batch) < BatchHeaderBytes {
		return // never streamed: a store needs the header to start
	}
	admission := random.IntN(4) != 0
	want := referenceCheck(batch, admission)
	whole := error(nil)
	if admission {
		_, whole = ValidateBatch(batch)
	} else {
		_, whole = VerifyRecord(batch)
	}
	header := append([]byte(nil), batch[:BatchHeaderBytes]...)
	binary.LittleEndian.PutUint64(header[batchOffsetBaseOffset:], random.Uint64())
	binary.LittleEndian.PutUint64(header[batchOffsetBaseTimestamp:], random.Uint64())
	sum, pieces := splitValidate(random, batch, header, admission)
	if !sameError(want, whole) || !sameError(want, pieces) {
		t.Fatalf("admission %v: reference %v, whole %v, in pieces %v", admission, want, whole, pieces)
	}
	if want != nil {
		return
	}
	if got := BatchChecksum(batch); got != referenceChecksum(batch, batch) {
		t.Fatalf("BatchChecksum %x, reference %x", got, referenceChecksum(batch, batch))
	}
	if sum != referenceChecksum(header, batch) {
		t.Fatalf("stamped checksum %x, reference %x", sum, referenceChecksum(header, batch))
	}
}

// diffBatch builds a batch of count messages, some with empty payloads
// and user headers.
func diffBatch(random *rand.Rand, count int) []byte {
	messages := make([]OutgoingMessage, count)
	for index := range messages {
		payload := make([]byte, random.IntN(3)*random.IntN(700))
		for at := range payload {
			payload[at] = byte(random.Uint32())
		}
		messages[index] = OutgoingMessage{ID: Uint128{Lo: random.Uint64()}, OriginTimestamp: 5, Payload: payload}
		if random.IntN(4) == 0 {
			messages[index].UserHeaders = payload[:len(payload)/2]
		}
	}
	batch := make([]byte, BatchBytes(messages))
	EncodeBatch(batch, messages)
	return batch
}

// TestBatchValidatorDifferential: 3000 seeded records, two thirds of
// them damaged, each fed in random cuts (from one byte up, so frame
// headers and the batch header's fields split everywhere).
func TestBatchValidatorDifferential(t *testing.T) {
	random := rand.New(rand.NewPCG(41, 42))
	for round := range 3000 {
		batch := diffBatch(random, 1+random.IntN(30))
		for damage := round % 3; damage > 0; damage-- {
			batch = mutate(random, batch)
		}
		diffOne(t, random, batch)
	}
}

// FuzzBatchValidator: arbitrary bytes after a valid header's length
// field fixed up, fed in cuts the fuzzer picks.
func FuzzBatchValidator(f *testing.F) {
	random := rand.New(rand.NewPCG(1, 2))
	for range 8 {
		f.Add(diffBatch(random, 1+random.IntN(5)), random.Uint64())
	}
	f.Fuzz(func(t *testing.T, batch []byte, seed uint64) {
		if len(batch) >= BatchHeaderBytes && seed%2 == 0 {
			binary.LittleEndian.PutUint64(batch[batchOffsetLength:], uint64(len(batch)))
		}
		diffOne(t, rand.New(rand.NewPCG(seed, 3)), batch)
	})
}
