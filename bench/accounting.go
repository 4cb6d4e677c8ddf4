package bench

import "strconv"

// Accounting says whether every message was read as often as it should
// be: once per offset consumer of its stream and once per group reading
// it. Producer counts include the warmup.
type Accounting struct {
	MessagesSent     uint64          `json:"messages_sent"`
	MessagesConsumed uint64          `json:"messages_consumed"`
	MessagesExpected uint64          `json:"messages_expected"`
	Exact            bool            `json:"exact"`
	Streams          []StreamAccount `json:"streams"`
}

// StreamAccount is one stream's ledger: what its producers had
// acknowledged and what each of its readers read.
type StreamAccount struct {
	Stream  string          `json:"stream"`
	Sent    uint64          `json:"sent"`
	Readers []ReaderAccount `json:"readers,omitempty"`
}

// ReaderAccount is what one offset consumer or one group read of a stream.
type ReaderAccount struct {
	Reader   string `json:"reader"`
	Expected uint64 `json:"expected"`
	Consumed uint64 `json:"consumed"`
}

// account builds the ledger after the actors stopped.
func account(state *runState, actors []*actor) Accounting {
	var ledger Accounting
	ledger.Streams = make([]StreamAccount, len(state.targets))
	for index := range ledger.Streams {
		ledger.Streams[index] = StreamAccount{Stream: StreamName(index), Sent: state.produced[index].Load()}
		ledger.MessagesSent += ledger.Streams[index].Sent
	}
	for _, actor := range actors {
		if !actor.plan.Consumes || actor.reader.group != nil {
			continue
		}
		stream := actor.reader.stream
		addReader(&ledger, stream, ReaderAccount{Reader: actor.plan.Kind.String() + "-" + strconv.Itoa(actor.plan.ID),
			Expected: actor.readTarget(), Consumed: actor.reader.consumed})
	}
	for index, group := range state.groups {
		expected := group.target
		stream := state.plan.Groups[index].Stream
		if state.config.Kind.HasProducers() {
			expected = state.produced[stream].Load()
		}
		addReader(&ledger, stream, ReaderAccount{Reader: GroupName(index), Expected: expected,
			Consumed: group.consumed.Load()})
	}
	ledger.Exact = true
	for _, stream := range ledger.Streams {
		for _, reader := range stream.Readers {
			ledger.Exact = ledger.Exact && reader.Consumed == reader.Expected
		}
	}
	return ledger
}

func addReader(ledger *Accounting, stream int, reader ReaderAccount) {
	ledger.Streams[stream].Readers = append(ledger.Streams[stream].Readers, reader)
	ledger.MessagesExpected += reader.Expected
	ledger.MessagesConsumed += reader.Consumed
}
