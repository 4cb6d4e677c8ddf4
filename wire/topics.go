package wire

import "strconv"

// TopicTarget is a body naming one topic (§6.5, §6.9).
type TopicTarget struct {
	Stream Identifier
	Topic  Identifier
}

// Requests whose body is a stream and a topic identifier.
type (
	GetTopic          = TopicTarget
	DeleteTopic       = TopicTarget
	PurgeTopic        = TopicTarget
	GetConsumerGroups = TopicTarget
)

// EncodedSize returns the body size.
func (r *TopicTarget) EncodedSize() int { return r.Stream.EncodedSize() + r.Topic.EncodedSize() }

// Encode writes the body.
func (r *TopicTarget) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.identifier(r.Stream)
	e.identifier(r.Topic)
	return e.done(size)
}

// Decode reads the body.
func (r *TopicTarget) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Stream = d.identifier("stream id")
	r.Topic = d.identifier("topic id")
	return d.finish()
}

// Compression is a topic's compression algorithm (§1.9).
type Compression uint8

// Compression algorithms.
const (
	CompressionNone Compression = 1
	CompressionGzip Compression = 2
)

// String names the algorithm as the topic views print it ("none", "gzip");
// a value outside the table shows its number, "unknown(7)", rather than
// passing for one it is not.
func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionGzip:
		return "gzip"
	}
	return "unknown(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// Topic option keys (§6.5); durability is our extension (§15 #9).
const (
	OptionCompressionAlgorithm         = "compression_algorithm"
	OptionMessageExpiry                = "message_expiry"
	OptionMaxTopicSize                 = "max_topic_size"
	OptionSegmentSize                  = "segment_size"
	OptionEnforceFsync                 = "enforce_fsync"
	OptionMessagesRequiredToSave       = "messages_required_to_save"
	OptionSizeOfMessagesRequiredToSave = "size_of_messages_required_to_save"
	OptionPreallocateSegments          = "preallocate_segments"
	OptionDurability                   = "durability"
)

// CreateTopic creates a topic with PartitionsCount partitions; the server
// assigns its id. Settings travel only as options (§6.5).
type CreateTopic struct {
	Stream          Identifier
	PartitionsCount uint32
	Name            string
	Options         Headers
}

// EncodedSize returns the body size.
func (r *CreateTopic) EncodedSize() int {
	return r.Stream.EncodedSize() + 4 + 1 + len(r.Name) + r.Options.EncodedSize()
}

// Encode writes the body.
func (r *CreateTopic) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.identifier(r.Stream)
	e.u32(r.PartitionsCount)
	e.str8(r.Name)
	e.headers(r.Options)
	return e.done(size)
}

// Decode reads the body. The partition count is checked by the server
// (status 2015), not here.
func (r *CreateTopic) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Stream = d.identifier("stream id")
	r.PartitionsCount = d.u32("partitions count")
	r.Name = string(d.name8("topic name"))
	r.Options = d.optionsTail()
	return d.finish()
}

// UpdateTopic renames a topic and updates its options (§6.5).
type UpdateTopic struct {
	Stream  Identifier
	Topic   Identifier
	Name    string
	Options Headers
}

// EncodedSize returns the body size.
func (r *UpdateTopic) EncodedSize() int {
	return r.Stream.EncodedSize() + r.Topic.EncodedSize() + 1 + len(r.Name) + r.Options.EncodedSize()
}

// Encode writes the body.
func (r *UpdateTopic) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.identifier(r.Stream)
	e.identifier(r.Topic)
	e.str8(r.Name)
	e.headers(r.Options)
	return e.done(size)
}

// Decode reads the body.
func (r *UpdateTopic) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Stream = d.identifier("stream id")
	r.Topic = d.identifier("topic id")
	r.Name = string(d.name8("topic name"))
	r.Options = d.optionsTail()
	return d.finish()
}

// TopicInfo is a topic entry (§7.2).
type TopicInfo struct {
	ID              uint32
	CreatedAt       uint64
	PartitionsCount uint32
	MessageExpiry   uint64
	Compression     Compression
	MaxTopicSize    uint64
	SizeBytes       uint64
	MessagesCount   uint64
	Name            string
	Options         Headers // the keys the client set, in canonical kinds
	DerivedOptions  Headers // catalog keys resolved from defaults at create
}

const topicInfoBytesMin = 4 + 8 + 4 + 8 + 1 + 8 + 8 + 8 + 1 + 4 + 4

// EncodedSize returns the entry size.
func (t *TopicInfo) EncodedSize() int {
	return topicInfoBytesMin + len(t.Name) + t.Options.EncodedSize() + t.DerivedOptions.EncodedSize()
}

// Encode writes the entry.
func (t *TopicInfo) Encode(dst []byte) int {
	size := t.EncodedSize()
	e := newEncoder(dst, size)
	e.topicInfo(t)
	return e.done(size)
}

// Decode reads one entry.
func (t *TopicInfo) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	*t = d.topicInfo()
	return d.finish()
}

func (e *encoder) topicInfo(t *TopicInfo) {
	e.u32(t.ID)
	e.u64(t.CreatedAt)
	e.u32(t.PartitionsCount)
	e.u64(t.MessageExpiry)
	e.u8(uint8(t.Compression))
	e.u64(t.MaxTopicSize)
	e.u64(t.SizeBytes)
	e.u64(t.MessagesCount)
	e.str8(t.Name)
	e.optionsBlock(t.Options)
	e.optionsBlock(t.DerivedOptions)
}

