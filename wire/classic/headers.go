package classic

import "encoding/binary"

// HeaderKind is the kind byte of a user-header key or value (§2.7, the same
// TLV codec as 0.9).
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

// headerFixedBytes is the value size of each fixed-size kind (0 = variable),
// indexed by kind.
var headerFixedBytes = [...]int{0, 0, 0, 1, 1, 2, 4, 8, 16, 1, 2, 4, 8, 16, 4, 8}

// HeaderValueBytesMax bounds each key and value of a user header.
const HeaderValueBytesMax = 255

// HeaderEntry is one key/value pair; Key and Value are views.
type HeaderEntry struct {
	KeyKind   HeaderKind
	Key       []byte
	ValueKind HeaderKind
	Value     []byte
}

// HeaderIterator walks a user-header block without allocating. The 0.8
// server stores user headers unchecked; clients (the classic Go SDK) reject a
// bad block, so a server may call CheckUserHeaders to refuse it up front.
type HeaderIterator struct {
	reader reader
}

// UserHeaderEntries returns an iterator over raw, a user-header block.
func UserHeaderEntries(raw []byte) HeaderIterator { return HeaderIterator{reader: reader{buf: raw}} }

// Next returns the next pair; false at the end of the block or on an error,
// which Err then reports.
func (it *HeaderIterator) Next() (HeaderEntry, bool) {
	r := &it.reader
	if r.err != nil || r.remaining() == 0 {
		return HeaderEntry{}, false
	}
	keyKind, key := r.headerPart("user header key")
	valueKind, value := r.headerPart("user header value")
	if r.err != nil {
		return HeaderEntry{}, false
	}
	return HeaderEntry{KeyKind: keyKind, Key: key, ValueKind: valueKind, Value: value}, true
}

// Err is the first decode error met by Next, or nil.
func (it *HeaderIterator) Err() error { return it.reader.result() }

// CheckUserHeaders walks raw and returns the first error, or nil when every
// pair has known kinds, lengths 1..255 and fixed-size kinds of their size.
func CheckUserHeaders(raw []byte) error {
	it := UserHeaderEntries(raw)
	for _, ok := it.Next(); ok; _, ok = it.Next() {
	}
	return it.Err()
}

func (r *reader) headerPart(what string) (HeaderKind, []byte) {
	offset := r.pos
	kind := HeaderKind(r.u8(what))
	length := r.u32(what)
	if r.err != nil {
		return 0, nil
	}
	if kind < HeaderRaw || kind > HeaderFloat64 {
		r.invalid(what, offset, uint64(kind), StatusInvalidFormat)
		return 0, nil
	}
	fixed := headerFixedBytes[kind]
	if length == 0 || length > HeaderValueBytesMax || (fixed != 0 && int(length) != fixed) {
		r.invalid(what, offset+1, uint64(length), StatusInvalidFormat)
		return 0, nil
	}
	return kind, r.take(int(length), what)
}

// AppendUserHeader writes one pair; it refuses lengths outside 1..255 and
// fixed-size kinds of the wrong size.
func AppendUserHeader(dst []byte, entry HeaderEntry) ([]byte, error) {
	for _, part := range [2]struct {
		kind  HeaderKind
		value []byte
	}{{entry.KeyKind, entry.Key}, {entry.ValueKind, entry.Value}} {
		if part.kind < HeaderRaw || part.kind > HeaderFloat64 || len(part.value) == 0 ||
			len(part.value) > HeaderValueBytesMax {
			return dst, ErrFieldRange
		}
		if fixed := headerFixedBytes[part.kind]; fixed != 0 && len(part.value) != fixed {
			return dst, ErrFieldRange
		}
	}
	dst = append(dst, uint8(entry.KeyKind))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(entry.Key)))
	dst = append(dst, entry.Key...)
	dst = append(dst, uint8(entry.ValueKind))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(entry.Value)))
	return append(dst, entry.Value...), nil
}
