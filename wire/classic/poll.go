package classic

import (
	"encoding/binary"

	"github.com/whippetio/whippet/internal/invariant"
)

// PollMessages (100): consumer, stream, topic, optional partition (5),
// strategy (9), count u32, auto_commit u8. A group poll without a partition
// lets the server pick the member's next assigned partition.
type PollMessages struct {
	Consumer   Consumer
	Stream     Identifier
	Topic      Identifier
	Partition  OptionalPartition
	Strategy   PollingStrategy
	Count      uint32
	AutoCommit bool
}

func (PollMessages) Code() Code { return CodePollMessages }

// Decode reads the body without allocating; trailing bytes are ignored.
func (req *PollMessages) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.Consumer = r.consumer("consumer")
	req.Stream = r.identifier("stream_id")
	req.Topic = r.identifier("topic_id")
	req.Partition = r.optionalPartition("partition_id")
	req.Strategy = r.pollingStrategy("strategy")
	req.Count = r.u32("count")
	req.AutoCommit = r.flag("auto_commit")
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req PollMessages) AppendBody(dst []byte) ([]byte, error) {
	err := firstError(req.Consumer.check(), req.Stream.check(), req.Topic.check(), req.Partition.check(),
		req.Strategy.check())
	if err != nil {
		return dst, err
	}
	dst = appendConsumer(dst, req.Consumer)
	dst = appendIdentifier(dst, req.Stream)
	dst = appendIdentifier(dst, req.Topic)
	dst = appendOptionalPartition(dst, req.Partition)
	dst = append(dst, uint8(req.Strategy.Kind))
	dst = appendU64(dst, req.Strategy.Value)
	dst = appendU32(dst, req.Count)
	return appendFlag(dst, req.AutoCommit), nil
}

// PollReply is the PollMessages reply: [partition_id u32][current_offset u64]
// [messages_count u32] then that many stored messages back to back. Data is a
// view of the messages; an empty poll has Count 0 and no Data.
type PollReply struct {
	PartitionID   uint32
	CurrentOffset uint64
	Count         uint32
	Data          []byte
}

// AppendPollReplyHeader writes the 16-byte head of a poll reply; the caller
// appends count messages with AppendMessage.
func AppendPollReplyHeader(dst []byte, partitionID uint32, currentOffset uint64, count uint32) []byte {
	dst = appendU32(dst, partitionID)
	dst = appendU64(dst, currentOffset)
	return appendU32(dst, count)
}

// AppendBody writes the reply body.
func (p *PollReply) AppendBody(dst []byte) []byte {
	invariant.Assert(p.Count > 0 || len(p.Data) == 0, "an empty poll carries no message bytes")
	dst = AppendPollReplyHeader(dst, p.PartitionID, p.CurrentOffset, p.Count)
	return append(dst, p.Data...)
}

// Decode reads and validates a poll reply without allocating: the messages
// must tile the body exactly and number Count.
func (p *PollReply) Decode(body []byte) error {
	r := reader{buf: body}
	p.PartitionID = r.u32("partition_id")
	p.CurrentOffset = r.u64("current_offset")
	countOffset := r.pos
	p.Count = r.u32("messages_count")
	if r.err != nil {
		return r.err
	}
	p.Data = body[r.pos:len(body):len(body)]
	position := 0
	found := uint32(0)
	for position < len(p.Data) {
		if len(p.Data)-position < MessageHeaderBytes {
			return &DecodeError{What: "message header", Offset: PollReplyHeaderBytes + position,
				Need: MessageHeaderBytes, Have: len(p.Data) - position, Status: StatusInvalidFormat}
		}
		header := p.Data[position:]
		size := uint64(MessageHeaderBytes) + uint64(binary.LittleEndian.Uint32(header[headerPayloadLengthAt:])) +
			uint64(binary.LittleEndian.Uint32(header[headerUserHeadersLengthAt:]))
		if size > uint64(len(p.Data)-position) {
			return &DecodeError{What: "message", Offset: PollReplyHeaderBytes + position,
				Need: int(size), Have: len(p.Data) - position, Status: StatusInvalidFormat}
		}
		if err := checkMessageSpan(p.Data[position:position+int(size)], PollReplyHeaderBytes+position); err != nil {
			return err
		}
		position += int(size)
		found++
	}
	if found != p.Count {
		return &DecodeError{What: "messages_count", Offset: countOffset, Value: uint64(p.Count), Status: StatusInvalidFormat}
	}
	return nil
}

// Messages returns an iterator over the decoded messages.
func (p *PollReply) Messages() MessageIterator { return MessageIterator{data: p.Data} }

// MessageIterator walks messages that a decoder has already validated.
type MessageIterator struct {
	data     []byte
	position int
}

// Next returns the next message view, or false at the end.
func (it *MessageIterator) Next() (Message, bool) {
	if it.position >= len(it.data) {
		return Message{}, false
	}
	header := ReadMessageHeader(it.data[it.position:])
	end := it.position + header.MessageBytes()
	message := viewMessage(it.data[it.position:end:end])
	it.position = end
	return message, true
}
