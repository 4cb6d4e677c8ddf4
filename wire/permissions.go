package wire

// GlobalPermissions are the ten server-wide rights (§1.8), in wire order.
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

// StreamPermissions are one stream's rights and its topics' rights.
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

// TopicPermissions are one topic's rights.
type TopicPermissions struct {
	TopicID      uint32
	ManageTopic  bool
	ReadTopic    bool
	PollMessages bool
	SendMessages bool
}

// Permissions is the permission tree of a user (§1.8).
type Permissions struct {
	Global  GlobalPermissions
	Streams []StreamPermissions
}

// AllPermissions is what the bootstrap root user holds.
func AllPermissions() Permissions {
	return Permissions{Global: GlobalPermissions{true, true, true, true, true, true, true, true, true, true}}
}

const (
	streamPermissionsBytes = 4 + 6 + 1 + 1 // id, bools, has_topics, has_next_stream
	topicPermissionsBytes  = 4 + 4 + 1     // id, bools, has_next_topic
)

// EncodedSize returns the permission bytes' size (no wrapper).
func (p *Permissions) EncodedSize() int {
	size := GlobalPermissionsBytes + 1
	for i := range p.Streams {
		size += streamPermissionsBytes + topicPermissionsBytes*len(p.Streams[i].Topics)
	}
	return size
}

// Encode writes the permission bytes (no wrapper).
func (p *Permissions) Encode(dst []byte) int {
	size := p.EncodedSize()
	e := newEncoder(dst, size)
	e.permissions(p)
	return e.done(size)
}

// Decode reads the permission bytes (no wrapper).
func (p *Permissions) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	*p = d.permissions()
	return d.finish()
}

func (e *encoder) permissions(p *Permissions) {
	g := &p.Global
	for _, flag := range [...]bool{g.ManageServers, g.ReadServers, g.ManageUsers, g.ReadUsers, g.ManageStreams,
		g.ReadStreams, g.ManageTopics, g.ReadTopics, g.PollMessages, g.SendMessages} {
		e.boolean(flag)
	}
	e.boolean(len(p.Streams) > 0)
	for i := range p.Streams {
		stream := &p.Streams[i]
		e.u32(stream.StreamID)
		for _, flag := range [...]bool{stream.ManageStream, stream.ReadStream, stream.ManageTopics,
			stream.ReadTopics, stream.PollMessages, stream.SendMessages} {
			e.boolean(flag)
		}
		e.boolean(len(stream.Topics) > 0)
		for j, topic := range stream.Topics {
			e.u32(topic.TopicID)
			e.boolean(topic.ManageTopic)
			e.boolean(topic.ReadTopic)
			e.boolean(topic.PollMessages)
			e.boolean(topic.SendMessages)
			e.boolean(j+1 < len(stream.Topics))
		}
		e.boolean(i+1 < len(p.Streams))
	}
}

func (d *decoder) permissions() Permissions {
	var p Permissions
	g := &p.Global
	for _, flag := range [...]*bool{&g.ManageServers, &g.ReadServers, &g.ManageUsers, &g.ReadUsers, &g.ManageStreams,
		&g.ReadStreams, &g.ManageTopics, &g.ReadTopics, &g.PollMessages, &g.SendMessages} {
		*flag = d.boolean("global permission")
	}
	more := d.boolean("has streams")
	for d.err == nil && more {
		stream := StreamPermissions{StreamID: d.u32("permission stream id")}
		for _, flag := range [...]*bool{&stream.ManageStream, &stream.ReadStream, &stream.ManageTopics,
			&stream.ReadTopics, &stream.PollMessages, &stream.SendMessages} {
			*flag = d.boolean("stream permission")
		}
		moreTopics := d.boolean("has topics")
		for d.err == nil && moreTopics {
			topic := TopicPermissions{TopicID: d.u32("permission topic id")}
			topic.ManageTopic = d.boolean("topic permission")
			topic.ReadTopic = d.boolean("topic permission")
			topic.PollMessages = d.boolean("topic permission")
			topic.SendMessages = d.boolean("topic permission")
			moreTopics = d.boolean("has next topic")
			stream.Topics = append(stream.Topics, topic)
		}
		more = d.boolean("has next stream")
		p.Streams = append(p.Streams, stream)
	}
	return p
}

// encodePermissionsWrapper writes [1][len u32][permissions] or, when p is
// nil, the request form [0].
func (e *encoder) permissionsWrapper(p *Permissions) {
	if p == nil {
		e.u8(0)
		return
	}
	e.u8(1)
	e.u32(uint32(p.EncodedSize()))
	e.permissions(p)
}

func permissionsWrapperSize(p *Permissions) int {
	if p == nil {
		return 1
	}
	return 1 + 4 + p.EncodedSize()
}

// permissionsWrapper reads [has u8] and, if 1, [len u32][permissions]
// whose decoded size must equal len.
func (d *decoder) permissionsWrapper() *Permissions {
	if !d.boolean("has permissions") {
		return nil
	}
	start := d.pos
	length := d.u32("permissions length")
	p := d.permissions()
	if d.err == nil && d.pos-start-4 != int(length) {
		d.failAt(start, "permissions length does not match the permissions")
	}
	return &p
}
