package wire

import (
	"encoding/binary"

	"github.com/whippetio/whippet/internal/invariant"
)

// Body is a request body or a reply payload that can be encoded. Encode
// writes exactly EncodedSize bytes at the start of dst and returns that
// count; dst must be at least that long (a shorter dst is a caller bug).
type Body interface {
	EncodedSize() int
	Encode(dst []byte) int
}

// Decoder is a Body that can also be decoded. Decode reads from the start
// of src and returns the bytes consumed. Slices in the decoded value are
// views into src: they stay valid only while src is not reused.
type Decoder interface {
	Body
	Decode(src []byte) (int, error)
}

// DecodeAll decodes src into value and fails unless every byte is used:
// bodies carry no length of their own, so trailing bytes are a malformed
// request, never padding.
func DecodeAll(value Decoder, src []byte) error {
	consumed, err := value.Decode(src)
	if err != nil {
		return err
	}
	if consumed != len(src) {
		return decodeFailure(consumed, "trailing bytes after the body")
	}
	return nil
}

// Uint128 is a 128-bit little-endian integer: client ids, message ids.
type Uint128 struct {
	Lo uint64
	Hi uint64
}

// IsZero reports whether both halves are zero.
func (u Uint128) IsZero() bool { return u.Lo == 0 && u.Hi == 0 }

// decoder is a cursor with a sticky error: after the first failure every
// read returns zero values, so a body decoder reads all its fields and
// checks err once. It never allocates on success.
type decoder struct {
	src []byte
	pos int
	err error
}

func (d *decoder) need(count int, what string) bool {
	if d.err != nil {
		return false
	}
	if count < 0 || len(d.src)-d.pos < count {
		d.err = &DecodeError{Offset: d.pos, Need: count, Have: len(d.src) - d.pos, What: what}
		return false
	}
	return true
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = decodeFailure(d.pos, what)
	}
}

func (d *decoder) failAt(offset int, what string) {
	if d.err == nil {
		d.err = decodeFailure(offset, what)
	}
}

func (d *decoder) remaining() int { return len(d.src) - d.pos }

func (d *decoder) u8(what string) uint8 {
	if !d.need(1, what) {
		return 0
	}
	value := d.src[d.pos]
	d.pos++
	return value
}

func (d *decoder) boolean(what string) bool {
	start := d.pos
	value := d.u8(what)
	if value > 1 {
		d.failAt(start, what+": boolean not 0 or 1")
	}
	return value == 1
}

func (d *decoder) u16(what string) uint16 {
	if !d.need(2, what) {
		return 0
	}
	value := binary.LittleEndian.Uint16(d.src[d.pos:])
	d.pos += 2
	return value
}

func (d *decoder) u32(what string) uint32 {
	if !d.need(4, what) {
		return 0
	}
	value := binary.LittleEndian.Uint32(d.src[d.pos:])
	d.pos += 4
	return value
}

func (d *decoder) u64(what string) uint64 {
	if !d.need(8, what) {
		return 0
	}
	value := binary.LittleEndian.Uint64(d.src[d.pos:])
	d.pos += 8
	return value
}

func (d *decoder) u128(what string) Uint128 {
	lo := d.u64(what)
	hi := d.u64(what)
	return Uint128{Lo: lo, Hi: hi}
}

func (d *decoder) bytes(count int, what string) []byte {
	if !d.need(count, what) {
		return nil
	}
	value := d.src[d.pos : d.pos+count : d.pos+count]
	d.pos += count
	return value
}

// slot8 reads [len u8][bytes] allowing any length, including 0.
func (d *decoder) slot8(what string) []byte {
	length := d.u8(what)
	return d.bytes(int(length), what)
}

// name8 reads [len u8][bytes] with length 1..255.
func (d *decoder) name8(what string) []byte {
	start := d.pos
	value := d.slot8(what)
	if d.err == nil && len(value) == 0 {
		d.failAt(start, what+": empty name")
	}
	return value
}

// str32 reads [len u32][bytes]; the length is checked against the input
// before anything is sliced.
func (d *decoder) str32(what string) []byte {
	length := d.u32(what)
	if d.err == nil && uint64(length) > uint64(d.remaining()) {
		d.need(int(min(uint64(length), uint64(FrameBytesMax))), what)
		return nil
	}
	return d.bytes(int(length), what)
}

func (d *decoder) rest() []byte {
	if d.err != nil {
		return nil
	}
	value := d.src[d.pos:len(d.src):len(d.src)]
	d.pos = len(d.src)
	return value
}

// count32 reads a u32 element count and checks that count elements of at
// least elementBytesMin each can fit in what remains, so a hostile count
// never sizes an allocation.
func (d *decoder) count32(elementBytesMin int, what string) int {
	start := d.pos
	count := d.u32(what)
	if d.err != nil {
		return 0
	}
	if uint64(count)*uint64(elementBytesMin) > uint64(d.remaining()) {
		d.err = &DecodeError{Offset: start, Need: int(min(uint64(count)*uint64(elementBytesMin), uint64(FrameBytesMax))),
			Have: d.remaining(), What: what + ": count exceeds the remaining bytes"}
		return 0
	}
	return int(count)
}

func (d *decoder) finish() (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	return d.pos, nil
}

// encoder writes at pos; every put asserts room, because the caller sized
// dst from EncodedSize and a short buffer is a bug, not an input error.
type encoder struct {
	dst []byte
	pos int
}

func (e *encoder) u8(value uint8) {
	e.dst[e.pos] = value
	e.pos++
}

func (e *encoder) boolean(value bool) {
	if value {
		e.u8(1)
	} else {
		e.u8(0)
	}
}

func (e *encoder) u16(value uint16) {
	binary.LittleEndian.PutUint16(e.dst[e.pos:], value)
	e.pos += 2
}

func (e *encoder) u32(value uint32) {
	binary.LittleEndian.PutUint32(e.dst[e.pos:], value)
	e.pos += 4
}

func (e *encoder) u64(value uint64) {
	binary.LittleEndian.PutUint64(e.dst[e.pos:], value)
	e.pos += 8
}

func (e *encoder) u128(value Uint128) {
	e.u64(value.Lo)
	e.u64(value.Hi)
}

func (e *encoder) bytes(value []byte) {
	e.pos += copy(e.dst[e.pos:], value)
}

func (e *encoder) zeros(count int) {
	clear(e.dst[e.pos : e.pos+count])
	e.pos += count
}

func (e *encoder) slot8(value []byte) {
	invariant.Assert(len(value) <= NameBytesMax, "wire: u8-prefixed string longer than 255 bytes")
	e.u8(uint8(len(value)))
	e.bytes(value)
}

func (e *encoder) str8(value string) {
	invariant.Assert(len(value) <= NameBytesMax, "wire: u8-prefixed string longer than 255 bytes")
	e.u8(uint8(len(value)))
	e.pos += copy(e.dst[e.pos:], value)
}

func (e *encoder) str32(value string) {
	e.u32(uint32(len(value)))
	e.pos += copy(e.dst[e.pos:], value)
}

func (e *encoder) done(size int) int {
	invariant.Assert(e.pos == size, "wire: encoded bytes differ from EncodedSize")
	return e.pos
}

func newEncoder(dst []byte, size int) encoder {
	invariant.Assert(len(dst) >= size, "wire: encode buffer shorter than EncodedSize")
	return encoder{dst: dst[:size]}
}
