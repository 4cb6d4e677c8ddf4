package classic

// GetConsumerGroup (600): stream, topic, group. Reply: GroupDetails, or
// empty when unknown.
type GetConsumerGroup struct{ Stream, Topic, Group Identifier }

// DeleteConsumerGroup (603): stream, topic, group.
type DeleteConsumerGroup struct{ Stream, Topic, Group Identifier }

// JoinConsumerGroup (604): stream, topic, group. Membership is per
// connection; joining twice is a no-op.
type JoinConsumerGroup struct{ Stream, Topic, Group Identifier }

// LeaveConsumerGroup (605): stream, topic, group.
type LeaveConsumerGroup struct{ Stream, Topic, Group Identifier }

// GetConsumerGroups (601): stream, topic. Reply: GroupList.
type GetConsumerGroups struct{ Stream, Topic Identifier }

func (GetConsumerGroup) Code() Code    { return CodeGetConsumerGroup }
func (DeleteConsumerGroup) Code() Code { return CodeDeleteConsumerGroup }
func (JoinConsumerGroup) Code() Code   { return CodeJoinConsumerGroup }
func (LeaveConsumerGroup) Code() Code  { return CodeLeaveConsumerGroup }
func (GetConsumerGroups) Code() Code   { return CodeGetConsumerGroups }

func decodeThree(body []byte, stream, topic, group *Identifier) (int, error) {
	r := reader{buf: body}
	*stream = r.identifier("stream_id")
	*topic = r.identifier("topic_id")
	*group = r.identifier("group_id")
	return r.pos, r.result()
}

// Decode reads the body; trailing bytes are ignored.
func (req *GetConsumerGroup) Decode(body []byte) (int, error) {
	return decodeThree(body, &req.Stream, &req.Topic, &req.Group)
}

// Decode reads the body; trailing bytes are ignored.
func (req *DeleteConsumerGroup) Decode(body []byte) (int, error) {
	return decodeThree(body, &req.Stream, &req.Topic, &req.Group)
}

// Decode reads the body; trailing bytes are ignored.
func (req *JoinConsumerGroup) Decode(body []byte) (int, error) {
	return decodeThree(body, &req.Stream, &req.Topic, &req.Group)
}

// Decode reads the body; trailing bytes are ignored.
func (req *LeaveConsumerGroup) Decode(body []byte) (int, error) {
	return decodeThree(body, &req.Stream, &req.Topic, &req.Group)
}

// Decode reads the body; trailing bytes are ignored.
func (req *GetConsumerGroups) Decode(body []byte) (int, error) {
	return decodeTwo(body, &req.Stream, &req.Topic)
}

// AppendBody writes the request body.
func (req GetConsumerGroup) AppendBody(dst []byte) ([]byte, error) {
	return appendIdentifiers(dst, req.Stream, req.Topic, req.Group)
}

// AppendBody writes the request body.
func (req DeleteConsumerGroup) AppendBody(dst []byte) ([]byte, error) {
	return appendIdentifiers(dst, req.Stream, req.Topic, req.Group)
}

// AppendBody writes the request body.
func (req JoinConsumerGroup) AppendBody(dst []byte) ([]byte, error) {
	return appendIdentifiers(dst, req.Stream, req.Topic, req.Group)
}

// AppendBody writes the request body.
func (req LeaveConsumerGroup) AppendBody(dst []byte) ([]byte, error) {
	return appendIdentifiers(dst, req.Stream, req.Topic, req.Group)
}

// AppendBody writes the request body.
func (req GetConsumerGroups) AppendBody(dst []byte) ([]byte, error) {
	return appendIdentifiers(dst, req.Stream, req.Topic)
}

// CreateConsumerGroup (602): stream, topic, name name8 (no id). Reply:
// GroupEntry of the new group.
type CreateConsumerGroup struct {
	Stream Identifier
	Topic  Identifier
	Name   []byte
}

func (CreateConsumerGroup) Code() Code { return CodeCreateConsumerGroup }

