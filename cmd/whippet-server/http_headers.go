package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/big"
	"sort"
	"strconv"

	"github.com/whippetio/whippet/wire"
)

// User headers over HTTP in Iggy 0.9's JSON shape (IggyMessage and the
// HTTP SendMessages serde): "user_headers" is an array of
// {"key": {"kind", "value"}, "value": {"kind", "value"}} entries, each
// value the base64 of the TLV's bytes (little-endian for numbers), or a
// base64 string of the whole block when it does not decode; a message
// without headers shows []. On send we also take, as a convenience, an
// object keyed by a string header key whose entries carry typed JSON
// values ({"kind": "uint64", "value": 7}; raw stays base64).

// httpHeaderKinds maps Iggy's kind names (§1.7) to wire kinds.
var httpHeaderKinds = map[string]wire.HeaderKind{
	"raw": wire.HeaderRaw, "string": wire.HeaderString, "bool": wire.HeaderBool,
	"int8": wire.HeaderInt8, "int16": wire.HeaderInt16, "int32": wire.HeaderInt32, "int64": wire.HeaderInt64,
	"int128": wire.HeaderInt128, "uint8": wire.HeaderUint8, "uint16": wire.HeaderUint16,
	"uint32": wire.HeaderUint32, "uint64": wire.HeaderUint64, "uint128": wire.HeaderUint128,
	"float32": wire.HeaderFloat32, "float64": wire.HeaderFloat64,
}

var httpHeaderKindNames = func() map[wire.HeaderKind]string {
	names := make(map[wire.HeaderKind]string, len(httpHeaderKinds))
	for name, kind := range httpHeaderKinds {
		names[kind] = name
	}
	return names
}()

// headerJSON is one entry of the header object.
type headerJSON struct {
	Kind  string          `json:"kind"`
	Value json.RawMessage `json:"value"`
}

// fieldJSON is one Iggy HeaderField: a kind and its bytes in base64.
type fieldJSON struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// entryJSON is one Iggy HeaderEntry.
type entryJSON struct {
	Key   fieldJSON `json:"key"`
	Value fieldJSON `json:"value"`
}

// parseHeadersJSON turns the JSON headers (Iggy's entry array, a base64
// block, the typed object, or null) into a TLV block; "" reason on
// success.
func parseHeadersJSON(raw json.RawMessage) ([]byte, string) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil, ""
	}
	if trimmed[0] == '[' {
		return parseHeaderEntries(trimmed)
	}
	if trimmed[0] == '"' {
		var text string
		if json.Unmarshal(trimmed, &text) != nil {
			return nil, "headers: not a string"
		}
		block, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return nil, "headers: a string must be a base64 header block"
		}
		return block, ""
	}
	var entries map[string]headerJSON
	if err := json.Unmarshal(trimmed, &entries); err != nil {
		return nil, "headers must be an object of {kind, value} entries"
	}
	keys := make([]string, 0, len(entries))
	for key := range entries {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	headers := make(wire.Headers, 0, len(entries))
	for _, key := range keys {
		if key == "" || len(key) > 255 {
			return nil, "headers: a key must be 1..255 bytes"
		}
		value, reason := parseHeaderValue(entries[key])
		if reason != "" {
			return nil, "headers[" + strconv.Quote(key) + "]: " + reason
		}
		headers = append(headers, wire.HeaderEntry{
			Key: wire.HeaderValue{Kind: wire.HeaderString, Value: []byte(key)}, Value: value})
	}
	block := make([]byte, headers.EncodedSize())
	headers.Encode(block)
	return block, ""
}

// parseHeaderEntries reads Iggy's array of {key, value} fields.
func parseHeaderEntries(raw json.RawMessage) ([]byte, string) {
	var entries []entryJSON
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, "user_headers must be an array of {key, value} entries"
	}
	if len(entries) == 0 {
		return nil, ""
	}
	headers := make(wire.Headers, 0, len(entries))
	for i, entry := range entries {
		key, reason := parseField(entry.Key)
		if reason == "" {
			var value wire.HeaderValue
			value, reason = parseField(entry.Value)
			headers = append(headers, wire.HeaderEntry{Key: key, Value: value})
		}
		if reason != "" {
			return nil, "user_headers[" + strconv.Itoa(i) + "]: " + reason
		}
	}
	block := make([]byte, headers.EncodedSize())
	headers.Encode(block)
	return block, ""
}

