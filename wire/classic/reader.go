package classic

import "encoding/binary"

// reader walks an untrusted body. The first failure sticks: later reads
// return zero values, so a decoder reads every field and checks err once.
// Slices it returns are views into buf, never copies.
type reader struct {
	buf []byte
	pos int
	err *DecodeError
}

func (r *reader) fail(what string, need int) {
	if r.err == nil {
		r.err = &DecodeError{What: what, Offset: r.pos, Need: need, Have: len(r.buf) - r.pos, Status: StatusInvalidCommand}
	}
}

// invalid records a value that has the right size but is not allowed.
func (r *reader) invalid(what string, offset int, value uint64, status Status) {
	if r.err == nil {
		r.err = &DecodeError{What: what, Offset: offset, Value: value, Status: status}
	}
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.buf)-r.pos < n {
		r.fail(what, n)
		return nil
	}
	view := r.buf[r.pos : r.pos+n : r.pos+n]
	r.pos += n
	return view
}

func (r *reader) u8(what string) uint8 {
	if b := r.take(1, what); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16(what string) uint16 {
	if b := r.take(2, what); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32(what string) uint32 {
	if b := r.take(4, what); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64(what string) uint64 {
	if b := r.take(8, what); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// flag reads a one-byte boolean; only 0 and 1 are accepted, so an accepted
// body re-encodes to the same bytes.
func (r *reader) flag(what string) bool {
	offset := r.pos
	value := r.u8(what)
	if value > 1 {
		r.invalid(what, offset, uint64(value), StatusInvalidCommand)
	}
	return value == 1
}

// name8 reads [len u8][bytes] with len 1..255; a zero length is a failed
// validation (InvalidFormat), as in the 0.8 server.
func (r *reader) name8(what string) []byte {
	offset := r.pos
	length := int(r.u8(what))
	if r.err == nil && length == 0 {
		r.invalid(what, offset, 0, StatusInvalidFormat)
		return nil
	}
	return r.take(length, what)
}

// bytes8 reads [len u8][bytes] where 0 is allowed (password slots).
func (r *reader) bytes8(what string) []byte {
	length := int(r.u8(what))
	return r.take(length, what)
}

// str32 reads [len u32][bytes]; length 0 yields an empty, non-nil view.
func (r *reader) str32(what string) []byte {
	length := r.u32(what)
	if r.err != nil {
		return nil
	}
	if uint64(length) > uint64(len(r.buf)-r.pos) {
		r.fail(what, int(length))
		return nil
	}
	return r.take(int(length), what)
}

func (r *reader) remaining() int { return len(r.buf) - r.pos }

// result returns the sticky error as an error interface, nil when none.
func (r *reader) result() error {
	if r.err != nil {
		return r.err
	}
	return nil
}

// exact fails when bytes are left over: replies are built by a server and
// must be consumed whole.
func (r *reader) exact(what string) error {
	if r.err == nil && r.pos != len(r.buf) {
		r.invalid(what, r.pos, uint64(len(r.buf)-r.pos), StatusInvalidFormat)
	}
	return r.result()
}
