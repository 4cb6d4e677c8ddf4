package wire

import (
	"encoding/binary"

	"github.com/whippetio/whippet/internal/invariant"
)

// Field offsets of the batch header (§8.2) and the message frame (§8.3).
const (
	batchOffsetPartitionID     = 0
	batchOffsetBaseOffset      = 8
	batchOffsetBaseTimestamp   = 16
	batchOffsetOriginTimestamp = 24
	batchOffsetLength          = 32
	batchOffsetChecksum        = 40
	batchOffsetMessageCount    = 48
	batchOffsetReserved        = 52

	messageOffsetChecksum          = 0
	messageOffsetID                = 8
	messageOffsetOffsetDelta       = 24
	messageOffsetTimestampDelta    = 28
	messageOffsetUserHeadersLength = 32
	messageOffsetPayloadLength     = 36
	messageOffsetReserved          = 40

	// batchChecksumPrefixBytes is the header prefix the batch checksum
	// covers before the frame checksums (§8.4).
	batchChecksumPrefixBytes = 44
)

// BatchHeader is the 256-byte header of a batch record (§8.2).
type BatchHeader struct {
	PartitionID     uint64
	BaseOffset      uint64
	BaseTimestamp   uint64
	OriginTimestamp uint64
	BatchLength     uint64
	BatchChecksum   uint64
	MessageCount    uint32
}

// Decode reads a batch header; a non-zero reserved byte is refused.
func (h *BatchHeader) Decode(src []byte) (int, error) {
	if len(src) < BatchHeaderBytes {
		return 0, &DecodeError{Need: BatchHeaderBytes, Have: len(src), What: "batch header"}
	}
	if offset := firstNonZero(src, batchOffsetReserved, BatchHeaderBytes); offset >= 0 {
		return 0, &BatchError{Code: StatusInvalidReservedField, Offset: offset, What: "batch reserved byte not zero"}
	}
	*h = readBatchHeader(src)
	return BatchHeaderBytes, nil
}

// Encode writes the header into dst[:BatchHeaderBytes].
func (h *BatchHeader) Encode(dst []byte) int {
	invariant.Assert(len(dst) >= BatchHeaderBytes, "wire: batch header buffer shorter than 256")
	clear(dst[:BatchHeaderBytes])
	binary.LittleEndian.PutUint64(dst[batchOffsetPartitionID:], h.PartitionID)
	binary.LittleEndian.PutUint64(dst[batchOffsetBaseOffset:], h.BaseOffset)
	binary.LittleEndian.PutUint64(dst[batchOffsetBaseTimestamp:], h.BaseTimestamp)
	binary.LittleEndian.PutUint64(dst[batchOffsetOriginTimestamp:], h.OriginTimestamp)
	binary.LittleEndian.PutUint64(dst[batchOffsetLength:], h.BatchLength)
	binary.LittleEndian.PutUint64(dst[batchOffsetChecksum:], h.BatchChecksum)
	binary.LittleEndian.PutUint32(dst[batchOffsetMessageCount:], h.MessageCount)
	return BatchHeaderBytes
}

// EncodedSize returns BatchHeaderBytes.
func (h *BatchHeader) EncodedSize() int { return BatchHeaderBytes }

func readBatchHeader(src []byte) BatchHeader {
	return BatchHeader{
		PartitionID:     binary.LittleEndian.Uint64(src[batchOffsetPartitionID:]),
		BaseOffset:      binary.LittleEndian.Uint64(src[batchOffsetBaseOffset:]),
		BaseTimestamp:   binary.LittleEndian.Uint64(src[batchOffsetBaseTimestamp:]),
		OriginTimestamp: binary.LittleEndian.Uint64(src[batchOffsetOriginTimestamp:]),
		BatchLength:     binary.LittleEndian.Uint64(src[batchOffsetLength:]),
		BatchChecksum:   binary.LittleEndian.Uint64(src[batchOffsetChecksum:]),
		MessageCount:    binary.LittleEndian.Uint32(src[batchOffsetMessageCount:]),
	}
}

// MessageHeader is the 48-byte header of a message frame (§8.3).
type MessageHeader struct {
	Checksum          uint64
	ID                Uint128
	OffsetDelta       uint32
	TimestampDelta    uint32
	UserHeadersLength uint32
	PayloadLength     uint32
}

// FrameBytes returns the whole frame's length.
func (h MessageHeader) FrameBytes() int {
	return MessageHeaderBytes + int(h.PayloadLength) + int(h.UserHeadersLength)
}

func readMessageHeader(src []byte) MessageHeader {
	return MessageHeader{
		Checksum:          binary.LittleEndian.Uint64(src[messageOffsetChecksum:]),
		ID:                readUint128(src[messageOffsetID:]),
		OffsetDelta:       binary.LittleEndian.Uint32(src[messageOffsetOffsetDelta:]),
		TimestampDelta:    binary.LittleEndian.Uint32(src[messageOffsetTimestampDelta:]),
		UserHeadersLength: binary.LittleEndian.Uint32(src[messageOffsetUserHeadersLength:]),
		PayloadLength:     binary.LittleEndian.Uint32(src[messageOffsetPayloadLength:]),
	}
}

