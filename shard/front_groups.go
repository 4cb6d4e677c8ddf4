package shard

import (
	"slices"
	"time"

	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/internal/invariant"
)

// groupTable is the consumer-group membership of the whole server, kept by
// shard 0 and never logged: memberships belong to sessions and end with
// them (PROTOCOL.md §9.1). Members are keyed by the VSR client id of their
// session.
//
// Assignment is cooperative. The target deals partitions round-robin over
// the members in join order. When a change takes a partition from a
// member, the partition is first revoked: the old owner may still commit
// offsets for it but no longer poll it, and the new owner gets it once
// the old owner has synced (it learned its new assignment), left, or the
// rebalancing timeout passed. So two members never poll one partition.
type groupTable struct {
	groups  map[metadata.GroupKey]*groupState
	timeout time.Duration
	now     func() time.Time
}

type groupState struct {
	members      []*groupMember // join order
	generation   uint64
	partitionIDs []uint32 // the topic's partitions
}

type groupMember struct {
	id        uint32
	client    metadata.ClientID
	sessionID uint32   // the client registry's id of the member's session
	owned     []uint32 // pollable
	revoking  []revocation
}

type revocation struct {
	partition uint32
	deadline  time.Time
}

func newGroupTable(timeout time.Duration) *groupTable {
	return &groupTable{groups: make(map[metadata.GroupKey]*groupState), timeout: timeout, now: time.Now}
}

// join adds client to the group (no change when already a member).
func (t *groupTable) join(key metadata.GroupKey, client metadata.ClientID, sessionID uint32, partitionIDs []uint32) {
	group := t.groups[key]
	if group == nil {
		group = &groupState{}
		t.groups[key] = group
	}
	if group.find(client) >= 0 {
		return
	}
	group.members = append(group.members, &groupMember{id: group.freeMemberID(), client: client, sessionID: sessionID})
	group.partitionIDs = slices.Clone(partitionIDs)
	t.rebalance(group)
}

// leave removes client from the group; false when it was not a member.
func (t *groupTable) leave(key metadata.GroupKey, client metadata.ClientID) bool {
	group := t.groups[key]
	if group == nil {
		return false
	}
	index := group.find(client)
	if index < 0 {
		return false
	}
	group.members = slices.Delete(group.members, index, index+1)
	t.rebalance(group)
	return true
}

// leaveAll removes client from every group it is in.
func (t *groupTable) leaveAll(client metadata.ClientID) {
	for key := range t.groups {
		t.leave(key, client)
	}
}

// repartition follows a change of the topic's partitions.
func (t *groupTable) repartition(key metadata.GroupKey, partitionIDs []uint32) {
	if group := t.groups[key]; group != nil {
		group.partitionIDs = slices.Clone(partitionIDs)
		t.rebalance(group)
	}
}

// drop forgets a deleted group.
func (t *groupTable) drop(key metadata.GroupKey) { delete(t.groups, key) }

// synced completes the client's pending revocations: it now knows its
// assignment, so it stops polling what it lost.
func (t *groupTable) synced(key metadata.GroupKey, client metadata.ClientID) {
	group := t.groups[key]
	if group == nil {
		return
	}
	if index := group.find(client); index >= 0 && len(group.members[index].revoking) > 0 {
		group.members[index].revoking = group.members[index].revoking[:0]
		t.grant(group)
	}
}

// expire completes revocations whose deadline passed; it reports whether
// anything changed.
func (t *groupTable) expire() bool {
	now := t.now()
	changed := false
	for _, group := range t.groups {
		expired := false
		for _, member := range group.members {
			before := len(member.revoking)
			member.revoking = slices.DeleteFunc(member.revoking, func(r revocation) bool { return !now.Before(r.deadline) })
			expired = expired || len(member.revoking) != before
		}
		if expired {
			t.grant(group)
			changed = true
		}
	}
	return changed
}

// rebalance moves the group toward its target assignment.
func (t *groupTable) rebalance(group *groupState) {
	group.generation++
	target := group.target()
	deadline := t.now().Add(t.timeout)
	for i, member := range group.members {
		kept := member.owned[:0]
		for _, partition := range member.owned {
			if slices.Contains(target[i], partition) {
				kept = append(kept, partition)
			} else if slices.Contains(group.partitionIDs, partition) {
				member.revoking = append(member.revoking, revocation{partition: partition, deadline: deadline})
			}
		}
		member.owned = kept
		member.revoking = slices.DeleteFunc(member.revoking, func(r revocation) bool {
			return !slices.Contains(group.partitionIDs, r.partition)
		})
	}
	t.grant(group)
}

// grant gives each member the target partitions nobody else holds.
func (t *groupTable) grant(group *groupState) {
	target := group.target()
	for i, member := range group.members {
		for _, partition := range target[i] {
			if !slices.Contains(member.owned, partition) && !group.held(partition, member) {
				member.owned = append(member.owned, partition)
			}
		}
		slices.Sort(member.owned)
	}
}

// target deals the partitions round-robin over the members.
func (g *groupState) target() [][]uint32 {
	target := make([][]uint32, len(g.members))
	if len(g.members) == 0 {
		return target
	}
	for i, partition := range g.partitionIDs {
		target[i%len(g.members)] = append(target[i%len(g.members)], partition)
	}
	return target
}

// held reports whether a member other than except owns or is revoking
// partition.
func (g *groupState) held(partition uint32, except *groupMember) bool {
	for _, member := range g.members {
		if member == except {
			continue
		}
		if slices.Contains(member.owned, partition) {
			return true
		}
		for _, r := range member.revoking {
			if r.partition == partition {
				return true
			}
		}
	}
	return false
}

func (g *groupState) find(client metadata.ClientID) int {
	for i, member := range g.members {
		if member.client == client {
			return i
		}
	}
	return -1
}

func (g *groupState) freeMemberID() uint32 {
	for id := uint32(0); ; id++ {
		taken := false
		for _, member := range g.members {
			taken = taken || member.id == id
		}
		if !taken {
			return id
		}
	}
}

// snapshot copies every group into a view's table.
func (t *groupTable) snapshot(out map[metadata.GroupKey]*viewGroup) {
	for key, group := range t.groups {
		view := &viewGroup{generation: group.generation}
		for _, member := range group.members {
			copied := metadata.Member{ID: member.id, Client: member.client, Partitions: slices.Clone(member.owned)}
			view.members = append(view.members, copied)
			for _, r := range member.revoking {
				view.revoking = append(view.revoking, revokingPartition{client: member.client, partition: r.partition})
			}
		}
		invariant.Assert(len(view.members) == len(group.members), "front: a snapshot keeps every member")
		out[key] = view
	}
}

// revokingPartition is a partition its previous owner may still commit.
type revokingPartition struct {
	client    metadata.ClientID
	partition uint32
}

// member returns client's membership in the view's group, or nil.
func (g *viewGroup) member(client metadata.ClientID) *metadata.Member {
	if g == nil {
		return nil
	}
	for i := range g.members {
		if g.members[i].Client == client {
			return &g.members[i]
		}
	}
	return nil
}

// pollable reports whether client may poll partition.
func (g *viewGroup) pollable(client metadata.ClientID, partition uint32) bool {
	member := g.member(client)
	return member != nil && slices.Contains(member.Partitions, partition)
}

// committable reports whether client may store an offset for partition:
// it owns it, or is still handing it over.
func (g *viewGroup) committable(client metadata.ClientID, partition uint32) bool {
	if g.pollable(client, partition) {
		return true
	}
	for _, r := range g.revoking {
		if r.client == client && r.partition == partition {
			return true
		}
	}
	return false
}
