package classic

import (
	"encoding/binary"

	"github.com/whippetio/whippet/internal/invariant"
)

// SendMessages (101) body:
//
//	[metadata_length u32][stream][topic][partitioning][messages_count u32]
//	[index entry × count][message × count]
//
// Index entry i is [0 u32][end position u32][0 u64]; end is the cumulative
// byte length of messages 0..i. Decode validates every boundary and every
// message span, then keeps views: Index and Data point into the body, so a
// server stamps messages in place and never copies them.
type SendMessages struct {
	Stream       Identifier
	Topic        Identifier
	Partitioning Partitioning
	Count        uint32
	Index        []byte
	Data         []byte
}

func (SendMessages) Code() Code { return CodeSendMessages }

// Decode reads and validates the body without allocating. All remaining
// bytes of the body are message data (the 0.8 rule), so it is consumed whole.
func (req *SendMessages) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	metadataBytes := r.u32("metadata_length")
	metadataStart := r.pos
	req.Stream = r.identifier("stream_id")
	req.Topic = r.identifier("topic_id")
	req.Partitioning = r.partitioning("partitioning")
	countOffset := r.pos
	req.Count = r.u32("messages_count")
	if r.err == nil && uint64(r.pos-metadataStart) != uint64(metadataBytes) {
		r.invalid("metadata_length", 0, uint64(metadataBytes), StatusInvalidCommand)
	}
	if r.err == nil && req.Count == 0 {
		r.invalid("messages_count", countOffset, 0, StatusInvalidMessagesCount)
	}
	if r.err == nil && uint64(req.Count)*IndexEntryBytes > uint64(r.remaining()) {
		r.err = &DecodeError{What: "index", Offset: r.pos, Need: int(uint64(req.Count) * IndexEntryBytes), Have: r.remaining(), Status: StatusMissingIndex}
	}
	if r.err != nil {
		return r.pos, r.err
	}
	req.Index = r.take(int(req.Count)*IndexEntryBytes, "index")
	req.Data = r.take(r.remaining(), "messages")
	if err := req.checkMessages(r.pos - len(req.Data)); err != nil {
		return r.pos, err
	}
	return r.pos, nil
}

// checkMessages walks the index: zero reserved words, monotonic ends, every
// span a whole message, the last end equal to the data length.
func (req *SendMessages) checkMessages(dataOffset int) error {
	indexOffset := dataOffset - len(req.Index)
	start := 0
	for i := 0; i < int(req.Count); i++ {
		entry := req.Index[i*IndexEntryBytes : (i+1)*IndexEntryBytes]
		entryOffset := indexOffset + i*IndexEntryBytes
		if word := binary.LittleEndian.Uint32(entry[0:4]); word != 0 {
			return &DecodeError{What: "index offset", Offset: entryOffset, Value: uint64(word), Status: StatusNonZeroOffset}
		}
		if word := binary.LittleEndian.Uint64(entry[8:16]); word != 0 {
			return &DecodeError{What: "index timestamp", Offset: entryOffset + 8, Value: word, Status: StatusNonZeroTimestamp}
		}
		end := int(binary.LittleEndian.Uint32(entry[4:8]))
		if end < start {
			return &DecodeError{What: "index position", Offset: entryOffset + 4, Value: uint64(end),
				Status: StatusCannotReadIndexPosition}
		}
		if end > len(req.Data) {
			return &DecodeError{What: "index position", Offset: entryOffset + 4, Value: uint64(end),
				Status: StatusInvalidMessagesSize}
		}
		if err := checkMessageSpan(req.Data[start:end], dataOffset+start); err != nil {
			return err
		}
		start = end
	}
	if start != len(req.Data) {
		return &DecodeError{What: "messages size", Offset: dataOffset, Value: uint64(len(req.Data)),
			Status: StatusInvalidMessagesSize}
	}
	return nil
}

// MessageRaw returns a mutable view of message i (header, payload, user
// headers) inside the request body.
func (req *SendMessages) MessageRaw(i int) []byte {
	invariant.Assert(i >= 0 && i < int(req.Count), "message index within messages_count")
	start := 0
	if i > 0 {
		start = int(binary.LittleEndian.Uint32(req.Index[(i-1)*IndexEntryBytes+4:]))
	}
	end := int(binary.LittleEndian.Uint32(req.Index[i*IndexEntryBytes+4:]))
	return req.Data[start:end:end]
}

