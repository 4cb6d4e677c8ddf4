package wire

import (
	"encoding/binary"

	"github.com/whippetio/whippet/internal/invariant"
)

// SendMessages is the SendMessages body (§8.1) as a server decodes it:
// Batch is a view of the batch record inside the request frame, never a
// copy. Decode checks the envelope (metadata length, counts, record
// length); ValidateBatch checks the frames and checksums.
type SendMessages struct {
	Stream        Identifier
	Topic         Identifier
	Partitioning  Partitioning
	MessagesCount uint32
	Batch         []byte
}

func (r *SendMessages) metadataBytes() int {
	return r.Stream.EncodedSize() + r.Topic.EncodedSize() + r.Partitioning.EncodedSize() + 4
}

// EncodedSize returns the body size.
func (r *SendMessages) EncodedSize() int { return 4 + r.metadataBytes() + len(r.Batch) }

// Encode writes the body, copying Batch verbatim.
func (r *SendMessages) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.sendMetadata(r.Stream, r.Topic, r.Partitioning, r.MessagesCount, r.metadataBytes())
	e.bytes(r.Batch)
	return e.done(size)
}

func (e *encoder) sendMetadata(stream, topic Identifier, partitioning Partitioning, count uint32, metadataBytes int) {
	e.u32(uint32(metadataBytes))
	e.identifier(stream)
	e.identifier(topic)
	e.partitioning(partitioning)
	e.u32(count)
}

// Decode reads the body without copying the batch and without allocating.
func (r *SendMessages) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.decodeEnvelope(&d, len(src))
	r.Batch = d.rest()
	return d.finish()
}

// DecodePrefix reads the envelope of a body of bodyBytes bytes from its
// first bytes, prefix, while the rest is still arriving: everything
// Decode checks before the batch, the batch header's length and count
// fields included. It returns the batch's position in the body and
// leaves Batch nil. An error (a malformed envelope, or a prefix too
// short to hold it and the batch header) means Decode of the whole body
// would fail or cannot be foreseen yet.
func (r *SendMessages) DecodePrefix(prefix []byte, bodyBytes int) (int, error) {
	invariant.Assert(len(prefix) <= bodyBytes, "wire: a body prefix is not longer than the body")
	d := decoder{src: prefix}
	batchStart := r.decodeEnvelope(&d, bodyBytes)
	r.Batch = nil
	if d.err != nil {
		return 0, d.err
	}
	return batchStart, nil
}

// decodeEnvelope reads the metadata and checks the batch header's length
// and count against a body of bodyBytes; it returns the batch's position.
func (r *SendMessages) decodeEnvelope(d *decoder, bodyBytes int) int {
	metadataBytes := d.u32("metadata length")
	start := d.pos
	r.Stream = d.identifier("stream id")
	r.Topic = d.identifier("topic id")
	r.Partitioning = d.partitioning()
	r.MessagesCount = d.u32("messages count")
	if d.err == nil && d.pos-start != int(metadataBytes) {
		d.failAt(0, "metadata length differs from the metadata")
	}
	if d.err == nil && r.MessagesCount == 0 {
		d.failAt(d.pos-4, "messages count zero")
	}
	batchStart := d.pos
	if d.err == nil && d.remaining() < BatchHeaderBytes {
		d.need(BatchHeaderBytes, "batch header")
	}
	if d.err != nil {
		return batchStart
	}
	header := d.src[batchStart:]
	if binary.LittleEndian.Uint64(header[batchOffsetLength:]) != uint64(bodyBytes-batchStart) {
		d.failAt(batchStart+batchOffsetLength, "batch length differs from the rest of the body")
	}
	if d.err == nil && binary.LittleEndian.Uint32(header[batchOffsetMessageCount:]) != r.MessagesCount {
		d.failAt(batchStart+batchOffsetMessageCount, "batch message count differs from the metadata")
	}
	return batchStart
}

// OutgoingMessages is the SendMessages body as a producer builds it: the
// batch record is encoded straight into the request buffer, so each
// payload is copied once. Its bytes decode as SendMessages.
type OutgoingMessages struct {
	Stream       Identifier
	Topic        Identifier
	Partitioning Partitioning
	Messages     []OutgoingMessage
}

func (r *OutgoingMessages) metadataBytes() int {
	return r.Stream.EncodedSize() + r.Topic.EncodedSize() + r.Partitioning.EncodedSize() + 4
}

// EncodedSize returns the body size.
func (r *OutgoingMessages) EncodedSize() int { return 4 + r.metadataBytes() + BatchBytes(r.Messages) }

// Encode writes the body; CheckOutgoing must accept the messages.
func (r *OutgoingMessages) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.sendMetadata(r.Stream, r.Topic, r.Partitioning, uint32(len(r.Messages)), r.metadataBytes())
	e.pos += EncodeBatch(e.dst[e.pos:], r.Messages)
	return e.done(size)
}

