package engine

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/zeebo/xxh3"
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
	batchReservedAt        = 52

	frameChecksumAt          = 0
	frameOffsetDeltaAt       = 24
	frameUserHeadersLengthAt = 32
	framePayloadLengthAt     = 36
	frameReservedAt          = 40
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

func batchChecksum(record []byte) uint64 {
	return binary.LittleEndian.Uint64(record[batchChecksumAt:])
}

// batchOffsetLast is the offset of the record's last message: stored
// records always number their frames 0..count-1.
func batchOffsetLast(record []byte) uint64 {
	return batchBaseOffset(record) + uint64(batchMessageCount(record)) - 1
}

// stampBatch writes the server fields into a stored record and recomputes
// its checksum; frames are never touched.
func stampBatch(hasher *xxh3.Hasher, record []byte, partitionID uint32, offset, timestamp uint64) {
	binary.LittleEndian.PutUint64(record[batchPartitionIDAt:], uint64(partitionID))
	binary.LittleEndian.PutUint64(record[batchBaseOffsetAt:], offset)
	binary.LittleEndian.PutUint64(record[batchBaseTimestampAt:], timestamp)
	binary.LittleEndian.PutUint64(record[batchChecksumAt:], computeBatchChecksum(hasher, record))
}

// computeBatchChecksum is XXH3-64 over the 44-byte header prefix followed by
// each frame's stored checksum (PROTOCOL.md §8.4). record must tile.
func computeBatchChecksum(hasher *xxh3.Hasher, record []byte) uint64 {
	hasher.Reset()
	// The covered prefix skips the checksum field itself: bytes 0..40, then
	// message_count at 48..52. Hasher.Write never fails.
	_, _ = hasher.Write(record[:batchChecksumAt])
	_, _ = hasher.Write(record[batchMessageCountAt : batchMessageCountAt+4])
	for position := batchHeaderBytes; position < len(record); {
		_, _ = hasher.Write(record[position+frameChecksumAt : position+frameChecksumAt+8])
		position += frameLength(record[position:])
	}
	return hasher.Sum64()
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

// FormatError says why a batch record is invalid and where.
type FormatError struct {
	Position int64 // byte position of the record in its file, or -1
	Reason   string
}

func (e *FormatError) Error() string {
	return "engine: invalid batch at position " + strconv.FormatInt(e.Position, 10) + ": " + e.Reason
}

// invalidBatch checks a record end to end: layout, counts, reserved bytes,
// every frame checksum and the batch checksum. It returns "" when valid.
func invalidBatch(hasher *xxh3.Hasher, record []byte) string {
	if len(record) < batchHeaderBytes {
		return "shorter than the batch header"
	}
	if batchLength(record) != uint64(len(record)) {
		return "batch_length does not match the record"
	}
	for _, value := range record[batchReservedAt:batchHeaderBytes] {
		if value != 0 {
			return "reserved header bytes are not zero"
		}
	}
	count := batchMessageCount(record)
	if count == 0 || count > batchMessagesMax {
		return "message_count out of range"
	}
	if reason := invalidFrames(record, count); reason != "" {
		return reason
	}
	if computeBatchChecksum(hasher, record) != batchChecksum(record) {
		return "batch checksum mismatch"
	}
	return ""
}

func invalidFrames(record []byte, count uint32) string {
	position := batchHeaderBytes
	for index := uint32(0); index < count; index++ {
		if len(record)-position < frameHeaderBytes {
			return "frame header overruns the record"
		}
		frame := record[position:]
		payload := binary.LittleEndian.Uint32(frame[framePayloadLengthAt:])
		headers := binary.LittleEndian.Uint32(frame[frameUserHeadersLengthAt:])
		if payload > payloadBytesMax || headers > userHeadersBytesMax {
			return "frame length over the limit"
		}
		length := frameLength(frame)
		if length > len(frame) {
			return "frame overruns the record"
		}
		if binary.LittleEndian.Uint64(frame[frameReservedAt:]) != 0 {
			return "reserved frame bytes are not zero"
		}
		if frameOffsetDelta(frame) != index {
			return "offset_delta is not the frame index"
		}
		if xxh3.Hash(frame[8:length]) != binary.LittleEndian.Uint64(frame[frameChecksumAt:]) {
			return "frame checksum mismatch"
		}
		position += length
	}
	if position != len(record) {
		return "frames do not tile the record"
	}
	return ""
}

// appendSlice appends to out the part of record holding offsets
// [offsetFirst, offsetFirst+countMax), as a sliced record when it is not
// the whole batch (PROTOCOL.md §8.5). It returns out and the messages
// appended; it appends nothing when out lacks capacity.
func appendSlice(hasher *xxh3.Hasher, out, record []byte, offsetFirst uint64, countMax uint32) ([]byte, uint32) {
	base := batchBaseOffset(record)
	count := batchMessageCount(record)
	skip := uint32(0)
	if offsetFirst > base {
		skip = uint32(offsetFirst - base)
	}
	if skip >= count || countMax == 0 {
		return out, 0
	}
	take := min(count-skip, countMax)
	if skip == 0 && take == count {
		if cap(out)-len(out) < len(record) {
			return out, 0
		}
		return append(out, record...), take
	}
	first, last := frameSpan(record, skip, take)
	length := batchHeaderBytes + last - first
	if cap(out)-len(out) < length {
		return out, 0
	}
	start := len(out)
	out = append(out, record[:batchHeaderBytes]...)
	out = append(out, record[first:last]...)
	sliced := out[start:]
	binary.LittleEndian.PutUint64(sliced[batchLengthAt:], uint64(length))
	binary.LittleEndian.PutUint32(sliced[batchMessageCountAt:], take)
	binary.LittleEndian.PutUint64(sliced[batchChecksumAt:], computeBatchChecksum(hasher, sliced))
	return out, take
}

// frameSpan returns the byte range of frames [skip, skip+take) in record.
func frameSpan(record []byte, skip, take uint32) (first, last int) {
	position := batchHeaderBytes
	for index := uint32(0); index < skip+take; index++ {
		if index == skip {
			first = position
		}
		position += frameLength(record[position:])
	}
	return first, position
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
