package metadata

import "slices"

// cooperative moves partitions toward an even share after a join:
// unowned ones go straight to members below their share, and each
// over-assigned member gives up its excess (highest ids first); an excess
// partition with in-flight data is only marked for revocation.
func (g *groupMembers) cooperative(partitionCount uint32, deadlineTick uint64) {
	g.generation++
	// Hand-overs still pending are planned again: the shares changed.
	g.revoking = g.revoking[:0]
	shareMin := int(partitionCount) / len(g.members)
	extra := int(partitionCount) % len(g.members)
	share := func(index int) int {
		if index < extra {
			return shareMin + 1
		}
		return shareMin
	}
	var free, draining []uint32
	for partition := uint32(0); partition < partitionCount; partition++ {
		if g.owner(partition) < 0 {
			free = append(free, partition)
		}
	}
	for index := range g.members {
		free, draining = g.giveUpExcess(index, share(index), free, draining)
	}
	for index := range g.members {
		member := &g.members[index]
		for len(member.Partitions)+g.revokingTo(member.Client) < share(index) {
			switch {
			case len(free) > 0:
				member.Partitions = append(member.Partitions, free[0])
				free = free[1:]
			case len(draining) > 0:
				g.revoking = append(g.revoking, revocation{partition: draining[0], target: member.Client, deadlineTick: deadlineTick})
				draining = draining[1:]
			default:
				return
			}
		}
	}
}

// giveUpExcess takes a member's partitions above its share (highest ids
// first, skipping those already being handed over): drained ones become
// free at once, in-flight ones draining.
func (g *groupMembers) giveUpExcess(index, share int, free, draining []uint32) ([]uint32, []uint32) {
	member := &g.members[index]
	excess := len(member.Partitions) - g.revokingFrom(index) - share
	for position := len(member.Partitions) - 1; position >= 0 && excess > 0; position-- {
		partition := member.Partitions[position]
		if g.isRevoking(partition) {
			continue
		}
		excess--
		if g.inFlight(partition) {
			draining = append(draining, partition)
			continue
		}
		member.Partitions = slices.Delete(member.Partitions, position, position+1)
		free = append(free, partition)
	}
	return free, draining
}

// inFlight reports whether the group polled partition past its commit.
func (g *groupMembers) inFlight(partition uint32) bool {
	polled, wasPolled := g.polled[partition]
	if !wasPolled {
		return false
	}
	committed, wasCommitted := g.committed[partition]
	return !wasCommitted || committed < polled
}

func (g *groupMembers) revokingFrom(index int) int {
	count := 0
	for _, pending := range g.revoking {
		if g.owner(pending.partition) == index {
			count++
		}
	}
	return count
}

func (g *groupMembers) revokingTo(client ClientID) int {
	count := 0
	for _, pending := range g.revoking {
		if pending.target == client {
			count++
		}
	}
	return count
}

// settle hands over every pending partition that is drained or whose
// deadline is at or before nowTick.
func (g *groupMembers) settle(nowTick uint64) {
	kept := g.revoking[:0]
	moved := false
	for _, pending := range g.revoking {
		target := g.find(pending.target)
		if target >= 0 && (g.inFlight(pending.partition) && pending.deadlineTick > nowTick) {
			kept = append(kept, pending)
			continue
		}
		if source := g.owner(pending.partition); source >= 0 {
			g.members[source].Partitions = slices.DeleteFunc(g.members[source].Partitions,
				func(p uint32) bool { return p == pending.partition })
		}
		if target >= 0 {
			g.members[target].Partitions = append(g.members[target].Partitions, pending.partition)
		}
		moved = true
	}
	g.revoking = kept
	if moved {
		g.generation++
	}
}
