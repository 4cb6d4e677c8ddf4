package classic

// GetStream (200): identifier. Reply: StreamDetails, or empty when unknown.
type GetStream struct{ Stream Identifier }

// DeleteStream (203): identifier.
type DeleteStream struct{ Stream Identifier }

// PurgeStream (205): identifier.
type PurgeStream struct{ Stream Identifier }

// GetStreams (201) has an empty body; the reply is a StreamList.
type GetStreams struct{}

func (GetStream) Code() Code    { return CodeGetStream }
func (DeleteStream) Code() Code { return CodeDeleteStream }
func (PurgeStream) Code() Code  { return CodePurgeStream }
func (GetStreams) Code() Code   { return CodeGetStreams }

// Decode reads the body; trailing bytes are ignored.
func (req *GetStream) Decode(body []byte) (int, error) {
	return decodeOneIdentifier(body, &req.Stream, "stream_id")
}

// Decode reads the body; trailing bytes are ignored.
func (req *DeleteStream) Decode(body []byte) (int, error) {
	return decodeOneIdentifier(body, &req.Stream, "stream_id")
}

// Decode reads the body; trailing bytes are ignored.
func (req *PurgeStream) Decode(body []byte) (int, error) {
	return decodeOneIdentifier(body, &req.Stream, "stream_id")
}

func (*GetStreams) Decode([]byte) (int, error) { return 0, nil }

// AppendBody writes the request body.
func (req GetStream) AppendBody(dst []byte) ([]byte, error) {
	return appendIdentifiers(dst, req.Stream)
}

// AppendBody writes the request body.
func (req DeleteStream) AppendBody(dst []byte) ([]byte, error) {
	return appendIdentifiers(dst, req.Stream)
}

// AppendBody writes the request body.
func (req PurgeStream) AppendBody(dst []byte) ([]byte, error) {
	return appendIdentifiers(dst, req.Stream)
}

// AppendBody writes the (empty) request body.
func (GetStreams) AppendBody(dst []byte) ([]byte, error) { return dst, nil }

// CreateStream (202): name name8 (no id since 0.6). Reply: StreamEntry.
type CreateStream struct {
	Name []byte
}

func (CreateStream) Code() Code { return CodeCreateStream }

// Decode reads the body; trailing bytes are ignored.
func (req *CreateStream) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.Name = r.nameUTF8("stream name")
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req CreateStream) AppendBody(dst []byte) ([]byte, error) {
	if err := checkName(req.Name); err != nil {
		return dst, err
	}
	return appendName8(dst, req.Name), nil
}

// UpdateStream (204): identifier, name name8.
type UpdateStream struct {
	Stream Identifier
	Name   []byte
}

func (UpdateStream) Code() Code { return CodeUpdateStream }

// Decode reads the body; trailing bytes are ignored.
func (req *UpdateStream) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.Stream = r.identifier("stream_id")
	req.Name = r.nameUTF8("stream name")
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req UpdateStream) AppendBody(dst []byte) ([]byte, error) {
	if err := firstError(req.Stream.check(), checkName(req.Name)); err != nil {
		return dst, err
	}
	return appendName8(appendIdentifier(dst, req.Stream), req.Name), nil
}

// StreamEntry is [id u32][created_at u64][topics_count u32][size_bytes u64]
// [messages_count u64][name name8]: 33 bytes plus the name.
type StreamEntry struct {
	ID            uint32
	CreatedAt     uint64
	TopicsCount   uint32
	SizeBytes     uint64
	MessagesCount uint64
	Name          string
}

// StreamDetails is the GetStream reply: the entry, then topic entries to the
// end of the body.
type StreamDetails struct {
	Stream StreamEntry
	Topics []TopicEntry
}

// StreamList is the GetStreams reply: entries to the end of the body.
type StreamList struct {
	Streams []StreamEntry
}

func appendStreamEntry(dst []byte, s *StreamEntry) []byte {
	dst = appendU32(dst, s.ID)
	dst = appendU64(dst, s.CreatedAt)
	dst = appendU32(dst, s.TopicsCount)
	dst = appendU64(dst, s.SizeBytes)
	dst = appendU64(dst, s.MessagesCount)
	return appendNameString(dst, s.Name)
}

func (r *reader) streamEntry() StreamEntry {
	return StreamEntry{
		ID:            r.u32("stream id"),
		CreatedAt:     r.u64("stream created_at"),
		TopicsCount:   r.u32("stream topics_count"),
		SizeBytes:     r.u64("stream size_bytes"),
		MessagesCount: r.u64("stream messages_count"),
		Name:          string(r.nameUTF8("stream name")),
	}
}

// AppendBody writes a CreateStream reply body.
func (s *StreamEntry) AppendBody(dst []byte) []byte { return appendStreamEntry(dst, s) }

// Decode reads a CreateStream reply body, which must be consumed exactly.
func (s *StreamEntry) Decode(body []byte) error {
	r := reader{buf: body}
	*s = r.streamEntry()
	return r.exact("stream entry")
}

// AppendBody writes the reply body.
func (d *StreamDetails) AppendBody(dst []byte) []byte {
	dst = appendStreamEntry(dst, &d.Stream)
	for i := range d.Topics {
		dst = appendTopicEntry(dst, &d.Topics[i])
	}
	return dst
}

// Decode reads the reply body. An empty body (unknown stream) is a decode
// error: check for it first.
func (d *StreamDetails) Decode(body []byte) error {
	r := reader{buf: body}
	d.Stream = r.streamEntry()
	d.Topics = nil
	for r.remaining() > 0 && r.err == nil {
		d.Topics = append(d.Topics, r.topicEntry())
	}
	return r.exact("stream details")
}

// AppendBody writes the reply body.
func (l *StreamList) AppendBody(dst []byte) []byte {
	for i := range l.Streams {
		dst = appendStreamEntry(dst, &l.Streams[i])
	}
	return dst
}

// Decode reads entries to the end of the body.
func (l *StreamList) Decode(body []byte) error {
	r := reader{buf: body}
	l.Streams = nil
	for r.remaining() > 0 && r.err == nil {
		l.Streams = append(l.Streams, r.streamEntry())
	}
	return r.exact("stream list")
}
