package classic

import (
	"encoding/binary"

	"github.com/whippetio/whippet/internal/invariant"
)

// Encoders append to a buffer the caller owns and never allocate when it has
// room. Request encoders check values that come from an application and
// return an error; reply encoders are fed validated server state and assert.

func appendU16(dst []byte, value uint16) []byte {
	return binary.LittleEndian.AppendUint16(dst, value)
}

func appendU32(dst []byte, value uint32) []byte {
	return binary.LittleEndian.AppendUint32(dst, value)
}

func appendU64(dst []byte, value uint64) []byte {
	return binary.LittleEndian.AppendUint64(dst, value)
}

func appendFlag(dst []byte, value bool) []byte {
	if value {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func checkName(name []byte) error {
	if len(name) == 0 || len(name) > NameBytesMax {
		return ErrNameLength
	}
	return nil
}

// appendName8 writes a validated name; the caller has run checkName.
func appendName8(dst []byte, name []byte) []byte {
	invariant.Assert(len(name) > 0, "name8 is not empty")
	invariant.Assert(len(name) <= NameBytesMax, "name8 fits its length byte")
	dst = append(dst, uint8(len(name)))
	return append(dst, name...)
}

// appendNameString is appendName8 for server-held names.
func appendNameString(dst []byte, name string) []byte {
	invariant.Assert(len(name) > 0, "stored name is not empty")
	invariant.Assert(len(name) <= NameBytesMax, "stored name fits its length byte")
	dst = append(dst, uint8(len(name)))
	return append(dst, name...)
}

func appendBytes8(dst []byte, value []byte) []byte {
	invariant.Assert(len(value) <= NameBytesMax, "bytes8 fits its length byte")
	dst = append(dst, uint8(len(value)))
	return append(dst, value...)
}

func appendStr32(dst []byte, value string) []byte {
	dst = appendU32(dst, uint32(len(value)))
	return append(dst, value...)
}

func appendStr32Bytes(dst []byte, value []byte) []byte {
	dst = appendU32(dst, uint32(len(value)))
	return append(dst, value...)
}
