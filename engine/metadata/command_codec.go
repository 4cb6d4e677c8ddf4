package metadata

import (
	"encoding/binary"
	"errors"

	flatbuffers "github.com/google/flatbuffers/go"
)

// ErrMalformedCommand: bytes handed to DecodeCommand are not a command
// record EncodeCommand wrote.
var ErrMalformedCommand = errors.New("metadata: malformed command record")

// EncodeCommand returns command as a metadata log record (flatbuffers
// fbs.Record, index 0): the body a cluster proposes through the metadata
// replication group. The caller owns the returned bytes. A command past
// the record limit is ErrCommandTooLarge: no store would log it.
func EncodeCommand(command *Command) ([]byte, error) {
	encoded := encodeRecord(flatbuffers.NewBuilder(256+len(command.Name)+len(command.Secret)), 0, command)
	if len(encoded) > recordBytesMax {
		return nil, ErrCommandTooLarge
	}
	return encoded, nil
}

// DecodeCommand reads a record EncodeCommand wrote. The bytes come from
// peers (checksummed by the replication protocol), so every offset is
// bounds-checked before the flatbuffers accessors run; a record that
// fails is ErrMalformedCommand. The command does not alias raw.
func DecodeCommand(raw []byte) (Command, error) {
	if len(raw) > recordBytesMax || !verifyRecord(raw) {
		return Command{}, ErrMalformedCommand
	}
	_, command := decodeRecord(raw)
	return command, nil
}

// fieldKind is how a verified table field is laid out.
type fieldKind uint8

const (
	fieldScalar fieldKind = iota
	fieldBytes            // string or [ubyte]
	fieldTable
	fieldTables // vector of tables
)

// field is one field a verified table may hold: its slot, layout, the
// scalar's size, and the nested table's fields.
type field struct {
	slot   int
	kind   fieldKind
	bytes  int
	nested []field
}

// The record layout of metadata.fbs (slots in declaration order).
var (
	optionFields = []field{{slot: 0, kind: fieldBytes}, {slot: 1, bytes: 1}, {slot: 2, kind: fieldBytes}}
	configFields = []field{{slot: 0, bytes: 8}, {slot: 1, bytes: 8}, {slot: 2, bytes: 8}, {slot: 3, bytes: 1},
		{slot: 4, bytes: 1}, {slot: 5, bytes: 1}, {slot: 6, bytes: 4}, {slot: 7, bytes: 8},
		{slot: 8, kind: fieldTables, nested: optionFields}}
	commandFields = []field{{slot: 0, bytes: 1}, {slot: 1, bytes: 4}, {slot: 2, bytes: 4}, {slot: 3, bytes: 4},
		{slot: 4, bytes: 4}, {slot: 5, bytes: 4}, {slot: 6, kind: fieldBytes}, {slot: 7, kind: fieldBytes},
		{slot: 8, bytes: 1}, {slot: 9, bytes: 1}, {slot: 10, kind: fieldBytes}, {slot: 11, bytes: 8},
		{slot: 12, bytes: 8}, {slot: 13, kind: fieldTable, nested: configFields}, {slot: 14, bytes: 1},
		{slot: 15, bytes: 1}, {slot: 16, bytes: 8}}
	recordFields = []field{{slot: 0, bytes: 8}, {slot: 1, kind: fieldTable, nested: commandFields}}
)