// SendConfirmation reports where a committed batch landed (§7.7).
type SendConfirmation struct {
	StreamID    uint32
	TopicID     uint32
	PartitionID uint32
	BaseOffset  uint64
}

// SendConfirmations is a SendMessages reply: [count u32] then entries.
type SendConfirmations []SendConfirmation

// EncodedSize returns the payload size.
func (c SendConfirmations) EncodedSize() int { return 4 + SendConfirmationBytes*len(c) }

// Encode writes the payload.
func (c SendConfirmations) Encode(dst []byte) int {
	size := c.EncodedSize()
	e := newEncoder(dst, size)
	e.u32(uint32(len(c)))
	for _, confirmation := range c {
		e.u32(confirmation.StreamID)
		e.u32(confirmation.TopicID)
		e.u32(confirmation.PartitionID)
		e.u64(confirmation.BaseOffset)
	}
	return e.done(size)
}

// Decode reads the payload, reusing the slice's capacity.
func (c *SendConfirmations) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	count := d.count32(SendConfirmationBytes, "send confirmations")
	*c = (*c)[:0]
	for i := 0; d.err == nil && i < count; i++ {
		*c = append(*c, SendConfirmation{
			StreamID:    d.u32("stream id"),
			TopicID:     d.u32("topic id"),
			PartitionID: d.u32("partition id"),
			BaseOffset:  d.u64("base offset"),
		})
	}
	return d.finish()
}

// PollMessages asks for up to Count messages (§6.7).
type PollMessages struct {
	Consumer   Consumer
	Stream     Identifier
	Topic      Identifier
	Partition  OptionalPartition
	Strategy   Strategy
	Count      uint32
	AutoCommit bool
}

// EncodedSize returns the body size.
func (r *PollMessages) EncodedSize() int {
	return r.Consumer.EncodedSize() + r.Stream.EncodedSize() + r.Topic.EncodedSize() +
		optionalPartitionBytes + strategyBytes + 4 + 1
}

// Encode writes the body.
func (r *PollMessages) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.consumer(r.Consumer)
	e.identifier(r.Stream)
	e.identifier(r.Topic)
	e.optionalPartition(r.Partition)
	e.u8(uint8(r.Strategy.Kind))
	e.u64(r.Strategy.Value)
	e.u32(r.Count)
	e.boolean(r.AutoCommit)
	return e.done(size)
}

// Decode reads the body without allocating. An unknown strategy kind is a
// decode error (status 3, §15 #2).
func (r *PollMessages) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Consumer = d.consumer()
	r.Stream = d.identifier("stream id")
	r.Topic = d.identifier("topic id")
	r.Partition = d.optionalPartition()
	strategyStart := d.pos
	r.Strategy = Strategy{Kind: StrategyKind(d.u8("strategy kind")), Value: d.u64("strategy value")}
	if d.err == nil && !r.Strategy.Valid() {
		d.failAt(strategyStart, "polling strategy unknown")
	}
	r.Count = d.u32("count")
	r.AutoCommit = d.boolean("auto commit")
	return d.finish()
}

// PolledMessages is a PollMessages reply (§8.5). Records is a view of the
// batch records; iterate them with Messages.
type PolledMessages struct {
	PartitionID   uint32
	CurrentOffset uint64
	MessagesCount uint32
	Records       []byte
	summary       PollSummary // gathered by Decode
}

// PollSummary is what a consumer that only counts needs of a poll reply,
// gathered by Decode's walk of the records, so it costs no second walk.
type PollSummary struct {
	PayloadBytes   uint64 // the messages' payload bytes, user headers excluded
	OffsetFirst    uint64 // the first message's offset (0 without messages)
	OriginFirst    uint64 // the first message's origin timestamp, µs
	OffsetsInOrder bool   // offsets run OffsetFirst, +1, +2 … without a gap
}

// Summary returns what Decode gathered of the messages; zero for a value
// that was not decoded.
func (p *PolledMessages) Summary() PollSummary { return p.summary }

// EncodePollPrefix writes the 16-byte reply prefix; a server follows it
// with stored records or BatchSlice headers and frames.
func EncodePollPrefix(dst []byte, partitionID uint32, currentOffset uint64, messagesCount uint32) int {
	invariant.Assert(len(dst) >= PollPrefixBytes, "wire: poll prefix buffer shorter than 16")
	binary.LittleEndian.PutUint32(dst, partitionID)
	binary.LittleEndian.PutUint64(dst[4:], currentOffset)
	binary.LittleEndian.PutUint32(dst[12:], messagesCount)
	return PollPrefixBytes
}

// EncodedSize returns the payload size.
func (p *PolledMessages) EncodedSize() int { return PollPrefixBytes + len(p.Records) }

