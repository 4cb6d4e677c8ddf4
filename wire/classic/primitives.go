package classic

import (
	"strconv"
	"unicode/utf8"

	"github.com/whippetio/whippet/internal/invariant"
)

// IdentifierKind tells a numeric id from a name.
type IdentifierKind uint8

// Identifier kinds (PROTOCOL-0.8.md §2.1).
const (
	IdentifierNumeric IdentifierKind = 1
	IdentifierString  IdentifierKind = 2
)

// Identifier names a stream, topic, group or user by id or by exact name.
// Decoded names are views into the request body.
type Identifier struct {
	Kind IdentifierKind
	ID   uint32
	Name []byte
}

// NumericIdentifier returns the identifier of id.
func NumericIdentifier(id uint32) Identifier {
	return Identifier{Kind: IdentifierNumeric, ID: id}
}

// NamedIdentifier returns the identifier of name.
func NamedIdentifier(name string) Identifier {
	return Identifier{Kind: IdentifierString, Name: []byte(name)}
}

// EncodedSize is the identifier's size on the wire.
func (id Identifier) EncodedSize() int {
	if id.Kind == IdentifierNumeric {
		return IdentifierNumericBytes
	}
	return 2 + len(id.Name)
}

func (id Identifier) check() error {
	switch id.Kind {
	case IdentifierNumeric:
		return nil
	case IdentifierString:
		if checkName(id.Name) != nil || !utf8.Valid(id.Name) {
			return ErrIdentifier
		}
		return nil
	}
	return ErrIdentifier
}

func appendIdentifier(dst []byte, id Identifier) []byte {
	if id.Kind == IdentifierNumeric {
		dst = append(dst, uint8(IdentifierNumeric), 4)
		return appendU32(dst, id.ID)
	}
	invariant.Assert(id.Kind == IdentifierString, "identifier kind is numeric or string")
	dst = append(dst, uint8(IdentifierString))
	return appendName8(dst, id.Name)
}

func (r *reader) identifier(what string) Identifier {
	offset := r.pos
	kind := IdentifierKind(r.u8(what))
	length := int(r.u8(what))
	if r.err != nil {
		return Identifier{}
	}
	switch kind {
	case IdentifierNumeric:
		if length != 4 {
			r.invalid(what, offset+1, uint64(length), StatusInvalidCommand)
			return Identifier{}
		}
		return Identifier{Kind: kind, ID: r.u32(what)}
	case IdentifierString:
		if length == 0 {
			r.invalid(what, offset+1, 0, StatusInvalidFormat)
			return Identifier{}
		}
		name := r.take(length, what)
		if name != nil && !utf8.Valid(name) {
			r.invalid(what, offset+2, uint64(length), StatusInvalidFormat)
		}
		return Identifier{Kind: kind, Name: name}
	}
	r.invalid(what, offset, uint64(kind), StatusInvalidCommand)
	return Identifier{}
}

// nameUTF8 reads a name8 that must be valid UTF-8 (names, usernames, tokens).
func (r *reader) nameUTF8(what string) []byte {
	offset := r.pos
	name := r.name8(what)
	if name != nil && !utf8.Valid(name) {
		r.invalid(what, offset+1, uint64(len(name)), StatusInvalidFormat)
	}
	return name
}

// ConsumerKind tells a single consumer from a consumer group.
type ConsumerKind uint8

// Consumer kinds (§2.3).
const (
	ConsumerSingle ConsumerKind = 1
	ConsumerGroup  ConsumerKind = 2
)

// Consumer is [kind u8][identifier].
type Consumer struct {
	Kind ConsumerKind
	ID   Identifier
}

func (c Consumer) check() error {
	if c.Kind != ConsumerSingle && c.Kind != ConsumerGroup {
		return ErrFieldRange
	}
	return c.ID.check()
}

func appendConsumer(dst []byte, c Consumer) []byte {
	dst = append(dst, uint8(c.Kind))
	return appendIdentifier(dst, c.ID)
}

func (r *reader) consumer(what string) Consumer {
	offset := r.pos
	kind := ConsumerKind(r.u8(what))
	if r.err == nil && kind != ConsumerSingle && kind != ConsumerGroup {
		r.invalid(what, offset, uint64(kind), StatusInvalidCommand)
	}
	return Consumer{Kind: kind, ID: r.identifier(what)}
}

// OptionalPartition is [flag u8][partition u32]; absent means partition 0 for
// a single consumer and "server chooses" for a group (§2.4).
type OptionalPartition struct {
	Present bool
	ID      uint32
}

