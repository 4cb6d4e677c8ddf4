package wire

// StreamTarget is a body naming one stream (§6.4, §6.5).
type StreamTarget struct {
	Stream Identifier
}

// Requests whose body is one stream identifier.
type (
	GetStream    = StreamTarget
	DeleteStream = StreamTarget
	PurgeStream  = StreamTarget
	GetTopics    = StreamTarget
)

// EncodedSize returns the body size.
func (r *StreamTarget) EncodedSize() int { return r.Stream.EncodedSize() }

// Encode writes the body.
func (r *StreamTarget) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.identifier(r.Stream)
	return e.done(size)
}

// Decode reads the body.
func (r *StreamTarget) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Stream = d.identifier("stream id")
	return d.finish()
}

// CreateStream creates a stream; the server assigns its id (§6.4).
type CreateStream struct {
	Name    string
	Options Headers
}

// EncodedSize returns the body size.
func (r *CreateStream) EncodedSize() int { return 1 + len(r.Name) + r.Options.EncodedSize() }

// Encode writes the body.
func (r *CreateStream) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.str8(r.Name)
	e.headers(r.Options)
	return e.done(size)
}

// Decode reads the body.
func (r *CreateStream) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Name = string(d.name8("stream name"))
	r.Options = d.optionsTail()
	return d.finish()
}

// UpdateStream renames a stream and updates its options (§6.4).
type UpdateStream struct {
	Stream  Identifier
	Name    string
	Options Headers
}

// EncodedSize returns the body size.
func (r *UpdateStream) EncodedSize() int {
	return r.Stream.EncodedSize() + 1 + len(r.Name) + r.Options.EncodedSize()
}

// Encode writes the body.
func (r *UpdateStream) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.identifier(r.Stream)
	e.str8(r.Name)
	e.headers(r.Options)
	return e.done(size)
}

// Decode reads the body.
func (r *UpdateStream) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Stream = d.identifier("stream id")
	r.Name = string(d.name8("stream name"))
	r.Options = d.optionsTail()
	return d.finish()
}

// StreamInfo is a stream entry (§7.1) and the CreateStream reply.
type StreamInfo struct {
	ID            uint32
	CreatedAt     uint64
	TopicsCount   uint32
	SizeBytes     uint64
	MessagesCount uint64
	Name          string
	Options       Headers
}

const streamInfoBytesMin = 4 + 8 + 4 + 8 + 8 + 1 + 4

// EncodedSize returns the entry size.
func (s *StreamInfo) EncodedSize() int {
	return streamInfoBytesMin + len(s.Name) + s.Options.EncodedSize()
}

// Encode writes the entry.
func (s *StreamInfo) Encode(dst []byte) int {
	size := s.EncodedSize()
	e := newEncoder(dst, size)
	e.streamInfo(s)
	return e.done(size)
}

// Decode reads one entry.
func (s *StreamInfo) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	*s = d.streamInfo()
	return d.finish()
}

func (e *encoder) streamInfo(s *StreamInfo) {
	e.u32(s.ID)
	e.u64(s.CreatedAt)
	e.u32(s.TopicsCount)
	e.u64(s.SizeBytes)
	e.u64(s.MessagesCount)
	e.str8(s.Name)
	e.optionsBlock(s.Options)
}

func (d *decoder) streamInfo() StreamInfo {
	return StreamInfo{
		ID:            d.u32("stream id"),
		CreatedAt:     d.u64("stream created at"),
		TopicsCount:   d.u32("stream topics count"),
		SizeBytes:     d.u64("stream size"),
		MessagesCount: d.u64("stream messages count"),
		Name:          string(d.name8("stream name")),
		Options:       d.optionsBlock(),
	}
}

// StreamDetails is a GetStream reply: the entry, then TopicsCount topic
// entries.
type StreamDetails struct {
	StreamInfo
	Topics []TopicInfo
}

// EncodedSize returns the payload size.
func (s *StreamDetails) EncodedSize() int {
	size := s.StreamInfo.EncodedSize()
	for i := range s.Topics {
		size += s.Topics[i].EncodedSize()
	}
	return size
}

// Encode writes the payload; TopicsCount must equal len(Topics).
func (s *StreamDetails) Encode(dst []byte) int {
	size := s.EncodedSize()
	e := newEncoder(dst, size)
	e.streamInfo(&s.StreamInfo)
	for i := range s.Topics {
		e.topicInfo(&s.Topics[i])
	}
	return e.done(size)
}

// Decode reads the payload.
func (s *StreamDetails) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	s.StreamInfo = d.streamInfo()
	if d.err == nil && uint64(s.TopicsCount)*topicInfoBytesMin > uint64(d.remaining()) {
		d.fail("topics count exceeds the remaining bytes")
	}
	s.Topics = nil
	for i := uint32(0); d.err == nil && i < s.TopicsCount; i++ {
		s.Topics = append(s.Topics, d.topicInfo())
	}
	return d.finish()
}

// StreamList is a GetStreams reply: entries to the end of the payload.
type StreamList []StreamInfo

// EncodedSize returns the payload size.
func (l StreamList) EncodedSize() int {
	size := 0
	for i := range l {
		size += l[i].EncodedSize()
	}
	return size
}

// Encode writes the payload.
func (l StreamList) Encode(dst []byte) int {
	size := l.EncodedSize()
	e := newEncoder(dst, size)
	for i := range l {
		e.streamInfo(&l[i])
	}
	return e.done(size)
}

// Decode reads entries until src ends.
func (l *StreamList) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	*l = (*l)[:0]
	for d.err == nil && d.remaining() > 0 {
		*l = append(*l, d.streamInfo())
	}
	return d.finish()
}