// parseField reads one {kind, value: base64} field and checks its size.
func parseField(field fieldJSON) (wire.HeaderValue, string) {
	kind, known := httpHeaderKinds[field.Kind]
	if !known {
		return wire.HeaderValue{}, "unknown kind " + strconv.Quote(field.Kind)
	}
	value, err := base64.StdEncoding.DecodeString(field.Value)
	if err != nil {
		return wire.HeaderValue{}, "a value must be base64"
	}
	if len(value) == 0 || len(value) > 255 {
		return wire.HeaderValue{}, "a key or value must be 1..255 bytes"
	}
	if width := kind.FixedBytes(); width != 0 && len(value) != width {
		return wire.HeaderValue{}, "a value has the wrong width for its kind"
	}
	return wire.HeaderValue{Kind: kind, Value: value}, ""
}

func parseHeaderValue(entry headerJSON) (wire.HeaderValue, string) {
	kind, known := httpHeaderKinds[entry.Kind]
	if !known {
		return wire.HeaderValue{}, "unknown kind " + strconv.Quote(entry.Kind)
	}
	encoded, reason := encodeHeaderJSON(kind, entry.Value)
	if reason != "" {
		return wire.HeaderValue{}, reason
	}
	if len(encoded) == 0 || len(encoded) > 255 {
		return wire.HeaderValue{}, "value must be 1..255 bytes"
	}
	if width := kind.FixedBytes(); width != 0 && len(encoded) != width {
		return wire.HeaderValue{}, "value has the wrong width for its kind"
	}
	return wire.HeaderValue{Kind: kind, Value: encoded}, ""
}

func encodeHeaderJSON(kind wire.HeaderKind, raw json.RawMessage) ([]byte, string) {
	switch kind {
	case wire.HeaderRaw, wire.HeaderString:
		var text string
		if json.Unmarshal(raw, &text) != nil {
			return nil, "value must be a string"
		}
		if kind == wire.HeaderString {
			return []byte(text), ""
		}
		decoded, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return nil, "a raw value must be base64"
		}
		return decoded, ""
	case wire.HeaderBool:
		var flag bool
		if json.Unmarshal(raw, &flag) != nil {
			return nil, "value must be true or false"
		}
		if flag {
			return []byte{1}, ""
		}
		return []byte{0}, ""
	case wire.HeaderFloat32, wire.HeaderFloat64:
		var number float64
		if json.Unmarshal(raw, &number) != nil {
			return nil, "value must be a number"
		}
		if kind == wire.HeaderFloat32 {
			return binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(number))), ""
		}
		return binary.LittleEndian.AppendUint64(nil, math.Float64bits(number)), ""
	}
	return encodeHeaderInteger(kind, raw)
}

// encodeHeaderInteger reads a JSON number (or decimal string) into the
// kind's little-endian two's-complement bytes, refusing out-of-range values.
func encodeHeaderInteger(kind wire.HeaderKind, raw json.RawMessage) ([]byte, string) {
	text := string(bytes.TrimSpace(raw))
	if len(text) > 0 && text[0] == '"' {
		if json.Unmarshal(raw, &text) != nil {
			return nil, "value must be an integer"
		}
	}
	value, ok := new(big.Int).SetString(text, 10)
	if !ok {
		return nil, "value must be an integer"
	}
	width := kind.FixedBytes()
	signed := kind >= wire.HeaderInt8 && kind <= wire.HeaderInt128
	bits := uint(width * 8)
	low, high := big.NewInt(0), new(big.Int).Lsh(big.NewInt(1), bits)
	if signed {
		low = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), bits-1))
		high = new(big.Int).Lsh(big.NewInt(1), bits-1)
	}
	if value.Cmp(low) < 0 || value.Cmp(high) >= 0 {
		return nil, "value is out of range for " + httpHeaderKindNames[kind]
	}
	if value.Sign() < 0 {
		value.Add(value, new(big.Int).Lsh(big.NewInt(1), bits))
	}
	bigEndian := value.FillBytes(make([]byte, width))
	for i, j := 0, len(bigEndian)-1; i < j; i, j = i+1, j-1 {
		bigEndian[i], bigEndian[j] = bigEndian[j], bigEndian[i]
	}
	return bigEndian, ""
}

// headersJSON renders a message's TLV block as Iggy does: the entry
// array ([] for none), or the block in base64 when it does not decode.
func headersJSON(block []byte) any {
	entries := []entryJSON{}
	if len(block) == 0 {
		return entries
	}
	var headers wire.Headers
	if _, err := headers.Decode(block); err != nil {
		return base64.StdEncoding.EncodeToString(block)
	}
	for _, entry := range headers {
		entries = append(entries, entryJSON{Key: fieldOf(entry.Key), Value: fieldOf(entry.Value)})
	}
	return entries
}

func fieldOf(value wire.HeaderValue) fieldJSON {
	name, known := httpHeaderKindNames[value.Kind]
	if !known {
		name = "raw"
	}
	return fieldJSON{Kind: name, Value: base64.StdEncoding.EncodeToString(value.Value)}
}
