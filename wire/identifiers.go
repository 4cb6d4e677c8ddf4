package wire

import (
	"strconv"
	"unicode/utf8"

	"github.com/whippetio/whippet/internal/invariant"
)

// IdentifierKind is the first byte of an identifier (§1.2).
type IdentifierKind uint8

// Identifier kinds.
const (
	IdentifierNumeric IdentifierKind = 1
	IdentifierString  IdentifierKind = 2
)

// Identifier names a stream, topic, group or user by number or by name
// (§1.2): [kind u8][len u8][value]. Name is a view into the decoded bytes.
type Identifier struct {
	Kind IdentifierKind
	ID   uint32
	Name []byte
}

// NumericID returns a numeric identifier.
func NumericID(id uint32) Identifier { return Identifier{Kind: IdentifierNumeric, ID: id} }

// NamedID returns a string identifier. The name must be 1..255 bytes.
func NamedID(name string) Identifier { return Identifier{Kind: IdentifierString, Name: []byte(name)} }

// IsNumeric reports whether the identifier is numeric.
func (id Identifier) IsNumeric() bool { return id.Kind == IdentifierNumeric }

// String renders the identifier for logs: "7" or "orders".
func (id Identifier) String() string {
	if id.Kind == IdentifierNumeric {
		return strconv.FormatUint(uint64(id.ID), 10)
	}
	return string(id.Name)
}

// Equal compares kind and value.
func (id Identifier) Equal(other Identifier) bool {
	if id.Kind != other.Kind {
		return false
	}
	if id.Kind == IdentifierNumeric {
		return id.ID == other.ID
	}
	return string(id.Name) == string(other.Name)
}

// Valid reports why the identifier cannot be encoded, or "" when it can.
func (id Identifier) Valid() string {
	switch id.Kind {
	case IdentifierNumeric:
		return ""
	case IdentifierString:
		if len(id.Name) == 0 || len(id.Name) > NameBytesMax {
			return "identifier name must be 1..255 bytes"
		}
		if !utf8.Valid(id.Name) {
			return "identifier name is not UTF-8"
		}
		return ""
	}
	return "identifier kind unknown"
}

// EncodedSize returns the identifier's wire size.
func (id Identifier) EncodedSize() int {
	if id.Kind == IdentifierNumeric {
		return 2 + NumericIdentifierBytes
	}
	return 2 + len(id.Name)
}

func (e *encoder) identifier(id Identifier) {
	e.u8(uint8(id.Kind))
	if id.Kind == IdentifierNumeric {
		e.u8(NumericIdentifierBytes)
		e.u32(id.ID)
		return
	}
	e.slot8(id.Name)
}

func (d *decoder) identifier(what string) Identifier {
	start := d.pos
	kind := IdentifierKind(d.u8(what))
	length := int(d.u8(what))
	if d.err != nil {
		return Identifier{}
	}
	switch kind {
	case IdentifierNumeric:
		if length != NumericIdentifierBytes {
			d.failAt(start, what+": numeric identifier length not 4")
			return Identifier{}
		}
		return Identifier{Kind: kind, ID: d.u32(what)}
	case IdentifierString:
		if length == 0 {
			d.failAt(start, what+": empty identifier name")
			return Identifier{}
		}
		return Identifier{Kind: kind, Name: d.bytes(length, what)}
	}
	d.failAt(start, what+": identifier kind unknown")
	return Identifier{}
}

// ConsumerKind is the first byte of a consumer (§1.3).
type ConsumerKind uint8

// Consumer kinds.
const (
	ConsumerSingle ConsumerKind = 1
	ConsumerGroup  ConsumerKind = 2
)

// Consumer is who polls or stores offsets: one consumer, or a consumer
// group named by its identifier (§1.3).
type Consumer struct {
	Kind ConsumerKind
	ID   Identifier
}

// EncodedSize returns the consumer's wire size.
func (c Consumer) EncodedSize() int { return 1 + c.ID.EncodedSize() }

// Key returns the number the reference server keys a consumer's offsets
// by (§1.3, §8.6): a numeric id itself, a name through XXH32 with seed 0.
func (c Consumer) Key() uint32 {
	if c.ID.Kind == IdentifierNumeric {
		return c.ID.ID
	}
	return XXH32(c.ID.Name, 0)
}

func (e *encoder) consumer(c Consumer) {
	e.u8(uint8(c.Kind))
	e.identifier(c.ID)
}

func (d *decoder) consumer() Consumer {
	start := d.pos
	kind := ConsumerKind(d.u8("consumer kind"))
	if d.err == nil && kind != ConsumerSingle && kind != ConsumerGroup {
		d.failAt(start, "consumer kind unknown")
	}
	return Consumer{Kind: kind, ID: d.identifier("consumer id")}
}

// OptionalPartition is the fixed 5-byte [flag u8][partition_id u32] of poll
// and offset requests (§1.4). Absent means partition 0 for one consumer.
type OptionalPartition struct {
	Present bool
	ID      uint32
}

