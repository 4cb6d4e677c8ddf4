package wire

// GroupTarget is a body naming one consumer group (§6.9).
type GroupTarget struct {
	Stream Identifier
	Topic  Identifier
	Group  Identifier
}

// Requests whose body is a stream, a topic and a group identifier.
type (
	GetConsumerGroup    = GroupTarget
	DeleteConsumerGroup = GroupTarget
	JoinConsumerGroup   = GroupTarget
	LeaveConsumerGroup  = GroupTarget
	SyncConsumerGroup   = GroupTarget
)

// EncodedSize returns the body size.
func (r *GroupTarget) EncodedSize() int {
	return r.Stream.EncodedSize() + r.Topic.EncodedSize() + r.Group.EncodedSize()
}

// Encode writes the body.
func (r *GroupTarget) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.identifier(r.Stream)
	e.identifier(r.Topic)
	e.identifier(r.Group)
	return e.done(size)
}

// Decode reads the body.
func (r *GroupTarget) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Stream = d.identifier("stream id")
	r.Topic = d.identifier("topic id")
	r.Group = d.identifier("group id")
	return d.finish()
}

// CreateConsumerGroup creates a group; the server assigns its id (§6.9).
type CreateConsumerGroup struct {
	Stream Identifier
	Topic  Identifier
	Name   string
}

// EncodedSize returns the body size.
func (r *CreateConsumerGroup) EncodedSize() int {
	return r.Stream.EncodedSize() + r.Topic.EncodedSize() + 1 + len(r.Name)
}

// Encode writes the body.
func (r *CreateConsumerGroup) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.identifier(r.Stream)
	e.identifier(r.Topic)
	e.str8(r.Name)
	return e.done(size)
}

// Decode reads the body.
func (r *CreateConsumerGroup) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Stream = d.identifier("stream id")
	r.Topic = d.identifier("topic id")
	r.Name = string(d.name8("group name"))
	return d.finish()
}

// ConsumerGroupInfo is a group entry (§7.6) and the CreateConsumerGroup
// reply.
type ConsumerGroupInfo struct {
	ID              uint32
	PartitionsCount uint32
	MembersCount    uint32
	Name            string
}

const groupInfoBytesMin = 4 + 4 + 4 + 1

// EncodedSize returns the entry size.
func (g *ConsumerGroupInfo) EncodedSize() int { return groupInfoBytesMin + len(g.Name) }

// Encode writes the entry.
func (g *ConsumerGroupInfo) Encode(dst []byte) int {
	size := g.EncodedSize()
	e := newEncoder(dst, size)
	e.groupInfo(g)
	return e.done(size)
}

// Decode reads one entry.
func (g *ConsumerGroupInfo) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	*g = d.groupInfo()
	return d.finish()
}

func (e *encoder) groupInfo(g *ConsumerGroupInfo) {
	e.u32(g.ID)
	e.u32(g.PartitionsCount)
	e.u32(g.MembersCount)
	e.str8(g.Name)
}

func (d *decoder) groupInfo() ConsumerGroupInfo {
	return ConsumerGroupInfo{
		ID:              d.u32("group id"),
		PartitionsCount: d.u32("group partitions count"),
		MembersCount:    d.u32("group members count"),
		Name:            string(d.name8("group name")),
	}
}

// GroupMember is one member of a group with its assigned partitions.
type GroupMember struct {
	ID         uint32
	Partitions []uint32
}

// ConsumerGroupDetails is a GetConsumerGroup reply: the entry, then
// MembersCount members (§7.6).
type ConsumerGroupDetails struct {
	ConsumerGroupInfo
	Members []GroupMember
}

// EncodedSize returns the payload size.
func (g *ConsumerGroupDetails) EncodedSize() int {
	size := g.ConsumerGroupInfo.EncodedSize()
	for _, member := range g.Members {
		size += 8 + 4*len(member.Partitions)
	}
	return size
}

// Encode writes the payload; MembersCount must equal len(Members).
func (g *ConsumerGroupDetails) Encode(dst []byte) int {
	size := g.EncodedSize()
	e := newEncoder(dst, size)
	e.groupInfo(&g.ConsumerGroupInfo)
	for _, member := range g.Members {
		e.u32(member.ID)
		e.u32(uint32(len(member.Partitions)))
		for _, partition := range member.Partitions {
			e.u32(partition)
		}
	}
	return e.done(size)
}

// Decode reads the payload.
func (g *ConsumerGroupDetails) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	g.ConsumerGroupInfo = d.groupInfo()
	if d.err == nil && uint64(g.MembersCount)*8 > uint64(d.remaining()) {
		d.fail("members count exceeds the remaining bytes")
	}
	g.Members = nil
	for i := uint32(0); d.err == nil && i < g.MembersCount; i++ {
		member := GroupMember{ID: d.u32("member id")}
		member.Partitions = d.u32List("member partitions")
		g.Members = append(g.Members, member)
	}
	return d.finish()
}

func (d *decoder) u32List(what string) []uint32 {
	count := d.count32(4, what)
	if d.err != nil {
		return nil
	}
	values := make([]uint32, count)
	for i := range values {
		values[i] = d.u32(what)
	}
	return values
}

// ConsumerGroupList is a GetConsumerGroups reply: entries to the end.
type ConsumerGroupList []ConsumerGroupInfo

// EncodedSize returns the payload size.
func (l ConsumerGroupList) EncodedSize() int {
	size := 0
	for i := range l {
		size += l[i].EncodedSize()
	}
	return size
}

// Encode writes the payload.
func (l ConsumerGroupList) Encode(dst []byte) int {
	size := l.EncodedSize()
	e := newEncoder(dst, size)
	for i := range l {
		e.groupInfo(&l[i])
	}
	return e.done(size)
}

// Decode reads entries until src ends.
func (l *ConsumerGroupList) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	*l = (*l)[:0]
	for d.err == nil && d.remaining() > 0 {
		*l = append(*l, d.groupInfo())
	}
	return d.finish()
}

// GroupAssignment is a SyncConsumerGroup reply: the generation and the
// caller's pollable partitions; an empty payload means not a member.
type GroupAssignment struct {
	Generation uint64
	Partitions []uint32
}

// EncodedSize returns the payload size.
func (a *GroupAssignment) EncodedSize() int { return 8 + 4 + 4*len(a.Partitions) }

// Encode writes the payload.
func (a *GroupAssignment) Encode(dst []byte) int {
	size := a.EncodedSize()
	e := newEncoder(dst, size)
	e.u64(a.Generation)
	e.u32(uint32(len(a.Partitions)))
	for _, partition := range a.Partitions {
		e.u32(partition)
	}
	return e.done(size)
}

// Decode reads the payload.
func (a *GroupAssignment) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	a.Generation = d.u64("generation")
	a.Partitions = d.u32List("assigned partitions")
	return d.finish()
}