// Decode reads the body; trailing bytes are ignored.
func (req *CreateConsumerGroup) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.Stream = r.identifier("stream_id")
	req.Topic = r.identifier("topic_id")
	req.Name = r.nameUTF8("group name")
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req CreateConsumerGroup) AppendBody(dst []byte) ([]byte, error) {
	if err := checkName(req.Name); err != nil {
		return dst, err
	}
	dst, err := appendIdentifiers(dst, req.Stream, req.Topic)
	if err != nil {
		return dst, err
	}
	return appendName8(dst, req.Name), nil
}

// GroupEntry is [id u32][partitions_count u32][members_count u32][name name8].
type GroupEntry struct {
	ID              uint32
	PartitionsCount uint32
	MembersCount    uint32
	Name            string
}

// GroupMember is [member_id u32][partitions_count u32][partition_id u32 × n].
type GroupMember struct {
	ID         uint32
	Partitions []uint32
}

// GroupDetails is the GetConsumerGroup reply: the entry, then member entries
// to the end of the body.
type GroupDetails struct {
	Group   GroupEntry
	Members []GroupMember
}

// GroupList is the GetConsumerGroups reply: entries to the end of the body.
type GroupList struct {
	Groups []GroupEntry
}

func appendGroupEntry(dst []byte, g *GroupEntry) []byte {
	dst = appendU32(dst, g.ID)
	dst = appendU32(dst, g.PartitionsCount)
	dst = appendU32(dst, g.MembersCount)
	return appendNameString(dst, g.Name)
}

func (r *reader) groupEntry() GroupEntry {
	return GroupEntry{
		ID:              r.u32("group id"),
		PartitionsCount: r.u32("group partitions_count"),
		MembersCount:    r.u32("group members_count"),
		Name:            string(r.nameUTF8("group name")),
	}
}

// AppendBody writes a CreateConsumerGroup reply body.
func (g *GroupEntry) AppendBody(dst []byte) []byte { return appendGroupEntry(dst, g) }

// Decode reads a CreateConsumerGroup reply body, consumed exactly.
func (g *GroupEntry) Decode(body []byte) error {
	r := reader{buf: body}
	*g = r.groupEntry()
	return r.exact("group entry")
}

// AppendBody writes the reply body.
func (d *GroupDetails) AppendBody(dst []byte) []byte {
	dst = appendGroupEntry(dst, &d.Group)
	for _, member := range d.Members {
		dst = appendU32(dst, member.ID)
		dst = appendU32(dst, uint32(len(member.Partitions)))
		for _, partition := range member.Partitions {
			dst = appendU32(dst, partition)
		}
	}
	return dst
}

// Decode reads the reply body. An empty body (unknown group) is a decode
// error: check for it first.
func (d *GroupDetails) Decode(body []byte) error {
	r := reader{buf: body}
	d.Group = r.groupEntry()
	d.Members = nil
	for r.remaining() > 0 && r.err == nil {
		member := GroupMember{ID: r.u32("member id")}
		count := r.u32("member partitions_count")
		if r.err == nil && uint64(count)*4 > uint64(r.remaining()) {
			r.fail("member partitions", int(uint64(count)*4))
		}
		for i := uint32(0); i < count && r.err == nil; i++ {
			member.Partitions = append(member.Partitions, r.u32("member partition_id"))
		}
		d.Members = append(d.Members, member)
	}
	return r.exact("group details")
}

// AppendBody writes the reply body.
func (l *GroupList) AppendBody(dst []byte) []byte {
	for i := range l.Groups {
		dst = appendGroupEntry(dst, &l.Groups[i])
	}
	return dst
}

// Decode reads entries to the end of the body.
func (l *GroupList) Decode(body []byte) error {
	r := reader{buf: body}
	l.Groups = nil
	for r.remaining() > 0 && r.err == nil {
		l.Groups = append(l.Groups, r.groupEntry())
	}
	return r.exact("group list")
}
