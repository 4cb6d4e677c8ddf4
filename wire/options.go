package wire

import (
	"encoding/binary"
	"math"
	"unicode/utf8"
)

// HeaderKind types a TLV key or value (§1.7): user headers and option
// blocks share it.
type HeaderKind uint8

// Header kinds.
const (
	HeaderRaw     HeaderKind = 1
	HeaderString  HeaderKind = 2
	HeaderBool    HeaderKind = 3
	HeaderInt8    HeaderKind = 4
	HeaderInt16   HeaderKind = 5
	HeaderInt32   HeaderKind = 6
	HeaderInt64   HeaderKind = 7
	HeaderInt128  HeaderKind = 8
	HeaderUint8   HeaderKind = 9
	HeaderUint16  HeaderKind = 10
	HeaderUint32  HeaderKind = 11
	HeaderUint64  HeaderKind = 12
	HeaderUint128 HeaderKind = 13
	HeaderFloat32 HeaderKind = 14
	HeaderFloat64 HeaderKind = 15
)

var headerFixedBytes = [...]int{
	HeaderBool: 1, HeaderInt8: 1, HeaderInt16: 2, HeaderInt32: 4, HeaderInt64: 8, HeaderInt128: 16,
	HeaderUint8: 1, HeaderUint16: 2, HeaderUint32: 4, HeaderUint64: 8, HeaderUint128: 16,
	HeaderFloat32: 4, HeaderFloat64: 8,
}

// FixedBytes returns the only legal length of a fixed-size kind, or 0 for
// Raw, String and unknown kinds.
func (k HeaderKind) FixedBytes() int {
	if int(k) < len(headerFixedBytes) {
		return headerFixedBytes[k]
	}
	return 0
}

// Known reports whether the kind is one of §1.7.
func (k HeaderKind) Known() bool { return k >= HeaderRaw && k <= HeaderFloat64 }

// HeaderValue is one typed TLV: a key or a value. Value is a view.
type HeaderValue struct {
	Kind  HeaderKind
	Value []byte
}

// HeaderEntry is one key/value pair of a user-header or option block.
type HeaderEntry struct {
	Key   HeaderValue
	Value HeaderValue
}

// Headers is a TLV block (§1.7): user headers of a message, or options of
// a stream, topic or user.
type Headers []HeaderEntry

// StringHeader returns a String key with a String value.
func StringHeader(key, value string) HeaderEntry {
	return HeaderEntry{HeaderValue{HeaderString, []byte(key)}, HeaderValue{HeaderString, []byte(value)}}
}

// Uint64Header returns a String key with a Uint64 value.
func Uint64Header(key string, value uint64) HeaderEntry {
	encoded := binary.LittleEndian.AppendUint64(nil, value)
	return HeaderEntry{HeaderValue{HeaderString, []byte(key)}, HeaderValue{HeaderUint64, encoded}}
}

// Uint32Header returns a String key with a Uint32 value.
func Uint32Header(key string, value uint32) HeaderEntry {
	encoded := binary.LittleEndian.AppendUint32(nil, value)
	return HeaderEntry{HeaderValue{HeaderString, []byte(key)}, HeaderValue{HeaderUint32, encoded}}
}

// BoolHeader returns a String key with a Bool value.
func BoolHeader(key string, value bool) HeaderEntry {
	encoded := []byte{0}
	if value {
		encoded[0] = 1
	}
	return HeaderEntry{HeaderValue{HeaderString, []byte(key)}, HeaderValue{HeaderBool, encoded}}
}

// Lookup returns the value of the first entry whose key is the String key.
func (h Headers) Lookup(key string) (HeaderValue, bool) {
	for _, entry := range h {
		if entry.Key.Kind == HeaderString && string(entry.Key.Value) == key {
			return entry.Value, true
		}
	}
	return HeaderValue{}, false
}

// Uint64 returns the value of an unsigned kind widened to u64.
func (v HeaderValue) Uint64() (uint64, bool) {
	switch {
	case v.Kind == HeaderUint8 && len(v.Value) == 1:
		return uint64(v.Value[0]), true
	case v.Kind == HeaderUint16 && len(v.Value) == 2:
		return uint64(binary.LittleEndian.Uint16(v.Value)), true
	case v.Kind == HeaderUint32 && len(v.Value) == 4:
		return uint64(binary.LittleEndian.Uint32(v.Value)), true
	case v.Kind == HeaderUint64 && len(v.Value) == 8:
		return binary.LittleEndian.Uint64(v.Value), true
	}
	return 0, false
}

// Bool returns a Bool value.
func (v HeaderValue) Bool() (bool, bool) {
	if v.Kind != HeaderBool || len(v.Value) != 1 || v.Value[0] > 1 {
		return false, false
	}
	return v.Value[0] == 1, true
}

