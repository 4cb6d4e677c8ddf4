package bench

import "testing"

func normalized(t *testing.T, kind Kind, adjust func(*Config)) *Config {
	t.Helper()
	config := DefaultConfig(kind)
	if adjust != nil {
		adjust(&config)
	}
	config.Normalize()
	if err := config.Validate(); err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	return &config
}

// TestPlanTopology checks who writes and reads which stream for each kind.
func TestPlanTopology(t *testing.T) {
	plan := NewPlan(normalized(t, KindPinnedProducerAndConsumer, func(c *Config) { c.Producers, c.Consumers = 3, 5 }))
	streams := map[ActorKind][]int{}
	for _, actor := range plan.Actors {
		streams[actor.Kind] = append(streams[actor.Kind], actor.Stream)
		if actor.Balanced || actor.Group != -1 {
			t.Errorf("ppc actor %+v must be pinned, without a group", actor)
		}
	}
	if want := []int{0, 1, 2}; !equalInts(streams[ActorProducer], want) {
		t.Errorf("ppc producer streams %v, want %v", streams[ActorProducer], want)
	}
	if want := []int{0, 1, 2, 0, 1}; !equalInts(streams[ActorConsumer], want) {
		t.Errorf("ppc consumer streams %v, want %v", streams[ActorConsumer], want)
	}
	if plan.SharedProducerBudget || plan.SharedConsumerBudget {
		t.Error("pinned budgets are per actor")
	}

	plan = NewPlan(normalized(t, KindBalancedProducerAndConsumerGroup, func(c *Config) {
		c.Streams, c.ConsumerGroups, c.Consumers = 2, 3, 6
	}))
	if len(plan.Groups) != 3 || plan.Groups[0].Stream != 0 || plan.Groups[1].Stream != 1 || plan.Groups[2].Stream != 0 {
		t.Fatalf("groups %+v", plan.Groups)
	}
	for _, group := range plan.Groups {
		if group.Members != 2 {
			t.Errorf("group %+v: 6 consumers over 3 groups give 2 members each", group)
		}
	}
	for _, actor := range plan.Actors {
		if actor.Consumes && plan.ConsumeStream(&actor) != plan.Groups[actor.Group].Stream {
			t.Errorf("consumer %d reads stream %d, its group's is %d", actor.ID, plan.ConsumeStream(&actor),
				plan.Groups[actor.Group].Stream)
		}
	}
	if !plan.SharedProducerBudget || !plan.SharedConsumerBudget {
		t.Error("balanced budgets are shared")
	}
}

// TestPlanProducingConsumerGroup checks e2ecg's max(P, C) actors.
func TestPlanProducingConsumerGroup(t *testing.T) {
	plan := NewPlan(normalized(t, KindEndToEndProducingConsumerGroup, func(c *Config) { c.Producers, c.Consumers = 2, 4 }))
	if len(plan.Actors) != 4 || plan.producerCount() != 2 {
		t.Fatalf("%d actors, %d producers", len(plan.Actors), plan.producerCount())
	}
	kinds := []ActorKind{ActorProducingConsumer, ActorProducingConsumer, ActorConsumer, ActorConsumer}
	for index, actor := range plan.Actors {
		if actor.Kind != kinds[index] || actor.Group != 0 {
			t.Errorf("actor %d: %+v", index, actor)
		}
	}
	plan = NewPlan(normalized(t, KindEndToEndProducingConsumer, func(c *Config) { c.Producers, c.Streams = 4, 2 }))
	for index, actor := range plan.Actors {
		if actor.Kind != ActorProducingConsumer || actor.Stream != index%2 || actor.Group != -1 {
			t.Errorf("e2e actor %+v", actor)
		}
	}
}

func TestPlanConsumerOnly(t *testing.T) {
	plan := NewPlan(normalized(t, KindPinnedConsumer, nil))
	if plan.producerCount() != 0 || len(plan.Actors) != 8 {
		t.Errorf("pc: %d producers, %d actors", plan.producerCount(), len(plan.Actors))
	}
	if KindPinnedConsumer.ProducerKind() != KindPinnedProducer || KindBalancedConsumerGroup.ProducerKind() != KindBalancedProducer {
		t.Error("consumer-only kinds are filled by their producer kinds")
	}
}

func equalInts(got, want []int) bool {
	if len(got) != len(want) {
		return false
	}
	for index := range got {
		if got[index] != want[index] {
			return false
		}
	}
	return true
}