// PartitionOf returns a present partition id.
func PartitionOf(id uint32) OptionalPartition { return OptionalPartition{Present: true, ID: id} }

const optionalPartitionBytes = 5

func (e *encoder) optionalPartition(p OptionalPartition) {
	e.boolean(p.Present)
	e.u32(p.ID)
}

func (d *decoder) optionalPartition() OptionalPartition {
	start := d.pos
	present := d.boolean("partition flag")
	id := d.u32("partition id")
	if d.err == nil && !present && id != 0 {
		d.failAt(start, "absent partition with a non-zero id")
	}
	return OptionalPartition{Present: present, ID: id}
}

// PartitioningKind is the first byte of SendMessages partitioning (§1.5).
type PartitioningKind uint8

// Partitioning kinds.
const (
	PartitioningBalanced    PartitioningKind = 1
	PartitioningPartitionID PartitioningKind = 2
	PartitioningMessagesKey PartitioningKind = 3
)

// Partitioning says how the server picks a partition (§1.5): round robin,
// an explicit id, or XXH32(key) modulo the partition count. Key is a view.
type Partitioning struct {
	Kind        PartitioningKind
	PartitionID uint32
	Key         []byte
}

// Balanced returns round-robin partitioning.
func Balanced() Partitioning { return Partitioning{Kind: PartitioningBalanced} }

// PartitionID returns partitioning to one partition.
func PartitionID(id uint32) Partitioning {
	return Partitioning{Kind: PartitioningPartitionID, PartitionID: id}
}

// MessagesKey returns key partitioning; the key must be 1..255 bytes.
func MessagesKey(key []byte) Partitioning {
	return Partitioning{Kind: PartitioningMessagesKey, Key: key}
}

// EncodedSize returns the partitioning's wire size.
func (p Partitioning) EncodedSize() int {
	switch p.Kind {
	case PartitioningPartitionID:
		return 2 + 4
	case PartitioningMessagesKey:
		return 2 + len(p.Key)
	}
	return 2
}

// Select returns the partition index for a topic with partitionCount
// partitions (§1.5); next is the round-robin cursor for Balanced, advanced
// by the caller. partitionCount must be positive.
func (p Partitioning) Select(partitionCount uint32, next uint32) uint32 {
	invariant.Assert(partitionCount > 0, "wire: selecting a partition of a topic without partitions")
	switch p.Kind {
	case PartitioningPartitionID:
		return p.PartitionID
	case PartitioningMessagesKey:
		return XXH32(p.Key, 0) % partitionCount
	}
	return next % partitionCount
}

func (e *encoder) partitioning(p Partitioning) {
	e.u8(uint8(p.Kind))
	switch p.Kind {
	case PartitioningPartitionID:
		e.u8(4)
		e.u32(p.PartitionID)
	case PartitioningMessagesKey:
		e.slot8(p.Key)
	default:
		e.u8(0)
	}
}

func (d *decoder) partitioning() Partitioning {
	start := d.pos
	kind := PartitioningKind(d.u8("partitioning kind"))
	length := int(d.u8("partitioning length"))
	if d.err != nil {
		return Partitioning{}
	}
	switch {
	case kind == PartitioningBalanced && length == 0:
		return Partitioning{Kind: kind}
	case kind == PartitioningPartitionID && length == 4:
		return Partitioning{Kind: kind, PartitionID: d.u32("partition id")}
	case kind == PartitioningMessagesKey && length > 0:
		return Partitioning{Kind: kind, Key: d.bytes(length, "messages key")}
	}
	d.failAt(start, "partitioning kind or length invalid")
	return Partitioning{}
}

// StrategyKind is the first byte of a polling strategy (§1.6).
type StrategyKind uint8

// Polling strategies.
const (
	StrategyOffset    StrategyKind = 1
	StrategyTimestamp StrategyKind = 2
	StrategyFirst     StrategyKind = 3
	StrategyLast      StrategyKind = 4
	StrategyNext      StrategyKind = 5
)

// Strategy is the fixed 9-byte [kind u8][value u64] polling strategy.
type Strategy struct {
	Kind  StrategyKind
	Value uint64
}

const strategyBytes = 9

// Valid reports whether the kind is one of §1.6.
func (s Strategy) Valid() bool { return s.Kind >= StrategyOffset && s.Kind <= StrategyNext }

// StartOffset resolves where a poll starts (§1.6) on a partition whose last
// committed offset is currentOffset, given the consumer's stored offset if
// any. Timestamp polls are resolved by the index, so ok is false for them.
func (s Strategy) StartOffset(currentOffset uint64, count uint32, stored uint64, hasStored bool) (offset uint64, ok bool) {
	switch s.Kind {
	case StrategyOffset:
		return s.Value, true
	case StrategyFirst:
		return 0, true
	case StrategyLast:
		if count == 0 || uint64(count)-1 >= currentOffset {
			return 0, true
		}
		return currentOffset - (uint64(count) - 1), true
	case StrategyNext:
		if !hasStored {
			return 0, true
		}
		return stored + 1, true
	}
	return 0, false
}