// Float64 returns a Float32 or Float64 value widened to f64.
func (v HeaderValue) Float64() (float64, bool) {
	switch {
	case v.Kind == HeaderFloat32 && len(v.Value) == 4:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(v.Value))), true
	case v.Kind == HeaderFloat64 && len(v.Value) == 8:
		return math.Float64frombits(binary.LittleEndian.Uint64(v.Value)), true
	}
	return 0, false
}

// EncodedSize returns the block's wire size (no length prefix).
func (h Headers) EncodedSize() int {
	size := 0
	for _, entry := range h {
		size += 2*tlvPrefixBytes + len(entry.Key.Value) + len(entry.Value.Value)
	}
	return size
}

// Encode writes the block (no length prefix).
func (h Headers) Encode(dst []byte) int {
	size := h.EncodedSize()
	e := newEncoder(dst, size)
	e.headers(h)
	return e.done(size)
}

// Decode reads TLV pairs until src ends, appending to h (whose capacity is
// reused). It enforces the rules common to user headers and options: kinds
// non-zero, lengths 1..255, fixed-size kinds at their size, whole pairs.
func (h *Headers) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	*h = (*h)[:0]
	d.headersTo(h, len(src))
	return d.finish()
}

func (e *encoder) headers(h Headers) {
	for _, entry := range h {
		e.tlv(entry.Key)
		e.tlv(entry.Value)
	}
}

func (e *encoder) tlv(value HeaderValue) {
	e.u8(uint8(value.Kind))
	e.u32(uint32(len(value.Value)))
	e.bytes(value.Value)
}

// headersTo decodes TLV pairs from d until end.
func (d *decoder) headersTo(h *Headers, end int) {
	for d.err == nil && d.pos < end {
		key := d.tlv("header key")
		value := d.tlv("header value")
		if d.err == nil && d.pos > end {
			d.fail("header block overruns its length")
		}
		*h = append(*h, HeaderEntry{Key: key, Value: value})
	}
}

func (d *decoder) tlv(what string) HeaderValue {
	start := d.pos
	kind := HeaderKind(d.u8(what))
	length := d.u32(what)
	if d.err != nil {
		return HeaderValue{}
	}
	if kind == 0 {
		d.failAt(start, what+": kind zero")
		return HeaderValue{}
	}
	if length == 0 || length > HeaderValueBytesMax {
		d.failAt(start, what+": length outside 1..255")
		return HeaderValue{}
	}
	if fixed := kind.FixedBytes(); fixed != 0 && int(length) != fixed {
		d.failAt(start, what+": length does not match its kind")
		return HeaderValue{}
	}
	return HeaderValue{Kind: kind, Value: d.bytes(int(length), what)}
}

// optionsTail decodes an option block that runs to the end of a request
// body and applies the option rules of §1.7.
func (d *decoder) optionsTail() Headers {
	if d.err != nil || d.remaining() == 0 {
		return nil
	}
	start := d.pos
	if d.remaining() > OptionsBlockBytesMax {
		d.fail("option block larger than 100000 bytes")
		return nil
	}
	var options Headers
	d.headersTo(&options, len(d.src))
	d.checkOptions(start, options)
	return options
}

// optionsBlock decodes a u32-length-prefixed option block of a reply.
func (d *decoder) optionsBlock() Headers {
	length := d.u32("options length")
	if d.err != nil || length == 0 {
		return nil
	}
	if uint64(length) > uint64(d.remaining()) {
		d.need(int(min(uint64(length), FrameBytesMax)), "options block")
		return nil
	}
	start := d.pos
	var options Headers
	d.headersTo(&options, start+int(length))
	d.checkOptions(start, options)
	return options
}

func (d *decoder) checkOptions(start int, options Headers) {
	if d.err != nil {
		return
	}
	if len(options) > OptionsEntriesMax {
		d.failAt(start, "more than 1024 options")
		return
	}
	for i, entry := range options {
		if entry.Key.Kind != HeaderString || !utf8.Valid(entry.Key.Value) {
			d.failAt(start, "option key is not a UTF-8 String")
			return
		}
		for _, earlier := range options[:i] {
			if string(earlier.Key.Value) == string(entry.Key.Value) {
				d.failAt(start, "duplicate option key")
				return
			}
		}
	}
}

func (e *encoder) optionsBlock(options Headers) {
	e.u32(uint32(options.EncodedSize()))
	e.headers(options)
}

// optionsBlockSize is the size of a u32-length-prefixed option block.
func optionsBlockSize(options Headers) int { return 4 + options.EncodedSize() }

// CheckNoOptions applies the option catalog of streams and users, which
// is empty (§6.2): any key is refused with StatusUnsupportedOptionKey.
func CheckNoOptions(options Headers) error {
	if len(options) > 0 {
		return StatusUnsupportedOptionKey
	}
	return nil
}