// Encode writes the payload, copying Records.
func (p *PolledMessages) Encode(dst []byte) int {
	size := p.EncodedSize()
	invariant.Assert(len(dst) >= size, "wire: poll reply buffer shorter than the payload")
	EncodePollPrefix(dst, p.PartitionID, p.CurrentOffset, p.MessagesCount)
	copy(dst[PollPrefixBytes:size], p.Records)
	return size
}

// Decode reads the payload without allocating and checks that the records
// tile it and hold MessagesCount frames, so Messages can walk them safely.
// Checksums are not verified (§8.5: SDKs pass them through).
func (p *PolledMessages) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	p.PartitionID = d.u32("partition id")
	p.CurrentOffset = d.u64("current offset")
	p.MessagesCount = d.u32("messages count")
	p.Records = d.rest()
	if d.err != nil {
		return 0, d.err
	}
	count, err := countFrames(p.Records, &p.summary)
	if err != nil {
		return 0, err
	}
	if count != uint64(p.MessagesCount) {
		return 0, decodeFailure(12, "messages count differs from the records")
	}
	return len(src), nil
}

// Messages iterates the polled messages in order.
func (p *PolledMessages) Messages() MessageIterator { return MessageIterator{records: p.Records} }

// countFrames walks back-to-back records, checking lengths only, and
// gathers summary on the way.
func countFrames(records []byte, summary *PollSummary) (uint64, error) {
	*summary = PollSummary{OffsetsInOrder: true}
	count := uint64(0)
	for position := 0; position < len(records); {
		if len(records)-position < BatchHeaderBytes {
			return 0, &DecodeError{Offset: PollPrefixBytes + position, Need: BatchHeaderBytes,
				Have: len(records) - position, What: "batch header"}
		}
		header := readBatchHeader(records[position:])
		if header.BatchLength < BatchHeaderBytes || header.BatchLength > uint64(len(records)-position) {
			return 0, decodeFailure(PollPrefixBytes+position+batchOffsetLength, "batch length outside the records")
		}
		end := position + int(header.BatchLength)
		frames, err := countBatchFrames(records[:end], position, &header, count, summary)
		if err != nil {
			return 0, err
		}
		if frames != header.MessageCount {
			return 0, decodeFailure(PollPrefixBytes+position+batchOffsetMessageCount, "batch message count differs")
		}
		count += uint64(frames)
		position = end
	}
	return count, nil
}

// countBatchFrames walks the frames of the record at position (records
// ends with it) and returns their count; before is the count of the
// messages ahead of them in the reply.
func countBatchFrames(records []byte, position int, header *BatchHeader, before uint64, summary *PollSummary) (
	uint32, error) {
	end := len(records)
	frames := uint32(0)
	for cursor := position + BatchHeaderBytes; cursor < end; frames++ {
		if end-cursor < MessageHeaderBytes {
			return 0, decodeFailure(PollPrefixBytes+cursor, "truncated message header")
		}
		frame := records[cursor : cursor+MessageHeaderBytes]
		payloadBytes := uint64(binary.LittleEndian.Uint32(frame[messageOffsetPayloadLength:]))
		frameBytes := MessageHeaderBytes + payloadBytes +
			uint64(binary.LittleEndian.Uint32(frame[messageOffsetUserHeadersLength:]))
		if frameBytes > uint64(end-cursor) {
			return 0, decodeFailure(PollPrefixBytes+cursor, "message overruns its batch")
		}
		offset := header.BaseOffset + uint64(binary.LittleEndian.Uint32(frame[messageOffsetOffsetDelta:]))
		index := before + uint64(frames)
		if index == 0 {
			summary.OffsetFirst = offset
			summary.OriginFirst = header.OriginTimestamp +
				uint64(binary.LittleEndian.Uint32(frame[messageOffsetTimestampDelta:]))
		} else if offset != summary.OffsetFirst+index {
			summary.OffsetsInOrder = false
		}
		summary.PayloadBytes += payloadBytes
		cursor += int(frameBytes)
	}
	return frames, nil
}

// FlushUnsavedBuffer asks to flush a partition's buffer (§6.7).
type FlushUnsavedBuffer struct {
	Stream      Identifier
	Topic       Identifier
	PartitionID uint32
	Fsync       bool
}

// EncodedSize returns the body size.
func (r *FlushUnsavedBuffer) EncodedSize() int {
	return r.Stream.EncodedSize() + r.Topic.EncodedSize() + 4 + 1
}

// Encode writes the body.
func (r *FlushUnsavedBuffer) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.identifier(r.Stream)
	e.identifier(r.Topic)
	e.u32(r.PartitionID)
	e.boolean(r.Fsync)
	return e.done(size)
}

// Decode reads the body.
func (r *FlushUnsavedBuffer) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Stream = d.identifier("stream id")
	r.Topic = d.identifier("topic id")
	r.PartitionID = d.u32("partition id")
	r.Fsync = d.boolean("fsync")
	return d.finish()
}
