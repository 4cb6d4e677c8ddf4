package metadata

import (
	"slices"

	"github.com/whippetio/whippet/internal/invariant"
)

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

// Membership tracks which sessions are members of which groups and which
// partitions each may poll (PROTOCOL.md §9.1, IGGY-SERVER-NOTES §4).
// Leaves and partition count changes rebalance eagerly: partitions are
// dealt round-robin over the members in join order. A join rebalances
// cooperatively: unowned partitions and the excess of over-assigned
// members go to the members below their share, but a partition with
// in-flight data (polled past the group's committed offset) stays with its
// owner, who may commit but no longer poll it, until the owner commits
// what it polled or revocationTicks pass. Every change bumps the group's
// generation (0 before the first join). It is not logged: memberships are
// per session and end with the process.
type Membership struct {
	groups          map[GroupKey]*groupMembers
	revocationTicks uint64
}

type groupMembers struct {
	members    []Member
	generation uint64
	// polled and committed are per partition id: the last offset a poll
	// served and the group's stored offset.
	polled    map[uint32]uint64
	committed map[uint32]uint64
	revoking  []revocation
}

// revocation is a partition leaving its owner once drained.
type revocation struct {
	partition    uint32
	target       ClientID
	deadlineTick uint64
}

// NewMembership returns an empty table; a pending revocation completes
// after revocationTicks even if the owner never commits.
func NewMembership(revocationTicks uint64) *Membership {
	return &Membership{groups: make(map[GroupKey]*groupMembers), revocationTicks: revocationTicks}
}

func (m *Membership) group(key GroupKey) *groupMembers {
	group := m.groups[key]
	if group == nil {
		group = &groupMembers{polled: make(map[uint32]uint64), committed: make(map[uint32]uint64)}
		m.groups[key] = group
	}
	return group
}

// Join adds client to the group (no change when already a member) with a
// cooperative rebalance over partitionCount partitions, and returns the
// generation.
func (m *Membership) Join(key GroupKey, client ClientID, partitionCount uint32, nowTick uint64) uint64 {
	group := m.group(key)
	if group.find(client) >= 0 {
		return group.generation
	}
	group.members = append(group.members, Member{ID: uint32(len(group.members)), Client: client})
	if len(group.members) == 1 {
		group.dealAll(partitionCount)
		return group.generation
	}
	group.cooperative(partitionCount, nowTick+m.revocationTicks)
	return group.generation
}

// Leave removes client and rebalances eagerly; false when not a member.
func (m *Membership) Leave(key GroupKey, client ClientID, partitionCount uint32) bool {
	group := m.groups[key]
	if group == nil {
		return false
	}
	index := group.find(client)
	if index < 0 {
		return false
	}
	group.members = slices.Delete(group.members, index, index+1)
	group.dealAll(partitionCount)
	return true
}

// Rebalance redeals the group's partitions eagerly after a partition count
// change.
func (m *Membership) Rebalance(key GroupKey, partitionCount uint32) {
	if group := m.groups[key]; group != nil {
		group.dealAll(partitionCount)
	}
}

// Drop forgets a deleted group.
func (m *Membership) Drop(key GroupKey) { delete(m.groups, key) }

// Polled records the last offset a poll of the group served from
// partition.
func (m *Membership) Polled(key GroupKey, partition uint32, offset uint64) {
	group := m.group(key)
	group.polled[partition] = max(group.polled[partition], offset)
}

// Committed records the group's stored offset for partition and completes
// a revocation the commit drains.
func (m *Membership) Committed(key GroupKey, partition uint32, offset uint64) {
	group := m.group(key)
	group.committed[partition] = offset
	group.settle(0) // tick 0: only what is drained moves

}

// Tick completes the revocations whose deadline passed.
func (m *Membership) Tick(nowTick uint64) {
	for _, group := range m.groups {
		group.settle(nowTick)
	}
}

// Assignment returns the partitions client may poll and the generation;
// ok is false when the client is not a member.
func (m *Membership) Assignment(key GroupKey, client ClientID) (partitions []uint32, generation uint64, ok bool) {
	group := m.groups[key]
	if group == nil {
		return nil, 0, false
	}
	index := group.find(client)
	if index < 0 {
		return nil, group.generation, false
	}
	for _, partition := range group.members[index].Partitions {
		if !group.isRevoking(partition) {
			partitions = append(partitions, partition)
		}
	}
	return partitions, group.generation, true
}

// CanPoll reports whether client may poll partition: it owns it and the
// partition is not being handed over.
func (m *Membership) CanPoll(key GroupKey, client ClientID, partition uint32) bool {
	group := m.groups[key]
	return group != nil && group.owner(partition) == group.find(client) && group.find(client) >= 0 &&
		!group.isRevoking(partition)
}

// CanCommit reports whether client may store the group's offset of
// partition: it owns it, pending hand-over included.
func (m *Membership) CanCommit(key GroupKey, client ClientID, partition uint32) bool {
	group := m.groups[key]
	return group != nil && group.find(client) >= 0 && group.owner(partition) == group.find(client)
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

func (g *groupMembers) owner(partition uint32) int {
	for index := range g.members {
		if slices.Contains(g.members[index].Partitions, partition) {
			return index
		}
	}
	return -1
}

func (g *groupMembers) isRevoking(partition uint32) bool {
	for _, pending := range g.revoking {
		if pending.partition == partition {
			return true
		}
	}
	return false
}

// dealAll is the eager rebalance: round-robin in join order.
func (g *groupMembers) dealAll(partitionCount uint32) {
	g.generation++
	g.revoking = g.revoking[:0]
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
	invariant.Assert(len(g.members[0].Partitions) >= len(g.members[len(g.members)-1].Partitions),
		"round-robin deals evenly")
}