// Message returns a view of message i.
func (req *SendMessages) Message(i int) Message { return viewMessage(req.MessageRaw(i)) }

// AppendBody re-encodes a decoded body byte for byte.
func (req SendMessages) AppendBody(dst []byte) ([]byte, error) {
	err := firstError(req.Stream.check(), req.Topic.check(), req.Partitioning.check())
	if err != nil {
		return dst, err
	}
	if req.Count == 0 || len(req.Index) != int(req.Count)*IndexEntryBytes {
		return dst, ErrFieldRange
	}
	dst = appendSendMetadata(dst, req.Stream, req.Topic, req.Partitioning, req.Count)
	dst = append(dst, req.Index...)
	return append(dst, req.Data...), nil
}

func appendSendMetadata(dst []byte, stream, topic Identifier, p Partitioning, count uint32) []byte {
	metadataBytes := stream.EncodedSize() + topic.EncodedSize() + p.EncodedSize() + 4
	dst = appendU32(dst, uint32(metadataBytes))
	dst = appendIdentifier(dst, stream)
	dst = appendIdentifier(dst, topic)
	dst = appendPartitioning(dst, p)
	return appendU32(dst, count)
}

// OutgoingMessage is what a producer sends: the server stamps the rest.
type OutgoingMessage struct {
	ID              MessageID
	OriginTimestamp uint64
	Payload         []byte
	UserHeaders     []byte
}

// AppendSendMessagesBody writes a whole SendMessages body the way the classic
// SDKs do: checksum, offset, timestamp and reserved zero; index entries
// carrying cumulative end positions.
func AppendSendMessagesBody(dst []byte, stream, topic Identifier, p Partitioning, messages []OutgoingMessage) ([]byte, error) {
	if err := firstError(stream.check(), topic.check(), p.check()); err != nil {
		return dst, err
	}
	if len(messages) == 0 || len(messages) > MessagesCountMax {
		return dst, ErrFieldRange
	}
	total := 0
	for _, m := range messages {
		if len(m.Payload) > MessagePayloadBytesMax || len(m.UserHeaders) > UserHeadersBytesMax {
			return dst, ErrFieldRange
		}
		total += MessageHeaderBytes + len(m.Payload) + len(m.UserHeaders)
	}
	if total+len(messages)*IndexEntryBytes > SendMessagesBodyBytesMax {
		return dst, ErrBodyTooLarge
	}
	dst = appendSendMetadata(dst, stream, topic, p, uint32(len(messages)))
	end := 0
	for _, m := range messages {
		end += MessageHeaderBytes + len(m.Payload) + len(m.UserHeaders)
		dst = appendU32(dst, 0)
		dst = appendU32(dst, uint32(end))
		dst = appendU64(dst, 0)
	}
	for _, m := range messages {
		header := MessageHeader{ID: m.ID, OriginTimestamp: m.OriginTimestamp,
			UserHeadersLength: uint32(len(m.UserHeaders)), PayloadLength: uint32(len(m.Payload))}
		dst = AppendMessageHeader(dst, &header)
		dst = append(dst, m.Payload...)
		dst = append(dst, m.UserHeaders...)
	}
	return dst, nil
}

// FlushUnsavedBuffer (102): stream, topic, partition_id u32, fsync u8.
type FlushUnsavedBuffer struct {
	Stream      Identifier
	Topic       Identifier
	PartitionID uint32
	Fsync       bool
}

func (FlushUnsavedBuffer) Code() Code { return CodeFlushUnsavedBuffer }

// Decode reads the body; trailing bytes are ignored.
func (req *FlushUnsavedBuffer) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.Stream = r.identifier("stream_id")
	req.Topic = r.identifier("topic_id")
	req.PartitionID = r.u32("partition_id")
	req.Fsync = r.flag("fsync")
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req FlushUnsavedBuffer) AppendBody(dst []byte) ([]byte, error) {
	dst, err := appendIdentifiers(dst, req.Stream, req.Topic)
	if err != nil {
		return dst, err
	}
	return appendFlag(appendU32(dst, req.PartitionID), req.Fsync), nil
}
