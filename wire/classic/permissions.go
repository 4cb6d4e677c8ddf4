package classic

// Permissions is the user permission tree (§2.8, byte-identical to 0.9).
type Permissions struct {
	Global  GlobalPermissions
	Streams []StreamPermissions
}

// GlobalPermissions are the ten server-wide flags, in wire order.
type GlobalPermissions struct {
	ManageServers bool
	ReadServers   bool
	ManageUsers   bool
	ReadUsers     bool
	ManageStreams bool
	ReadStreams   bool
	ManageTopics  bool
	ReadTopics    bool
	PollMessages  bool
	SendMessages  bool
}

// StreamPermissions are one stream's six flags and its topic list.
type StreamPermissions struct {
	StreamID     uint32
	ManageStream bool
	ReadStream   bool
	ManageTopics bool
	ReadTopics   bool
	PollMessages bool
	SendMessages bool
	Topics       []TopicPermissions
}

// TopicPermissions are one topic's four flags.
type TopicPermissions struct {
	TopicID      uint32
	ManageTopic  bool
	ReadTopic    bool
	PollMessages bool
	SendMessages bool
}

// EncodedSize is the size of the permission bytes (without the wrapper).
func (p *Permissions) EncodedSize() int {
	size := 10 + 1
	for _, stream := range p.Streams {
		size += 4 + 6 + 1 + 1 + len(stream.Topics)*(4+4+1)
	}
	return size
}

// AppendPermissions writes the bare permission bytes.
func AppendPermissions(dst []byte, p *Permissions) []byte {
	g := p.Global
	for _, flag := range [10]bool{g.ManageServers, g.ReadServers, g.ManageUsers, g.ReadUsers,
		g.ManageStreams, g.ReadStreams, g.ManageTopics, g.ReadTopics, g.PollMessages, g.SendMessages} {
		dst = appendFlag(dst, flag)
	}
	dst = appendFlag(dst, len(p.Streams) > 0)
	for i, s := range p.Streams {
		dst = appendU32(dst, s.StreamID)
		for _, flag := range [6]bool{s.ManageStream, s.ReadStream, s.ManageTopics, s.ReadTopics,
			s.PollMessages, s.SendMessages} {
			dst = appendFlag(dst, flag)
		}
		dst = appendFlag(dst, len(s.Topics) > 0)
		for j, t := range s.Topics {
			dst = appendU32(dst, t.TopicID)
			dst = appendFlag(dst, t.ManageTopic)
			dst = appendFlag(dst, t.ReadTopic)
			dst = appendFlag(dst, t.PollMessages)
			dst = appendFlag(dst, t.SendMessages)
			dst = appendFlag(dst, j+1 < len(s.Topics))
		}
		dst = appendFlag(dst, i+1 < len(p.Streams))
	}
	return dst
}

// DecodePermissions reads bare permission bytes that must be consumed exactly.
func DecodePermissions(raw []byte) (Permissions, error) {
	r := reader{buf: raw}
	p := r.permissions()
	return p, r.exact("permissions")
}

func (r *reader) permissions() Permissions {
	var p Permissions
	g := &p.Global
	for _, flag := range [10]*bool{&g.ManageServers, &g.ReadServers, &g.ManageUsers, &g.ReadUsers,
		&g.ManageStreams, &g.ReadStreams, &g.ManageTopics, &g.ReadTopics, &g.PollMessages, &g.SendMessages} {
		*flag = r.flag("permissions global")
	}
	more := r.flag("permissions has_streams")
	for more && r.err == nil {
		if len(p.Streams) == PermissionStreamsMax {
			r.invalid("permissions streams", r.pos, PermissionStreamsMax, StatusInvalidFormat)
			break
		}
		p.Streams = append(p.Streams, r.streamPermissions())
		more = r.flag("permissions has_next_stream")
	}
	return p
}

func (r *reader) streamPermissions() StreamPermissions {
	s := StreamPermissions{StreamID: r.u32("permissions stream_id")}
	for _, flag := range [6]*bool{&s.ManageStream, &s.ReadStream, &s.ManageTopics, &s.ReadTopics,
		&s.PollMessages, &s.SendMessages} {
		*flag = r.flag("permissions stream")
	}
	more := r.flag("permissions has_topics")
	for more && r.err == nil {
		if len(s.Topics) == PermissionTopicsMax {
			r.invalid("permissions topics", r.pos, PermissionTopicsMax, StatusInvalidFormat)
			break
		}
		t := TopicPermissions{TopicID: r.u32("permissions topic_id")}
		t.ManageTopic = r.flag("permissions topic")
		t.ReadTopic = r.flag("permissions topic")
		t.PollMessages = r.flag("permissions topic")
		t.SendMessages = r.flag("permissions topic")
		s.Topics = append(s.Topics, t)
		more = r.flag("permissions has_next_topic")
	}
	return s
}

// requestPermissions reads [has u8][len u32][bytes] or [0] and checks that
// the declared length matches the decoded tree (else InvalidFormat).
func (r *reader) requestPermissions() (bool, Permissions) {
	has := r.flag("has_permissions")
	if !has || r.err != nil {
		return false, Permissions{}
	}
	return true, r.sizedPermissions()
}

func (r *reader) sizedPermissions() Permissions {
	offset := r.pos
	length := r.u32("permissions length")
	if r.err != nil {
		return Permissions{}
	}
	if uint64(length) > uint64(r.remaining()) {
		r.fail("permissions", int(length))
		return Permissions{}
	}
	inner := reader{buf: r.buf[r.pos : r.pos+int(length)]}
	p := inner.permissions()
	if inner.err == nil && inner.pos != int(length) {
		r.invalid("permissions length", offset, uint64(length), StatusInvalidFormat)
	}
	if inner.err != nil && r.err == nil {
		inner.err.Offset += r.pos
		inner.err.Status = StatusInvalidFormat
		r.err = inner.err
	}
	r.pos += int(length)
	return p
}

func appendRequestPermissions(dst []byte, has bool, p *Permissions) []byte {
	if !has {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	dst = appendU32(dst, uint32(p.EncodedSize()))
	return AppendPermissions(dst, p)
}
