package wire

// Transport is how a client connected (§1.9).
type Transport uint8

// Transports.
const (
	TransportTCP       Transport = 1
	TransportQUIC      Transport = 2
	TransportWebSocket Transport = 4
)

// ClientInfo is a client entry (§7.5). UserID is ClientUserNone before
// login.
type ClientInfo struct {
	ClientID            uint32
	UserID              uint32
	Transport           Transport
	Address             string
	ConsumerGroupsCount uint32
}

// ClientGroup is one consumer group a client belongs to.
type ClientGroup struct {
	StreamID uint32
	TopicID  uint32
	GroupID  uint32
}

// ClientDetails is a GetClient or GetMe reply: the entry followed by
// ConsumerGroupsCount group triples.
type ClientDetails struct {
	ClientInfo
	ConsumerGroups []ClientGroup
}

const clientInfoBytesMin = 4 + 4 + 1 + 4 + 4

func (c *ClientInfo) size() int { return clientInfoBytesMin + len(c.Address) }

func (e *encoder) clientInfo(c *ClientInfo) {
	e.u32(c.ClientID)
	e.u32(c.UserID)
	e.u8(uint8(c.Transport))
	e.str32(c.Address)
	e.u32(c.ConsumerGroupsCount)
}

func (d *decoder) clientInfo() ClientInfo {
	return ClientInfo{
		ClientID:            d.u32("client id"),
		UserID:              d.u32("client user id"),
		Transport:           Transport(d.u8("client transport")),
		Address:             string(d.str32("client address")),
		ConsumerGroupsCount: d.u32("client groups count"),
	}
}

// EncodedSize returns the payload size.
func (c *ClientDetails) EncodedSize() int { return c.size() + 12*len(c.ConsumerGroups) }

// Encode writes the payload. ConsumerGroupsCount must match the groups.
func (c *ClientDetails) Encode(dst []byte) int {
	size := c.EncodedSize()
	e := newEncoder(dst, size)
	e.clientInfo(&c.ClientInfo)
	for _, group := range c.ConsumerGroups {
		e.u32(group.StreamID)
		e.u32(group.TopicID)
		e.u32(group.GroupID)
	}
	return e.done(size)
}

// Decode reads the payload.
func (c *ClientDetails) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	c.ClientInfo = d.clientInfo()
	if d.err == nil && uint64(c.ConsumerGroupsCount)*12 > uint64(d.remaining()) {
		d.need(int(min(uint64(c.ConsumerGroupsCount)*12, FrameBytesMax)), "client groups")
	}
	c.ConsumerGroups = nil
	for i := uint32(0); d.err == nil && i < c.ConsumerGroupsCount; i++ {
		c.ConsumerGroups = append(c.ConsumerGroups, ClientGroup{
			StreamID: d.u32("group stream id"), TopicID: d.u32("group topic id"), GroupID: d.u32("group id"),
		})
	}
	return d.finish()
}

// ClientList is a GetClients reply: entries to the end of the payload.
type ClientList []ClientInfo

// EncodedSize returns the payload size.
func (l ClientList) EncodedSize() int {
	size := 0
	for i := range l {
		size += l[i].size()
	}
	return size
}

// Encode writes the payload.
func (l ClientList) Encode(dst []byte) int {
	size := l.EncodedSize()
	e := newEncoder(dst, size)
	for i := range l {
		e.clientInfo(&l[i])
	}
	return e.done(size)
}

// Decode reads entries until src ends.
func (l *ClientList) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	*l = (*l)[:0]
	for d.err == nil && d.remaining() > 0 {
		*l = append(*l, d.clientInfo())
	}
	return d.finish()
}
