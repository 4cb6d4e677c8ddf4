package metadata

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestMembershipRoundRobin: the first join takes everything, a leave
// redeals round-robin in join order, every change bumps the generation.
func TestMembershipRoundRobin(t *testing.T) {
	m := NewMembership(100)
	key := GroupKey{StreamID: 1, TopicID: 2, GroupID: 0}
	a, b := ClientID{Low: 1}, ClientID{Low: 2}
	if generation := m.Join(key, a, 5, 0); generation != 1 {
		t.Fatalf("first join generation %d, want 1", generation)
	}
	if generation := m.Join(key, b, 5, 0); generation != 2 {
		t.Fatalf("second join generation %d", generation)
	}
	partitions, _, _ := m.Assignment(key, a)
	other, _, _ := m.Assignment(key, b)
	if fmt.Sprint(partitions, other) != "[0 1 2] [4 3]" {
		t.Fatalf("assignment after a join of nothing in flight: %v %v", partitions, other)
	}
	if !m.CanPoll(key, b, 3) || m.CanPoll(key, b, 2) {
		t.Fatal("polling rights do not follow the assignment")
	}
	if m.Join(key, a, 5, 0) != 2 {
		t.Fatal("a repeated join changed the generation")
	}
	if !m.Leave(key, a, 5) || m.Leave(key, a, 5) {
		t.Fatal("leave reports membership wrongly")
	}
	other, generation, ok := m.Assignment(key, b)
	if !ok || generation != 3 || fmt.Sprint(other) != "[0 1 2 3 4]" || m.Members(key)[0].ID != 0 {
		t.Fatalf("after leave: %v generation %d", other, generation)
	}
}

// TestMembershipCooperativeJoin: a partition the owner polled past the
// group's commit stays with it (commit allowed, polling not) until it
// commits what it polled; another one waits for the deadline.
func TestMembershipCooperativeJoin(t *testing.T) {
	m := NewMembership(100)
	key := GroupKey{GroupID: 7}
	a, b := ClientID{Low: 1}, ClientID{Low: 2}
	m.Join(key, a, 4, 0)
	m.Polled(key, 3, 50)
	m.Committed(key, 3, 20)
	m.Polled(key, 2, 10)
	m.Join(key, b, 4, 10)
	if m.CanPoll(key, a, 3) || !m.CanCommit(key, a, 3) || m.CanPoll(key, b, 3) || m.CanPoll(key, a, 2) {
		t.Fatal("an in-flight partition must stay committable, not pollable, with its owner")
	}
	m.Committed(key, 3, 50)
	if !m.CanPoll(key, b, 3) || m.CanCommit(key, a, 3) {
		t.Fatal("a drained partition must move to the new member")
	}
	m.Tick(109)
	if m.CanPoll(key, b, 2) {
		t.Fatal("moved before the deadline")
	}
	m.Tick(110)
	if !m.CanPoll(key, b, 2) {
		t.Fatal("not moved at the deadline")
	}
	partitions, _, _ := m.Assignment(key, a)
	if fmt.Sprint(partitions) != "[0 1]" {
		t.Fatalf("the first member keeps %v", partitions)
	}
}

// TestMembershipRandomOps: under seeded random joins, leaves, polls,
// commits and ticks, no partition ever has two owners, and once every
// hand-over settled each partition has exactly one owner and the shares
// differ by at most one.
func TestMembershipRandomOps(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -seed %d)", seed, seed)
	random := rand.New(rand.NewPCG(seed, 2))
	m := NewMembership(50)
	key := GroupKey{TopicID: 1}
	const partitions = 7
	tick := uint64(0)
	for step := 0; step < 5000; step++ {
		client := ClientID{Low: uint64(random.IntN(5))}
		partition := uint32(random.IntN(partitions))
		switch random.IntN(5) {
		case 0:
			m.Join(key, client, partitions, tick)
		case 1:
			m.Leave(key, client, partitions)
		case 2:
			m.Polled(key, partition, uint64(random.IntN(100)))
		case 3:
			m.Committed(key, partition, uint64(random.IntN(100)))
		default:
			tick += uint64(random.IntN(20))
			m.Tick(tick)
		}
		checkOwners(t, m.Members(key), partitions, false)
	}
	m.Tick(^uint64(0))
	checkOwners(t, m.Members(key), partitions, true)
}

func checkOwners(t *testing.T, members []Member, partitions int, settled bool) {
	t.Helper()
	owners := make([]int, partitions)
	least, most := partitions, 0
	for _, member := range members {
		for _, partition := range member.Partitions {
			owners[partition]++
		}
		least, most = min(least, len(member.Partitions)), max(most, len(member.Partitions))
	}
	for partition, count := range owners {
		if count > 1 || settled && len(members) > 0 && count != 1 {
			t.Fatalf("partition %d has %d owners", partition, count)
		}
	}
	if settled && len(members) > 0 && most-least > 1 {
		t.Fatalf("uneven shares after settling: %d..%d", least, most)
	}
}
