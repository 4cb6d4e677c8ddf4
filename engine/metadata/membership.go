package metadata

import "github.com/whippetio/whippet/internal/invariant"

// GroupKey names one consumer group.
type GroupKey struct {
	StreamID uint32
	TopicID  uint32
	GroupID  uint32
}

// ClientID is a session's VSR client id (u128, little-endian halves).
type ClientID struct{ Low, High uint64 }

// Member is one member of a group with its assigned partitions.
type Member struct {
	// ID is the member's slot in the group (GetConsumerGroup's member id).
	ID         uint32
	Client     ClientID
	Partitions []uint32
}

// Membership tracks which sessions are members of which groups and deals
// partitions round-robin over the members in join order (an eager
// rebalance on every change). It is not logged: memberships are per
// session and end with the process. Every change bumps the group's
// generation (0 before the first join).
type Membership struct {
	groups map[GroupKey]*groupMembers
}

type groupMembers struct {
	members    []Member
	generation uint64
}

// NewMembership returns an empty membership table.
func NewMembership() *Membership {
	return &Membership{groups: make(map[GroupKey]*groupMembers)}
}

// Join adds client to the group (no change when already a member) and
// rebalances over partitionCount partitions; it returns the generation.
func (m *Membership) Join(key GroupKey, client ClientID, partitionCount uint32) uint64 {
	group := m.groups[key]
	if group == nil {
		group = &groupMembers{}
		m.groups[key] = group
	}
	if group.find(client) >= 0 {
		return group.generation
	}
	group.members = append(group.members, Member{Client: client})
	group.rebalance(partitionCount)
	return group.generation
}

// Leave removes client from the group and rebalances; false when it was
// not a member.
func (m *Membership) Leave(key GroupKey, client ClientID, partitionCount uint32) bool {
	group := m.groups[key]
	if group == nil {
		return false
	}
	index := group.find(client)
	if index < 0 {
		return false
	}
	group.members = append(group.members[:index], group.members[index+1:]...)
	group.rebalance(partitionCount)
	return true
}

// Rebalance redeals the group's partitions after a partition count change.
func (m *Membership) Rebalance(key GroupKey, partitionCount uint32) {
	if group := m.groups[key]; group != nil {
		group.rebalance(partitionCount)
	}
}

// Drop forgets a deleted group.
func (m *Membership) Drop(key GroupKey) { delete(m.groups, key) }

// Assignment returns the client's partitions and the generation; ok is
// false when the client is not a member.
func (m *Membership) Assignment(key GroupKey, client ClientID) (partitions []uint32, generation uint64, ok bool) {
	group := m.groups[key]
	if group == nil {
		return nil, 0, false
	}
	index := group.find(client)
	if index < 0 {
		return nil, group.generation, false
	}
	return group.members[index].Partitions, group.generation, true
}

// Owns reports whether client may poll partition in the group.
func (m *Membership) Owns(key GroupKey, client ClientID, partition uint32) bool {
	partitions, _, ok := m.Assignment(key, client)
	for _, owned := range partitions {
		if ok && owned == partition {
			return true
		}
	}
	return false
}

// Members returns the group's members in join order.
func (m *Membership) Members(key GroupKey) []Member {
	if group := m.groups[key]; group != nil {
		return group.members
	}
	return nil
}

func (g *groupMembers) find(client ClientID) int {
	for index := range g.members {
		if g.members[index].Client == client {
			return index
		}
	}
	return -1
}

func (g *groupMembers) rebalance(partitionCount uint32) {
	g.generation++
	for index := range g.members {
		g.members[index].ID = uint32(index)
		g.members[index].Partitions = g.members[index].Partitions[:0]
	}
	if len(g.members) == 0 {
		return
	}
	for partition := uint32(0); partition < partitionCount; partition++ {
		member := &g.members[int(partition)%len(g.members)]
		member.Partitions = append(member.Partitions, partition)
	}
	invariant.Assert(len(g.members[0].Partitions) >= len(g.members[len(g.members)-1].Partitions), "round-robin deals evenly")
}