// Message is one message frame of a batch: its header and views of its
// payload and user headers inside the batch bytes.
type Message struct {
	Header      MessageHeader
	Payload     []byte
	UserHeaders []byte
}

// ValidateBatch checks a batch record the way a server admits it (§8.4):
// the header, exact tiling of the frames, the counts, the reserved bytes,
// offset deltas 0, 1, 2 …, every frame checksum and the batch checksum.
// It reads batch only and returns its header; errors are *BatchError or
// *DecodeError and carry the status to answer with.
func ValidateBatch(batch []byte) (BatchHeader, error) {
	return checkRecord(batch, true)
}

// VerifyRecord checks a stored or sliced record (§8.5): the same checks as
// ValidateBatch, except that offset deltas need only increase, because a
// sliced record keeps the deltas of the frames it serves.
func VerifyRecord(record []byte) (BatchHeader, error) {
	return checkRecord(record, false)
}

func checkRecord(batch []byte, admission bool) (BatchHeader, error) {
	var validator BatchValidator
	if err := validator.Start(batch, len(batch), admission, nil); err != nil {
		return BatchHeader{}, err
	}
	if err := validator.Advance(batch); err != nil {
		return BatchHeader{}, err
	}
	return validator.Finish()
}

// BatchChecksum computes the batch checksum of a record whose frames are
// already known to tile it (§8.4): XXH3-64 over the 44-byte header prefix
// followed by every frame's checksum field.
func BatchChecksum(batch []byte) uint64 {
	invariant.Assert(len(batch) >= BatchHeaderBytes, "wire: batch shorter than its header")
	return framesChecksum(batch[:BatchHeaderBytes], batch[BatchHeaderBytes:])
}

// framesChecksum is the batch checksum of header (a batch header) followed
// by frames, frames that tile it.
func framesChecksum(header, frames []byte) uint64 {
	var hasher BatchHasher
	hasher.Start(header)
	for position := 0; position < len(frames); {
		hasher.Add(frames[position:])
		position += readMessageHeader(frames[position:]).FrameBytes()
		invariant.Assert(position <= len(frames), "wire: checksumming a batch whose frames overrun it")
	}
	return hasher.Sum64()
}

// StampBatch writes the server-assigned fields into a validated batch in
// place and recomputes its checksum (§8.2, §8.4). Frames are untouched, so
// their checksums stay valid.
func StampBatch(batch []byte, partitionID, baseOffset, baseTimestamp uint64) {
	invariant.Assert(len(batch) >= BatchHeaderBytes, "wire: stamping a batch shorter than its header")
	invariant.Assert(binary.LittleEndian.Uint64(batch[batchOffsetLength:]) == uint64(len(batch)),
		"wire: stamping a batch whose length field differs")
	binary.LittleEndian.PutUint64(batch[batchOffsetPartitionID:], partitionID)
	binary.LittleEndian.PutUint64(batch[batchOffsetBaseOffset:], baseOffset)
	binary.LittleEndian.PutUint64(batch[batchOffsetBaseTimestamp:], baseTimestamp)
	binary.LittleEndian.PutUint64(batch[batchOffsetChecksum:], BatchChecksum(batch))
	if invariant.Enabled {
		_, err := VerifyRecord(batch)
		invariant.Assert(err == nil, "wire: a stamped batch does not verify")
	}
}

// Messages returns an iterator over the frames of one batch record. The
// batch must be validated (or come from a decoded poll reply).
func Messages(batch []byte) MessageIterator {
	return MessageIterator{records: batch}
}

// MessageIterator walks the frames of back-to-back batch records without
// allocating. Slices it returns are views into the records.
type MessageIterator struct {
	records   []byte
	position  int
	recordEnd int
	header    BatchHeader
}

// PolledMessage is one message as a consumer sees it (§8.5): its absolute
// offset, the append time of its batch and its own origin time.
type PolledMessage struct {
	Offset          uint64
	Timestamp       uint64
	OriginTimestamp uint64
	PartitionID     uint64
	Message
}

// Next returns the next message, or false at the end.
func (it *MessageIterator) Next() (PolledMessage, bool) {
	for it.position == it.recordEnd {
		if it.position >= len(it.records) {
			return PolledMessage{}, false
		}
		it.header = readBatchHeader(it.records[it.position:])
		it.recordEnd = it.position + int(it.header.BatchLength)
		it.position += BatchHeaderBytes
	}
	frame := it.records[it.position:it.recordEnd]
	header := readMessageHeader(frame)
	payloadEnd := MessageHeaderBytes + int(header.PayloadLength)
	frameEnd := payloadEnd + int(header.UserHeadersLength)
	it.position += frameEnd
	return PolledMessage{
		Offset:          it.header.BaseOffset + uint64(header.OffsetDelta),
		Timestamp:       it.header.BaseTimestamp,
		OriginTimestamp: it.header.OriginTimestamp + uint64(header.TimestampDelta),
		PartitionID:     it.header.PartitionID,
		Message: Message{
			Header:      header,
			Payload:     frame[MessageHeaderBytes:payloadEnd:payloadEnd],
			UserHeaders: frame[payloadEnd:frameEnd:frameEnd],
		},
	}, true
}
