package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// requestOutcome is everything observable about decoding one request.
type requestOutcome struct {
	frameErr error
	size     int
	header   RequestHeader
	body     Decoder
	bodyErr  error
}

func (o *requestOutcome) String() string {
	return fmt.Sprintf("%v|%d|%+v|%#v|%v", o.frameErr, o.size, o.header, o.body, o.bodyErr)
}

// same compares by value: decoded views of different buffers are equal
// when their bytes are.
func (o *requestOutcome) same(other *requestOutcome) bool {
	return fmt.Sprint(o.frameErr) == fmt.Sprint(other.frameErr) && o.size == other.size &&
		o.header == other.header && reflect.DeepEqual(o.body, other.body) &&
		fmt.Sprint(o.bodyErr) == fmt.Sprint(other.bodyErr)
}

func decodeRequestOutcome(src []byte) requestOutcome {
	request, size, err := DecodeRequest(src)
	if err != nil {
		return requestOutcome{frameErr: err}
	}
	outcome := requestOutcome{size: size, header: request.Header}
	body, ok := NewRequestBody(request.Header.CommandCode())
	if !ok {
		raw := Raw(request.Body)
		outcome.body = &raw
		return outcome
	}
	outcome.body = body
	outcome.bodyErr = DecodeAll(body, request.Body)
	return outcome
}

// goldenRequestFrames returns every golden request frame: the seeds of the
// fuzzer and of the exhaustive split test.
func goldenRequestFrames(t testing.TB) [][]byte {
	var vectors []requestVector
	loadJSON(t, "requests.json", &vectors)
	var batch batchVectors
	loadJSON(t, "messages_batch.json", &batch)
	frames := [][]byte{unhex(t, batch.Send.Frame), unhex(t, batch.Poll.RequestFrame)}
	for _, vector := range vectors {
		frames = append(frames, unhex(t, vector.Frame))
	}
	return frames
}

// FuzzDecodeRequest: any input either fails to decode or decodes to a value
// that re-encodes to the same bytes; decoding never looks past the declared
// size; feeding the bytes to an Assembler split anywhere yields the same
// frame and the same outcome; an accepted batch survives validation,
// stamping and slicing.
func FuzzDecodeRequest(f *testing.F) {
	for _, frame := range goldenRequestFrames(f) {
		f.Add(frame)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		whole := decodeRequestOutcome(data)
		if whole.frameErr != nil {
			checkRejectedStream(t, data, whole.frameErr)
			return
		}
		exact := bytes.Clone(data[:whole.size])
		alone := decodeRequestOutcome(exact)
		if !alone.same(&whole) {
			t.Fatalf("decode depends on bytes past the frame:\n%s\n%s", alone.String(), whole.String())
		}
		if whole.bodyErr == nil {
			encoded := make([]byte, RequestBytes(whole.body))
			EncodeRequest(encoded, whole.header, whole.body)
			if !bytes.Equal(encoded, exact) {
				t.Fatalf("re-encoded\n%x\nwant\n%x", encoded, exact)
			}
			if send, ok := whole.body.(*SendMessages); ok {
				checkAcceptedBatch(t, send.Batch)
			}
		}
		for _, split := range splitPoints(len(exact)) {
			checkSplit(t, exact, split, &whole)
		}
	})
}

func checkRejectedStream(t *testing.T, data []byte, err error) {
	var decodeErr *DecodeError
	if !errors.As(err, &decodeErr) {
		t.Fatalf("frame error of type %T", err)
	}
	var assembler Assembler
	taken, writeErr := assembler.Write(data)
	frame, ok := assembler.Frame()
	switch {
	case decodeErr.Truncated() && decodeErr.Offset == 0 && writeErr == nil && ok:
		t.Fatalf("assembler produced a frame from %d header bytes", len(data))
	case ok:
		if _, _, err := DecodeRequest(frame); err == nil {
			t.Fatalf("assembler frame decodes though the stream did not")
		}
	case writeErr == nil && taken != len(data):
		t.Fatalf("assembler took %d of %d bytes without a frame", taken, len(data))
	}
}

