package classic

import "github.com/whippetio/whippet/internal/invariant"

// Client transports in client entries (§2.9); the classic Go SDK names only
// TCP and QUIC.
const (
	TransportTCP       = 1
	TransportQUIC      = 2
	TransportHTTP      = 3
	TransportWebSocket = 4
)

// UserIDNone is the user_id of a connection that has not logged in.
const UserIDNone = ^uint32(0)

// ClientEntry is [client_id u32][user_id u32][transport u8][address str32]
// [consumer_groups_count u32].
type ClientEntry struct {
	ClientID            uint32
	UserID              uint32
	Transport           uint8
	Address             string
	ConsumerGroupsCount uint32
}

// ClientGroup is one membership of ClientDetails.
type ClientGroup struct {
	StreamID uint32
	TopicID  uint32
	GroupID  uint32
}

// ClientDetails is the GetMe / GetClient reply: the entry, then
// consumer_groups_count memberships.
type ClientDetails struct {
	Client         ClientEntry
	ConsumerGroups []ClientGroup
}

// ClientList is the GetClients reply: entries to the end of the body.
type ClientList struct {
	Clients []ClientEntry
}

func appendClientEntry(dst []byte, c *ClientEntry) []byte {
	dst = appendU32(dst, c.ClientID)
	dst = appendU32(dst, c.UserID)
	dst = append(dst, c.Transport)
	dst = appendStr32(dst, c.Address)
	return appendU32(dst, c.ConsumerGroupsCount)
}

func (r *reader) clientEntry() ClientEntry {
	return ClientEntry{
		ClientID:            r.u32("client_id"),
		UserID:              r.u32("client user_id"),
		Transport:           r.u8("client transport"),
		Address:             string(r.str32("client address")),
		ConsumerGroupsCount: r.u32("client consumer_groups_count"),
	}
}

// AppendBody writes the reply body.
func (d *ClientDetails) AppendBody(dst []byte) []byte {
	invariant.Assert(int(d.Client.ConsumerGroupsCount) == len(d.ConsumerGroups),
		"client details count matches its groups")
	dst = appendClientEntry(dst, &d.Client)
	for _, group := range d.ConsumerGroups {
		dst = appendU32(dst, group.StreamID)
		dst = appendU32(dst, group.TopicID)
		dst = appendU32(dst, group.GroupID)
	}
	return dst
}

// Decode reads a ClientDetails body, which must be consumed exactly. An
// empty body (unknown client) is a decode error: check for it first.
func (d *ClientDetails) Decode(body []byte) error {
	r := reader{buf: body}
	d.Client = r.clientEntry()
	count := d.Client.ConsumerGroupsCount
	if r.err == nil && uint64(count)*12 != uint64(r.remaining()) {
		r.invalid("client consumer groups", r.pos, uint64(count), StatusInvalidFormat)
	}
	d.ConsumerGroups = nil
	for i := uint32(0); i < count && r.err == nil; i++ {
		d.ConsumerGroups = append(d.ConsumerGroups, ClientGroup{
			StreamID: r.u32("group stream_id"), TopicID: r.u32("group topic_id"), GroupID: r.u32("group_id"),
		})
	}
	return r.exact("client details")
}

// AppendBody writes the reply body.
func (l *ClientList) AppendBody(dst []byte) []byte {
	for i := range l.Clients {
		dst = appendClientEntry(dst, &l.Clients[i])
	}
	return dst
}

// Decode reads entries to the end of the body; empty is an empty list.
func (l *ClientList) Decode(body []byte) error {
	r := reader{buf: body}
	l.Clients = nil
	for r.remaining() > 0 && r.err == nil {
		l.Clients = append(l.Clients, r.clientEntry())
	}
	return r.exact("client list")
}