func (d *decoder) topicInfo() TopicInfo {
	return TopicInfo{
		ID:              d.u32("topic id"),
		CreatedAt:       d.u64("topic created at"),
		PartitionsCount: d.u32("topic partitions count"),
		MessageExpiry:   d.u64("topic message expiry"),
		Compression:     Compression(d.u8("topic compression")),
		MaxTopicSize:    d.u64("topic max size"),
		SizeBytes:       d.u64("topic size"),
		MessagesCount:   d.u64("topic messages count"),
		Name:            string(d.name8("topic name")),
		Options:         d.optionsBlock(),
		DerivedOptions:  d.optionsBlock(),
	}
}

// PartitionInfo is a fixed 40-byte partition entry (§7.3).
type PartitionInfo struct {
	ID            uint32
	CreatedAt     uint64
	SegmentsCount uint32
	CurrentOffset uint64
	SizeBytes     uint64
	MessagesCount uint64
}

// TopicDetails is a GetTopic or CreateTopic reply: the entry, then
// PartitionsCount partition entries.
type TopicDetails struct {
	TopicInfo
	Partitions []PartitionInfo
}

// EncodedSize returns the payload size.
func (t *TopicDetails) EncodedSize() int {
	return t.TopicInfo.EncodedSize() + PartitionEntryBytes*len(t.Partitions)
}

// Encode writes the payload; PartitionsCount must equal len(Partitions).
func (t *TopicDetails) Encode(dst []byte) int {
	size := t.EncodedSize()
	e := newEncoder(dst, size)
	e.topicInfo(&t.TopicInfo)
	for _, partition := range t.Partitions {
		e.u32(partition.ID)
		e.u64(partition.CreatedAt)
		e.u32(partition.SegmentsCount)
		e.u64(partition.CurrentOffset)
		e.u64(partition.SizeBytes)
		e.u64(partition.MessagesCount)
	}
	return e.done(size)
}

// Decode reads the payload.
func (t *TopicDetails) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	t.TopicInfo = d.topicInfo()
	if d.err == nil && uint64(t.PartitionsCount)*PartitionEntryBytes > uint64(d.remaining()) {
		d.fail("partitions count exceeds the remaining bytes")
	}
	if d.err != nil {
		return d.finish()
	}
	t.Partitions = make([]PartitionInfo, t.PartitionsCount)
	for i := range t.Partitions {
		t.Partitions[i] = PartitionInfo{
			ID:            d.u32("partition id"),
			CreatedAt:     d.u64("partition created at"),
			SegmentsCount: d.u32("partition segments count"),
			CurrentOffset: d.u64("partition current offset"),
			SizeBytes:     d.u64("partition size"),
			MessagesCount: d.u64("partition messages count"),
		}
	}
	return d.finish()
}

// TopicList is a GetTopics reply: [count u32] then entries, the only
// count-prefixed list (§7.7).
type TopicList []TopicInfo

// EncodedSize returns the payload size.
func (l TopicList) EncodedSize() int {
	size := 4
	for i := range l {
		size += l[i].EncodedSize()
	}
	return size
}

// Encode writes the payload.
func (l TopicList) Encode(dst []byte) int {
	size := l.EncodedSize()
	e := newEncoder(dst, size)
	e.u32(uint32(len(l)))
	for i := range l {
		e.topicInfo(&l[i])
	}
	return e.done(size)
}

// Decode reads the payload.
func (l *TopicList) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	count := d.count32(topicInfoBytesMin, "topics")
	*l = make(TopicList, 0, count)
	for i := 0; d.err == nil && i < count; i++ {
		*l = append(*l, d.topicInfo())
	}
	return d.finish()
}

// PartitionsChange adds or removes partitions at the end of a topic (§6.6).
type PartitionsChange struct {
	Stream          Identifier
	Topic           Identifier
	PartitionsCount uint32
}

// Requests that change a topic's partition count.
type (
	CreatePartitions = PartitionsChange
	DeletePartitions = PartitionsChange
)

// EncodedSize returns the body size.
func (r *PartitionsChange) EncodedSize() int {
	return r.Stream.EncodedSize() + r.Topic.EncodedSize() + 4
}

// Encode writes the body.
func (r *PartitionsChange) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.identifier(r.Stream)
	e.identifier(r.Topic)
	e.u32(r.PartitionsCount)
	return e.done(size)
}

// Decode reads the body.
func (r *PartitionsChange) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Stream = d.identifier("stream id")
	r.Topic = d.identifier("topic id")
	r.PartitionsCount = d.u32("partitions count")
	return d.finish()
}

// DeleteSegments deletes the oldest sealed segments of a partition (§6.6).
type DeleteSegments struct {
	Stream        Identifier
	Topic         Identifier
	PartitionID   uint32
	SegmentsCount uint32
}

// EncodedSize returns the body size.
func (r *DeleteSegments) EncodedSize() int {
	return r.Stream.EncodedSize() + r.Topic.EncodedSize() + 8
}

// Encode writes the body.
func (r *DeleteSegments) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.identifier(r.Stream)
	e.identifier(r.Topic)
	e.u32(r.PartitionID)
	e.u32(r.SegmentsCount)
	return e.done(size)
}

// Decode reads the body.
func (r *DeleteSegments) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Stream = d.identifier("stream id")
	r.Topic = d.identifier("topic id")
	r.PartitionID = d.u32("partition id")
	r.SegmentsCount = d.u32("segments count")
	return d.finish()
}