func checkSplit(t *testing.T, exact []byte, split int, whole *requestOutcome) {
	var assembler Assembler
	first, err := assembler.Write(exact[:split])
	if err != nil || first != split {
		t.Fatalf("split %d: first write took %d: %v", split, first, err)
	}
	if _, ok := assembler.Frame(); ok && split < len(exact) {
		t.Fatalf("split %d: frame complete early", split)
	}
	second, err := assembler.Write(append(bytes.Clone(exact[split:]), exact...))
	if err != nil || first+second != len(exact) {
		t.Fatalf("split %d: took %d+%d of %d: %v", split, first, second, len(exact), err)
	}
	frame, ok := assembler.Frame()
	if !ok || !bytes.Equal(frame, exact) {
		t.Fatalf("split %d: frame %x", split, frame)
	}
	if outcome := decodeRequestOutcome(frame); !outcome.same(whole) {
		t.Fatalf("split %d decodes differently:\n%s\n%s", split, outcome.String(), whole.String())
	}
	assembler.Reset()
	if _, err := assembler.Write(exact); err != nil {
		t.Fatalf("second frame: %v", err)
	}
	if frame, ok := assembler.Frame(); !ok || !bytes.Equal(frame, exact) {
		t.Fatal("assembler lost the second frame")
	}
}

func splitPoints(size int) []int {
	points := []int{0, 1, HeaderBytes - 1, HeaderBytes, HeaderBytes + 1, size / 2, size - 1, size}
	kept := points[:0]
	for _, point := range points {
		if point >= 0 && point <= size {
			kept = append(kept, point)
		}
	}
	return kept
}

// checkAcceptedBatch runs the server path on a batch whose envelope
// decoded: validation, and for a valid batch stamping, iteration and
// slicing, each of which must keep the record verifiable.
func checkAcceptedBatch(t *testing.T, batch []byte) {
	header, err := ValidateBatch(batch)
	if err != nil {
		if StatusOf(err) == StatusOK || StatusOf(err) == StatusError {
			t.Fatalf("batch error without a protocol status: %v", err)
		}
		return
	}
	stored := bytes.Clone(batch)
	StampBatch(stored, 7, 1000, 42)
	if _, err := VerifyRecord(stored); err != nil {
		t.Fatalf("stamped batch does not verify: %v", err)
	}
	count := uint32(0)
	iterator := Messages(stored)
	for message, ok := iterator.Next(); ok; message, ok = iterator.Next() {
		if message.Offset != 1000+uint64(count) || message.PartitionID != 7 {
			t.Fatalf("message %d at offset %d", count, message.Offset)
		}
		count++
	}
	if count != header.MessageCount {
		t.Fatalf("iterated %d of %d messages", count, header.MessageCount)
	}
	middle := 1000 + uint64(count/2)
	slice, ok := SliceBatch(stored, middle, 2)
	if !ok {
		t.Fatal("slice of a non-empty batch is empty")
	}
	record := append(slice.Header[:], slice.Frames...)
	if _, err := VerifyRecord(record); err != nil {
		t.Fatalf("sliced record does not verify: %v", err)
	}
	if binary.LittleEndian.Uint64(record[batchOffsetBaseOffset:]) != 1000 || slice.OffsetFirst != middle {
		t.Fatalf("slice lost its base offset: %+v", slice)
	}
}

// TestGoldenFramesSplitAnywhere feeds every golden request frame to an
// Assembler split at every byte position.
func TestGoldenFramesSplitAnywhere(t *testing.T) {
	for _, frame := range goldenRequestFrames(t) {
		whole := decodeRequestOutcome(frame)
		if whole.frameErr != nil || whole.bodyErr != nil {
			t.Fatalf("golden frame rejected: %s", whole.String())
		}
		for split := 0; split <= len(frame); split++ {
			checkSplit(t, frame, split, &whole)
		}
	}
}
