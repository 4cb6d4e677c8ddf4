package metadata

import (
	"fmt"
	"testing"
)

// TestMembershipRoundRobin: joins deal partitions round-robin in join
// order, every change bumps the generation, a leave redeals.
func TestMembershipRoundRobin(t *testing.T) {
	m := NewMembership()
	key := GroupKey{StreamID: 1, TopicID: 2, GroupID: 0}
	a, b := ClientID{Low: 1}, ClientID{Low: 2}
	if generation := m.Join(key, a, 5); generation != 1 {
		t.Fatalf("first join generation %d, want 1", generation)
	}
	if generation := m.Join(key, b, 5); generation != 2 {
		t.Fatalf("second join generation %d", generation)
	}
	partitions, _, _ := m.Assignment(key, a)
	other, _, _ := m.Assignment(key, b)
	if fmt.Sprint(partitions, other) != "[0 2 4] [1 3]" {
		t.Fatalf("assignment %v %v", partitions, other)
	}
	if !m.Owns(key, b, 3) || m.Owns(key, b, 2) {
		t.Fatal("ownership does not follow the assignment")
	}
	if m.Join(key, a, 5) != 2 {
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