// PartitionOf returns a present partition id.
func PartitionOf(id uint32) OptionalPartition { return OptionalPartition{Present: true, ID: id} }

func appendOptionalPartition(dst []byte, p OptionalPartition) []byte {
	invariant.Assert(p.Present || p.ID == 0, "absent partition carries id 0")
	dst = appendFlag(dst, p.Present)
	return appendU32(dst, p.ID)
}

func (r *reader) optionalPartition(what string) OptionalPartition {
	present := r.flag(what)
	offset := r.pos
	id := r.u32(what)
	if r.err == nil && !present && id != 0 {
		r.invalid(what, offset, uint64(id), StatusInvalidCommand)
	}
	return OptionalPartition{Present: present, ID: id}
}

func (p OptionalPartition) check() error {
	if !p.Present && p.ID != 0 {
		return ErrFieldRange
	}
	return nil
}

// PartitioningKind selects how SendMessages picks its partition.
type PartitioningKind uint8

// Partitioning kinds (§2.5).
const (
	PartitioningBalanced    PartitioningKind = 1
	PartitioningPartitionID PartitioningKind = 2
	PartitioningMessagesKey PartitioningKind = 3
)

// Partitioning is [kind u8][len u8][value]. Key is a view for MessagesKey.
type Partitioning struct {
	Kind        PartitioningKind
	PartitionID uint32
	Key         []byte
}

// EncodedSize is the partitioning's size on the wire.
func (p Partitioning) EncodedSize() int {
	switch p.Kind {
	case PartitioningPartitionID:
		return 6
	case PartitioningMessagesKey:
		return 2 + len(p.Key)
	}
	return 2
}

func (p Partitioning) check() error {
	switch p.Kind {
	case PartitioningBalanced, PartitioningPartitionID:
		return nil
	case PartitioningMessagesKey:
		return checkName(p.Key)
	}
	return ErrFieldRange
}

func appendPartitioning(dst []byte, p Partitioning) []byte {
	switch p.Kind {
	case PartitioningPartitionID:
		dst = append(dst, uint8(p.Kind), 4)
		return appendU32(dst, p.PartitionID)
	case PartitioningMessagesKey:
		dst = append(dst, uint8(p.Kind))
		return appendName8(dst, p.Key)
	}
	invariant.Assert(p.Kind == PartitioningBalanced, "partitioning kind is 1, 2 or 3")
	return append(dst, uint8(p.Kind), 0)
}

func (r *reader) partitioning(what string) Partitioning {
	offset := r.pos
	kind := PartitioningKind(r.u8(what))
	length := int(r.u8(what))
	if r.err != nil {
		return Partitioning{}
	}
	switch {
	case kind == PartitioningBalanced && length == 0:
		return Partitioning{Kind: kind}
	case kind == PartitioningPartitionID && length == 4:
		return Partitioning{Kind: kind, PartitionID: r.u32(what)}
	case kind == PartitioningMessagesKey && length > 0:
		return Partitioning{Kind: kind, Key: r.take(length, what)}
	case kind < PartitioningBalanced || kind > PartitioningMessagesKey:
		r.invalid(what, offset, uint64(kind), StatusInvalidCommand)
	default:
		r.invalid(what, offset+1, uint64(length), StatusInvalidCommand)
	}
	return Partitioning{}
}

// PollingKind selects where a poll starts (§2.6).
type PollingKind uint8

// Polling kinds.
const (
	PollingOffset    PollingKind = 1
	PollingTimestamp PollingKind = 2
	PollingFirst     PollingKind = 3
	PollingLast      PollingKind = 4
	PollingNext      PollingKind = 5
)

// PollingStrategy is [kind u8][value u64]; Value is ignored by First, Last
// and Next but kept so the body re-encodes unchanged.
type PollingStrategy struct {
	Kind  PollingKind
	Value uint64
}

func (s PollingStrategy) check() error {
	if s.Kind < PollingOffset || s.Kind > PollingNext {
		return ErrFieldRange
	}
	return nil
}

func (r *reader) pollingStrategy(what string) PollingStrategy {
	offset := r.pos
	kind := PollingKind(r.u8(what))
	value := r.u64(what)
	if r.err == nil && (kind < PollingOffset || kind > PollingNext) {
		r.invalid(what, offset, uint64(kind), StatusInvalidCommand)
	}
	return PollingStrategy{Kind: kind, Value: value}
}

// String renders the identifier for logs: the number, or the quoted name.
func (id Identifier) String() string {
	if id.Kind == IdentifierNumeric {
		return strconv.FormatUint(uint64(id.ID), 10)
	}
	return strconv.Quote(string(id.Name))
}
