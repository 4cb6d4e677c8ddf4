package engine

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/whippetio/whippet/wire"
)

// Batch header field positions (PROTOCOL.md §8.2). These accessors are the
// engine's whole dependency on the batch layout.
const (
	batchPartitionIDAt     = 0
	batchBaseOffsetAt      = 8
	batchBaseTimestampAt   = 16
	batchOriginTimestampAt = 24
	batchLengthAt          = 32
	batchChecksumAt        = 40
	batchMessageCountAt    = 48

	frameChecksumAt          = 0
	frameOffsetDeltaAt       = 24
	frameUserHeadersLengthAt = 32
	framePayloadLengthAt     = 36
)

func batchBaseOffset(record []byte) uint64 {
	return binary.LittleEndian.Uint64(record[batchBaseOffsetAt:])
}

func batchBaseTimestamp(record []byte) uint64 {
	return binary.LittleEndian.Uint64(record[batchBaseTimestampAt:])
}

func batchLength(record []byte) uint64 {
	return binary.LittleEndian.Uint64(record[batchLengthAt:])
}

func batchMessageCount(record []byte) uint32 {
	return binary.LittleEndian.Uint32(record[batchMessageCountAt:])
}

// batchOffsetLast is the offset of the record's last message: stored
// records always number their frames 0..count-1.
func batchOffsetLast(record []byte) uint64 {
	return batchBaseOffset(record) + uint64(batchMessageCount(record)) - 1
}

// stampBatch writes the server fields into a stored record and recomputes
// its checksum; frames are never touched.
func stampBatch(record []byte, partitionID uint32, offset, timestamp uint64) {
	wire.StampBatch(record, uint64(partitionID), offset, timestamp)
}

func frameLength(frame []byte) int {
	payload := binary.LittleEndian.Uint32(frame[framePayloadLengthAt:])
	headers := binary.LittleEndian.Uint32(frame[frameUserHeadersLengthAt:])
	return frameHeaderBytes + int(payload) + int(headers)
}

func frameOffsetDelta(frame []byte) uint32 {
	return binary.LittleEndian.Uint32(frame[frameOffsetDeltaAt:])
}

func frameID(frame []byte) (low, high uint64) {
	return binary.LittleEndian.Uint64(frame[8:]), binary.LittleEndian.Uint64(frame[16:])
}

// invalidBatch checks a stored record end to end: the layout the engine
// relies on (offset deltas 0..count-1, see invalidLayout), then wire's
// verification of reserved bytes, every frame checksum and the batch
// checksum. It returns "" when valid.
func invalidBatch(record []byte) string {
	if reason := invalidLayout(record); reason != "" {
		return reason
	}
	if _, err := wire.VerifyRecord(record); err != nil {
		return err.Error()
	}
	return ""
}

// appendSlice appends to out the part of record holding offsets
// [offsetFirst, offsetFirst+countMax) that fits in out's spare capacity,
// as a sliced record when it is not the whole batch (PROTOCOL.md §8.5 and
// §15 #4, wire.SliceBatchWithin). It returns out and the messages
// appended; it appends nothing when not even one frame fits, and then
// needBytes is the spare capacity the smallest such record takes.
func appendSlice(out, record []byte, offsetFirst uint64, countMax uint32) (_ []byte, taken uint32, needBytes int) {
	slice, ok := wire.SliceBatchWithin(record, offsetFirst, countMax, cap(out)-len(out))
	if !ok {
		return out, 0, 0
	}
	if cap(out)-len(out) < slice.Bytes() {
		return out, 0, slice.Bytes()
	}
	out = append(out, slice.Header[:]...)
	out = append(out, slice.Frames...)
	return out, slice.MessageCount, 0
}

// Index entries (.index, 24 bytes each, little-endian).
type indexEntry struct {
	offset    uint64 // absolute offset of the first batch of a write chunk
	timestamp uint64 // that batch's base_timestamp
	position  uint64 // that batch's byte position in the .log
}

func putIndexEntry(target []byte, entry indexEntry) {
	binary.LittleEndian.PutUint64(target[0:], entry.offset)
	binary.LittleEndian.PutUint64(target[8:], entry.timestamp)
	binary.LittleEndian.PutUint64(target[16:], entry.position)
}

func readIndexEntry(source []byte) indexEntry {
	return indexEntry{
		offset:    binary.LittleEndian.Uint64(source[0:]),
		timestamp: binary.LittleEndian.Uint64(source[8:]),
		position:  binary.LittleEndian.Uint64(source[16:]),
	}
}

// Segment file names: the 20-digit zero-padded start offset.
const (
	logSuffix   = ".log"
	indexSuffix = ".index"
	stemDigits  = 20
)

func segmentStem(offsetStart uint64) string {
	return fmt.Sprintf("%020d", offsetStart)
}

// parseSegmentName returns the start offset of a segment file name and
// whether the name is one.
func parseSegmentName(name, suffix string) (uint64, bool) {
	if len(name) != stemDigits+len(suffix) || name[stemDigits:] != suffix {
		return 0, false
	}
	offset, err := strconv.ParseUint(name[:stemDigits], 10, 64)
	return offset, err == nil
}

func alignDown(value int64) int64 { return value &^ (blockBytes - 1) }

func alignUp(value int64) int64 { return (value + blockBytes - 1) &^ (blockBytes - 1) }
