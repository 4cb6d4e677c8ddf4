package bench

// ActorKind is the role of one actor in the report.
type ActorKind uint8

// The actor roles, as report.json spells them.
const (
	ActorProducer ActorKind = iota + 1
	ActorConsumer
	ActorProducingConsumer
)

// String is the role as report.json spells it.
func (k ActorKind) String() string {
	switch k {
	case ActorProducer:
		return "producer"
	case ActorConsumer:
		return "consumer"
	case ActorProducingConsumer:
		return "producing_consumer"
	}
	return "unknown"
}

// groupKinds lists the roles in the order group metrics are reported.
var groupKinds = [...]ActorKind{ActorProducer, ActorConsumer, ActorProducingConsumer}

// ActorPlan is what one actor does: the stream it writes and reads, how it
// picks partitions, and the group it consumes through (-1 for none).
type ActorPlan struct {
	ID       int // 1-based within its role, as iggy-bench numbers actors
	Kind     ActorKind
	Produces bool
	Consumes bool
	Stream   int // 0-based bench stream index
	Balanced bool
	Group    int // 0-based group index, -1 when polling by offset
}

// GroupPlan is one consumer group: its stream and member count.
type GroupPlan struct {
	Stream  int
	Members int
}

// Plan is a run's topology, derived from a normalized, valid Config.
type Plan struct {
	Actors []ActorPlan
	Groups []GroupPlan
	// SharedProducerBudget and SharedConsumerBudget say whether the batch
	// budget is drawn by all actors of that side together (true) or given
	// to each actor (false).
	SharedProducerBudget bool
	SharedConsumerBudget bool
}

// NewPlan derives the actors of a run.
func NewPlan(config *Config) Plan {
	var plan Plan
	kind := config.Kind
	balanced := !kind.Pinned()
	for index := range config.ConsumerGroups {
		if kind.UsesGroups() {
			plan.Groups = append(plan.Groups, GroupPlan{Stream: index % config.Streams})
		}
	}
	switch kind {
	case KindEndToEndProducingConsumer:
		for index := range config.Producers {
			plan.Actors = append(plan.Actors, ActorPlan{ID: index + 1, Kind: ActorProducingConsumer,
				Produces: true, Consumes: true, Stream: index % config.Streams, Group: -1})
		}
	case KindEndToEndProducingConsumerGroup:
		plan.Actors = producingConsumerGroup(config, plan.Groups)
	default:
		for index := range producersOf(config) {
			plan.Actors = append(plan.Actors, ActorPlan{ID: index + 1, Kind: ActorProducer, Produces: true,
				Stream: index % config.Streams, Balanced: balanced, Group: -1})
		}
		for index := range consumersOf(config) {
			actor := ActorPlan{ID: index + 1, Kind: ActorConsumer, Consumes: true, Stream: index % config.Streams,
				Balanced: balanced, Group: -1}
			if kind.UsesGroups() {
				actor.Group = index % len(plan.Groups)
				actor.Stream = plan.Groups[actor.Group].Stream
			}
			plan.Actors = append(plan.Actors, actor)
		}
	}
	for _, actor := range plan.Actors {
		if actor.Group >= 0 {
			plan.Groups[actor.Group].Members++
		}
	}
	plan.SharedProducerBudget = balanced
	plan.SharedConsumerBudget = kind.UsesGroups()
	return plan
}

func producersOf(config *Config) int {
	if config.Kind.HasProducers() {
		return config.Producers
	}
	return 0
}

func consumersOf(config *Config) int {
	if config.Kind.HasConsumers() {
		return config.Consumers
	}
	return 0
}

// producingConsumerGroup gives max(P, C) actors: actor i produces when
// i < P and consumes through a group when i < C.
func producingConsumerGroup(config *Config, groups []GroupPlan) []ActorPlan {
	count := max(config.Producers, config.Consumers)
	actors := make([]ActorPlan, 0, count)
	for index := range count {
		actor := ActorPlan{ID: index + 1, Produces: index < config.Producers, Consumes: index < config.Consumers,
			Stream: index % config.Streams, Balanced: true, Group: -1}
		if actor.Consumes {
			actor.Group = index % len(groups)
		}
		switch {
		case actor.Produces && actor.Consumes:
			actor.Kind = ActorProducingConsumer
		case actor.Produces:
			actor.Kind = ActorProducer
		default:
			actor.Kind = ActorConsumer
		}
		actors = append(actors, actor)
	}
	return actors
}

// ConsumeStream is the stream an actor polls: its group's, or its own.
func (p *Plan) ConsumeStream(actor *ActorPlan) int {
	if actor.Group >= 0 {
		return p.Groups[actor.Group].Stream
	}
	return actor.Stream
}

// StreamsWithGroups returns, per stream, the groups that read it.
func (p *Plan) StreamsWithGroups(streams int) [][]int {
	byStream := make([][]int, streams)
	for index, group := range p.Groups {
		byStream[group.Stream] = append(byStream[group.Stream], index)
	}
	return byStream
}

// producerCount is the number of actors that send.
func (p *Plan) producerCount() int {
	count := 0
	for _, actor := range p.Actors {
		if actor.Produces {
			count++
		}
	}
	return count
}
