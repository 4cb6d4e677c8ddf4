package main

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"github.com/whippetio/whippet/wire"
)

// headerKinds maps the kind names of --header key:kind:value (iggy-cli's
// spelling) to wire kinds.
var headerKinds = map[string]wire.HeaderKind{
	"raw": wire.HeaderRaw, "string": wire.HeaderString, "bool": wire.HeaderBool,
	"int8": wire.HeaderInt8, "int16": wire.HeaderInt16, "int32": wire.HeaderInt32, "int64": wire.HeaderInt64,
	"uint8": wire.HeaderUint8, "uint16": wire.HeaderUint16, "uint32": wire.HeaderUint32, "uint64": wire.HeaderUint64,
	"float32": wire.HeaderFloat32, "float64": wire.HeaderFloat64,
}

var headerKindNames = func() map[wire.HeaderKind]string {
	names := map[wire.HeaderKind]string{wire.HeaderInt128: "int128", wire.HeaderUint128: "uint128"}
	for name, kind := range headerKinds {
		names[kind] = name
	}
	return names
}()

// parseHeader reads "key:kind:value" (kind defaults to string when the
// text has one colon). Raw values are hex.
func parseHeader(text string) (wire.HeaderEntry, error) {
	key, rest, found := strings.Cut(text, ":")
	if !found || key == "" {
		return wire.HeaderEntry{}, usagef("header %q: want key:kind:value or key:value", text)
	}
	kindName, value, typed := strings.Cut(rest, ":")
	if !typed {
		kindName, value = "string", rest
	}
	kind, known := headerKinds[strings.ToLower(kindName)]
	if !known {
		kind, value = wire.HeaderString, rest
	}
	encoded, err := encodeHeaderValue(kind, value)
	if err != nil {
		return wire.HeaderEntry{}, usagef("header %q: %v", text, err)
	}
	if len(encoded) == 0 || len(encoded) > 255 {
		return wire.HeaderEntry{}, usagef("header %q: value must be 1..255 bytes", text)
	}
	return wire.HeaderEntry{Key: wire.HeaderValue{Kind: wire.HeaderString, Value: []byte(key)},
		Value: wire.HeaderValue{Kind: kind, Value: encoded}}, nil
}

func encodeHeaderValue(kind wire.HeaderKind, text string) ([]byte, error) {
	switch kind {
	case wire.HeaderString:
		return []byte(text), nil
	case wire.HeaderRaw:
		return hex.DecodeString(strings.TrimPrefix(text, "0x"))
	case wire.HeaderBool:
		value, err := strconv.ParseBool(text)
		if err != nil {
			return nil, err
		}
		if value {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case wire.HeaderFloat32:
		value, err := strconv.ParseFloat(text, 32)
		return binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(value))), err
	case wire.HeaderFloat64:
		value, err := strconv.ParseFloat(text, 64)
		return binary.LittleEndian.AppendUint64(nil, math.Float64bits(value)), err
	case wire.HeaderInt8, wire.HeaderInt16, wire.HeaderInt32, wire.HeaderInt64:
		width := kind.FixedBytes()
		value, err := strconv.ParseInt(text, 10, width*8)
		return binary.LittleEndian.AppendUint64(nil, uint64(value))[:width], err
	default:
		width := kind.FixedBytes()
		value, err := strconv.ParseUint(text, 10, width*8)
		return binary.LittleEndian.AppendUint64(nil, value)[:width], err
	}
}

// headerText renders a typed value for tables and JSON.
func headerText(value wire.HeaderValue) string {
	bytes := value.Value
	switch value.Kind {
	case wire.HeaderString:
		return string(bytes)
	case wire.HeaderBool:
		flag, _ := value.Bool()
		return strconv.FormatBool(flag)
	case wire.HeaderFloat32, wire.HeaderFloat64:
		number, _ := value.Float64()
		return strconv.FormatFloat(number, 'g', -1, 64)
	case wire.HeaderInt8, wire.HeaderInt16, wire.HeaderInt32, wire.HeaderInt64:
		if len(bytes) == value.Kind.FixedBytes() {
			padded := make([]byte, 8)
			copy(padded, bytes)
			shift := uint(64 - 8*len(bytes))
			return strconv.FormatInt(int64(binary.LittleEndian.Uint64(padded)<<shift)>>shift, 10)
		}
	case wire.HeaderUint8, wire.HeaderUint16, wire.HeaderUint32, wire.HeaderUint64:
		if number, ok := value.Uint64(); ok {
			return strconv.FormatUint(number, 10)
		}
	}
	return "0x" + hex.EncodeToString(bytes)
}

type headerView struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// decodeHeaders renders a message's user-header block; a block that does
// not decode is shown raw rather than failing the whole poll.
func decodeHeaders(block []byte) (map[string]headerView, string) {
	if len(block) == 0 {
		return nil, ""
	}
	var headers wire.Headers
	if _, err := headers.Decode(block); err != nil {
		return nil, "0x" + hex.EncodeToString(block)
	}
	views := make(map[string]headerView, len(headers))
	parts := make([]string, 0, len(headers))
	for _, entry := range headers {
		key := headerText(entry.Key)
		view := headerView{Kind: headerKindNames[entry.Value.Kind], Value: headerText(entry.Value)}
		views[key] = view
		parts = append(parts, key+":"+view.Kind+":"+view.Value)
	}
	return views, strings.Join(parts, ",")
}
