package bench

import "strings"

// Kind is one of iggy-bench's benchmark kinds.
type Kind uint8

// The benchmark kinds, in iggy-bench's order.
const (
	KindPinnedProducer Kind = iota + 1
	KindPinnedConsumer
	KindPinnedProducerAndConsumer
	KindBalancedProducer
	KindBalancedConsumerGroup
	KindBalancedProducerAndConsumerGroup
	KindEndToEndProducingConsumer
	KindEndToEndProducingConsumerGroup
)

// kindInfo is what iggy-bench calls a kind in each of its vocabularies.
type kindInfo struct {
	command string // the subcommand, kebab case
	alias   string // the short subcommand
	enum    string // benchmark_kind in report.json
	token   string // the run directory name token (sic for bpcg)
}

var kindTable = [...]kindInfo{
	KindPinnedProducer:                   {"pinned-producer", "pp", "pinned_producer", "pinned_producer"},
	KindPinnedConsumer:                   {"pinned-consumer", "pc", "pinned_consumer", "pinned_consumer"},
	KindPinnedProducerAndConsumer:        {"pinned-producer-and-consumer", "ppc", "pinned_producer_and_consumer", "pinned_producer_and_consumer"},
	KindBalancedProducer:                 {"balanced-producer", "bp", "balanced_producer", "balanced_producer"},
	KindBalancedConsumerGroup:            {"balanced-consumer-group", "bcg", "balanced_consumer_group", "balanced_consumer_group"},
	KindBalancedProducerAndConsumerGroup: {"balanced-producer-and-consumer-group", "bpcg", "balanced_producer_and_consumer_group", "balanced_producer_and_consumer"},
	KindEndToEndProducingConsumer:        {"end-to-end-producing-consumer", "e2e", "end_to_end_producing_consumer", "end_to_end_producing_consumer"},
	KindEndToEndProducingConsumerGroup:   {"end-to-end-producing-consumer-group", "e2ecg", "end_to_end_producing_consumer_group", "end_to_end_producing_consumer_group"},
}

// Kinds returns every kind in iggy-bench's order.
func Kinds() []Kind {
	kinds := make([]Kind, 0, len(kindTable)-1)
	for kind := KindPinnedProducer; int(kind) < len(kindTable); kind++ {
		kinds = append(kinds, kind)
	}
	return kinds
}

// ParseKind accepts a kind's subcommand name or alias.
func ParseKind(text string) (Kind, bool) {
	text = strings.ToLower(strings.TrimSpace(text))
	for _, kind := range Kinds() {
		info := kindTable[kind]
		if text == info.command || text == info.alias || text == info.enum {
			return kind, true
		}
	}
	return 0, false
}

// Valid reports whether kind is one of the constants.
func (k Kind) Valid() bool { return k >= KindPinnedProducer && int(k) < len(kindTable) }

// String is the kind's subcommand name.
func (k Kind) String() string {
	if !k.Valid() {
		return "unknown"
	}
	return kindTable[k].command
}

// Alias is the kind's short subcommand.
func (k Kind) Alias() string { return kindTable[k].alias }

// Enum is the kind as report.json spells it.
func (k Kind) Enum() string { return kindTable[k].enum }

// Token is the kind as run directory names spell it.
func (k Kind) Token() string { return kindTable[k].token }

// Pinned reports whether each actor owns its stream (one partition).
func (k Kind) Pinned() bool {
	return k == KindPinnedProducer || k == KindPinnedConsumer || k == KindPinnedProducerAndConsumer ||
		k == KindEndToEndProducingConsumer
}

// HasProducers reports whether the kind sends messages during the run.
func (k Kind) HasProducers() bool {
	return k != KindPinnedConsumer && k != KindBalancedConsumerGroup
}

// HasConsumers reports whether the kind polls messages during the run.
func (k Kind) HasConsumers() bool {
	return k != KindPinnedProducer && k != KindBalancedProducer
}

// ConsumerOnly reports whether the kind reads what an earlier run wrote.
func (k Kind) ConsumerOnly() bool { return !k.HasProducers() }

// UsesGroups reports whether consumers poll through consumer groups.
func (k Kind) UsesGroups() bool {
	return k == KindBalancedConsumerGroup || k == KindBalancedProducerAndConsumerGroup ||
		k == KindEndToEndProducingConsumerGroup
}

// EndToEnd reports whether consumer latency is measured from each batch's
// origin timestamp rather than per poll.
func (k Kind) EndToEnd() bool {
	return k == KindPinnedProducerAndConsumer || k == KindBalancedProducerAndConsumerGroup ||
		k == KindEndToEndProducingConsumer || k == KindEndToEndProducingConsumerGroup
}

// ProducerKind is the kind whose run fills the streams a consumer-only kind
// reads: pinned-consumer reads what pinned-producer wrote.
func (k Kind) ProducerKind() Kind {
	switch k {
	case KindPinnedConsumer:
		return KindPinnedProducer
	case KindBalancedConsumerGroup:
		return KindBalancedProducer
	}
	return k
}
