package classic

// Compression is the topic compression algorithm: 1 none, 2 gzip.
type Compression uint8

// Compression values.
const (
	CompressionNone Compression = 1
	CompressionGzip Compression = 2
)

// Sentinels of topic fields (§2.9).
const (
	// ExpiryServerDefault and SizeServerDefault ask for the server default.
	ExpiryServerDefault = 0
	SizeServerDefault   = 0
	// ExpiryNever and SizeUnlimited are u64::MAX.
	ExpiryNever   = ^uint64(0)
	SizeUnlimited = ^uint64(0)
)

func (r *reader) compression(what string) Compression {
	offset := r.pos
	value := Compression(r.u8(what))
	if r.err == nil && value != CompressionNone && value != CompressionGzip {
		r.invalid(what, offset, uint64(value), StatusInvalidCommand)
	}
	return value
}

func checkCompression(value Compression) error {
	if value != CompressionNone && value != CompressionGzip {
		return ErrFieldRange
	}
	return nil
}

// GetTopic (300): stream, topic. Reply: TopicDetails, or empty when unknown.
type GetTopic struct{ Stream, Topic Identifier }

// DeleteTopic (303): stream, topic.
type DeleteTopic struct{ Stream, Topic Identifier }

// PurgeTopic (305): stream, topic.
type PurgeTopic struct{ Stream, Topic Identifier }

// GetTopics (301): stream. Reply: TopicList (entries to the end, no count).
type GetTopics struct{ Stream Identifier }

func (GetTopic) Code() Code    { return CodeGetTopic }
func (DeleteTopic) Code() Code { return CodeDeleteTopic }
func (PurgeTopic) Code() Code  { return CodePurgeTopic }
func (GetTopics) Code() Code   { return CodeGetTopics }

// Decode reads the body; trailing bytes are ignored.
func (req *GetTopic) Decode(body []byte) (int, error) {
	return decodeTwo(body, &req.Stream, &req.Topic)
}

// Decode reads the body; trailing bytes are ignored.
func (req *DeleteTopic) Decode(body []byte) (int, error) {
	return decodeTwo(body, &req.Stream, &req.Topic)
}

// Decode reads the body; trailing bytes are ignored.
func (req *PurgeTopic) Decode(body []byte) (int, error) {
	return decodeTwo(body, &req.Stream, &req.Topic)
}

// Decode reads the body; trailing bytes are ignored.
func (req *GetTopics) Decode(body []byte) (int, error) {
	return decodeOneIdentifier(body, &req.Stream, "stream_id")
}

// AppendBody writes the request body.
func (req GetTopic) AppendBody(dst []byte) ([]byte, error) {
	return appendIdentifiers(dst, req.Stream, req.Topic)
}

// AppendBody writes the request body.
func (req DeleteTopic) AppendBody(dst []byte) ([]byte, error) {
	return appendIdentifiers(dst, req.Stream, req.Topic)
}

// AppendBody writes the request body.
func (req PurgeTopic) AppendBody(dst []byte) ([]byte, error) {
	return appendIdentifiers(dst, req.Stream, req.Topic)
}

// AppendBody writes the request body.
func (req GetTopics) AppendBody(dst []byte) ([]byte, error) {
	return appendIdentifiers(dst, req.Stream)
}

func decodeTwo(body []byte, stream, topic *Identifier) (int, error) {
	r := reader{buf: body}
	*stream = r.identifier("stream_id")
	*topic = r.identifier("topic_id")
	return r.pos, r.result()
}

// TopicSettings are the fixed fields CreateTopic and UpdateTopic share:
// compression u8, message_expiry u64, max_topic_size u64, replication u8.
type TopicSettings struct {
	Compression       Compression
	MessageExpiry     uint64
	MaxTopicSize      uint64
	ReplicationFactor uint8
}

func (r *reader) topicSettings() TopicSettings {
	return TopicSettings{
		Compression:       r.compression("compression"),
		MessageExpiry:     r.u64("message_expiry"),
		MaxTopicSize:      r.u64("max_topic_size"),
		ReplicationFactor: r.u8("replication_factor"),
	}
}

func appendTopicSettings(dst []byte, s TopicSettings) []byte {
	dst = append(dst, uint8(s.Compression))
	dst = appendU64(dst, s.MessageExpiry)
	dst = appendU64(dst, s.MaxTopicSize)
	return append(dst, s.ReplicationFactor)
}

// CreateTopic (302): stream, partitions_count u32, settings, name name8.
// Reply: TopicDetails of the new topic.
type CreateTopic struct {
	Stream          Identifier
	PartitionsCount uint32
	Settings        TopicSettings
	Name            []byte
}

func (CreateTopic) Code() Code { return CodeCreateTopic }

// Decode reads the body; trailing bytes are ignored.
func (req *CreateTopic) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.Stream = r.identifier("stream_id")
	req.PartitionsCount = r.u32("partitions_count")
	req.Settings = r.topicSettings()
	req.Name = r.nameUTF8("topic name")
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req CreateTopic) AppendBody(dst []byte) ([]byte, error) {
	err := firstError(req.Stream.check(), checkCompression(req.Settings.Compression), checkName(req.Name))
	if err != nil {
		return dst, err
	}
	dst = appendIdentifier(dst, req.Stream)
	dst = appendU32(dst, req.PartitionsCount)
	dst = appendTopicSettings(dst, req.Settings)
	return appendName8(dst, req.Name), nil
}

// UpdateTopic (304): stream, topic, settings, name name8; every field
// replaces the stored one.
type UpdateTopic struct {
	Stream   Identifier
	Topic    Identifier
	Settings TopicSettings
	Name     []byte
}