// The snapshot layout of metadata.fbs.
var (
	partitionFields = []field{{slot: 0, bytes: 4}, {slot: 1, bytes: 8}}
	groupFields     = []field{{slot: 0, bytes: 4}, {slot: 1, kind: fieldBytes}}
	topicFields     = []field{{slot: 0, bytes: 4}, {slot: 1, kind: fieldBytes}, {slot: 2, bytes: 8},
		{slot: 3, kind: fieldTable, nested: configFields}, {slot: 4, kind: fieldTables, nested: partitionFields},
		{slot: 5, kind: fieldTables, nested: groupFields}, {slot: 6, bytes: 4}, {slot: 7, bytes: 8}}
	streamFields = []field{{slot: 0, bytes: 4}, {slot: 1, kind: fieldBytes}, {slot: 2, bytes: 8},
		{slot: 3, kind: fieldTables, nested: topicFields}}
	tokenFields = []field{{slot: 0, kind: fieldBytes}, {slot: 1, kind: fieldBytes}, {slot: 2, bytes: 8}}
	userFields  = []field{{slot: 0, bytes: 4}, {slot: 1, kind: fieldBytes}, {slot: 2, kind: fieldBytes},
		{slot: 3, bytes: 1}, {slot: 4, bytes: 1}, {slot: 5, kind: fieldBytes}, {slot: 6, bytes: 8},
		{slot: 7, kind: fieldTables, nested: tokenFields}}
	snapshotFields = []field{{slot: 0, bytes: 8}, {slot: 1, kind: fieldTables, nested: streamFields},
		{slot: 2, kind: fieldTables, nested: userFields}, {slot: 3, bytes: 8}}
)

// verifyDepthMax bounds nesting (snapshot, stream, topic, config, option).
const verifyDepthMax = 5

func verifyRecord(raw []byte) bool { return verifyRoot(raw, recordFields) }

// verifySnapshot checks a snapshot payload before decodeSnapshot reads it:
// one installed by state transfer comes from a peer.
func verifySnapshot(raw []byte) bool { return verifyRoot(raw, snapshotFields) }

func verifyRoot(raw []byte, fields []field) bool {
	if len(raw) < 4 {
		return false
	}
	return verifyTable(raw, int(binary.LittleEndian.Uint32(raw)), fields, 0)
}

// verifyTable checks that the table at position and every field the
// accessors may read lie within raw.
func verifyTable(raw []byte, position int, fields []field, depth int) bool {
	if depth >= verifyDepthMax || position < 0 || position+4 > len(raw) {
		return false
	}
	vtable := position - int(int32(binary.LittleEndian.Uint32(raw[position:])))
	if vtable < 0 || vtable+4 > len(raw) {
		return false
	}
	vtableBytes := int(binary.LittleEndian.Uint16(raw[vtable:]))
	tableBytes := int(binary.LittleEndian.Uint16(raw[vtable+2:]))
	if vtableBytes < 4 || vtableBytes%2 != 0 || vtable+vtableBytes > len(raw) || position+tableBytes > len(raw) {
		return false
	}
	for _, f := range fields {
		entry := 4 + 2*f.slot
		if entry+2 > vtableBytes {
			continue // absent: the accessor returns the default
		}
		offset := int(binary.LittleEndian.Uint16(raw[vtable+entry:]))
		if offset == 0 {
			continue
		}
		if !verifyField(raw, position+offset, f, depth) {
			return false
		}
	}
	return true
}

func verifyField(raw []byte, at int, f field, depth int) bool {
	if f.kind == fieldScalar {
		return at+f.bytes <= len(raw)
	}
	if at+4 > len(raw) {
		return false
	}
	target := at + int(binary.LittleEndian.Uint32(raw[at:]))
	switch f.kind {
	case fieldTable:
		return verifyTable(raw, target, f.nested, depth+1)
	case fieldBytes:
		return target+4 <= len(raw) && target+4+int(binary.LittleEndian.Uint32(raw[target:])) <= len(raw)
	}
	if target+4 > len(raw) {
		return false
	}
	count := int(binary.LittleEndian.Uint32(raw[target:]))
	if count > (len(raw)-target-4)/4 {
		return false
	}
	for index := 0; index < count; index++ {
		element := target + 4 + 4*index
		if !verifyTable(raw, element+int(binary.LittleEndian.Uint32(raw[element:])), f.nested, depth+1) {
			return false
		}
	}
	return true
}