func (UpdateTopic) Code() Code { return CodeUpdateTopic }

// Decode reads the body; trailing bytes are ignored.
func (req *UpdateTopic) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.Stream = r.identifier("stream_id")
	req.Topic = r.identifier("topic_id")
	req.Settings = r.topicSettings()
	req.Name = r.nameUTF8("topic name")
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req UpdateTopic) AppendBody(dst []byte) ([]byte, error) {
	err := firstError(req.Stream.check(), req.Topic.check(), checkCompression(req.Settings.Compression),
		checkName(req.Name))
	if err != nil {
		return dst, err
	}
	dst = appendIdentifier(dst, req.Stream)
	dst = appendIdentifier(dst, req.Topic)
	dst = appendTopicSettings(dst, req.Settings)
	return appendName8(dst, req.Name), nil
}

// TopicEntry is [id u32][created_at u64][partitions_count u32]
// [message_expiry u64][compression u8][max_topic_size u64]
// [replication_factor u8][size_bytes u64][messages_count u64][name name8]:
// 51 bytes plus the name. Expiry and size are the resolved values.
type TopicEntry struct {
	ID                uint32
	CreatedAt         uint64
	PartitionsCount   uint32
	MessageExpiry     uint64
	Compression       Compression
	MaxTopicSize      uint64
	ReplicationFactor uint8
	SizeBytes         uint64
	MessagesCount     uint64
	Name              string
}

// PartitionEntry is [id u32][created_at u64][segments_count u32]
// [current_offset u64][size_bytes u64][messages_count u64]: 40 bytes.
type PartitionEntry struct {
	ID            uint32
	CreatedAt     uint64
	SegmentsCount uint32
	CurrentOffset uint64
	SizeBytes     uint64
	MessagesCount uint64
}

// PartitionEntryBytes is the fixed size of a partition entry.
const PartitionEntryBytes = 40

// TopicDetails is the GetTopic and CreateTopic reply: the entry, then
// partition entries to the end of the body.
type TopicDetails struct {
	Topic      TopicEntry
	Partitions []PartitionEntry
}

// TopicList is the GetTopics reply: entries to the end of the body.
type TopicList struct {
	Topics []TopicEntry
}

func appendTopicEntry(dst []byte, t *TopicEntry) []byte {
	dst = appendU32(dst, t.ID)
	dst = appendU64(dst, t.CreatedAt)
	dst = appendU32(dst, t.PartitionsCount)
	dst = appendU64(dst, t.MessageExpiry)
	dst = append(dst, uint8(t.Compression))
	dst = appendU64(dst, t.MaxTopicSize)
	dst = append(dst, t.ReplicationFactor)
	dst = appendU64(dst, t.SizeBytes)
	dst = appendU64(dst, t.MessagesCount)
	return appendNameString(dst, t.Name)
}

func (r *reader) topicEntry() TopicEntry {
	return TopicEntry{
		ID:                r.u32("topic id"),
		CreatedAt:         r.u64("topic created_at"),
		PartitionsCount:   r.u32("topic partitions_count"),
		MessageExpiry:     r.u64("topic message_expiry"),
		Compression:       r.compression("topic compression"),
		MaxTopicSize:      r.u64("topic max_topic_size"),
		ReplicationFactor: r.u8("topic replication_factor"),
		SizeBytes:         r.u64("topic size_bytes"),
		MessagesCount:     r.u64("topic messages_count"),
		Name:              string(r.nameUTF8("topic name")),
	}
}

func appendPartitionEntry(dst []byte, p *PartitionEntry) []byte {
	dst = appendU32(dst, p.ID)
	dst = appendU64(dst, p.CreatedAt)
	dst = appendU32(dst, p.SegmentsCount)
	dst = appendU64(dst, p.CurrentOffset)
	dst = appendU64(dst, p.SizeBytes)
	return appendU64(dst, p.MessagesCount)
}

func (r *reader) partitionEntry() PartitionEntry {
	return PartitionEntry{
		ID:            r.u32("partition id"),
		CreatedAt:     r.u64("partition created_at"),
		SegmentsCount: r.u32("partition segments_count"),
		CurrentOffset: r.u64("partition current_offset"),
		SizeBytes:     r.u64("partition size_bytes"),
		MessagesCount: r.u64("partition messages_count"),
	}
}

// AppendBody writes the reply body.
func (d *TopicDetails) AppendBody(dst []byte) []byte {
	dst = appendTopicEntry(dst, &d.Topic)
	for i := range d.Partitions {
		dst = appendPartitionEntry(dst, &d.Partitions[i])
	}
	return dst
}

// Decode reads the reply body. An empty body (unknown topic) is a decode
// error: check for it first.
func (d *TopicDetails) Decode(body []byte) error {
	r := reader{buf: body}
	d.Topic = r.topicEntry()
	d.Partitions = nil
	for r.remaining() > 0 && r.err == nil {
		d.Partitions = append(d.Partitions, r.partitionEntry())
	}
	return r.exact("topic details")
}

// AppendBody writes the reply body.
func (l *TopicList) AppendBody(dst []byte) []byte {
	for i := range l.Topics {
		dst = appendTopicEntry(dst, &l.Topics[i])
	}
	return dst
}

// Decode reads entries to the end of the body.
func (l *TopicList) Decode(body []byte) error {
	r := reader{buf: body}
	l.Topics = nil
	for r.remaining() > 0 && r.err == nil {
		l.Topics = append(l.Topics, r.topicEntry())
	}
	return r.exact("topic list")
}
