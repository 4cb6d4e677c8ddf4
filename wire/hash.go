package wire

import (
	"encoding/binary"
	"math/bits"

	"github.com/zeebo/xxh3"
)

// Checksum is XXH3-64 with seed 0, the hash of message frames and batch
// records (§8.4).
func Checksum(data []byte) uint64 { return xxh3.Hash(data) }

const (
	xxh32Prime1 uint32 = 2654435761
	xxh32Prime2 uint32 = 2246822519
	xxh32Prime3 uint32 = 3266489917
	xxh32Prime4 uint32 = 668265263
	xxh32Prime5 uint32 = 374761393
)

// XXH32 is the 32-bit xxHash that keys named consumers and picks a
// partition from a message key (§1.3, §1.5). The SDKs use seed 0.
func XXH32(data []byte, seed uint32) uint32 {
	length := uint32(len(data))
	var hash uint32
	if len(data) >= 16 {
		v1 := seed + xxh32Prime1 + xxh32Prime2
		v2 := seed + xxh32Prime2
		v3 := seed
		v4 := seed - xxh32Prime1
		for len(data) >= 16 {
			v1 = xxh32Round(v1, binary.LittleEndian.Uint32(data[0:]))
			v2 = xxh32Round(v2, binary.LittleEndian.Uint32(data[4:]))
			v3 = xxh32Round(v3, binary.LittleEndian.Uint32(data[8:]))
			v4 = xxh32Round(v4, binary.LittleEndian.Uint32(data[12:]))
			data = data[16:]
		}
		hash = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) +
			bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		hash = seed + xxh32Prime5
	}
	hash += length
	for len(data) >= 4 {
		hash += binary.LittleEndian.Uint32(data) * xxh32Prime3
		hash = bits.RotateLeft32(hash, 17) * xxh32Prime4
		data = data[4:]
	}
	for _, b := range data {
		hash += uint32(b) * xxh32Prime5
		hash = bits.RotateLeft32(hash, 11) * xxh32Prime1
	}
	hash ^= hash >> 15
	hash *= xxh32Prime2
	hash ^= hash >> 13
	hash *= xxh32Prime3
	hash ^= hash >> 16
	return hash
}

func xxh32Round(acc, input uint32) uint32 {
	acc += input * xxh32Prime2
	acc = bits.RotateLeft32(acc, 13)
	return acc * xxh32Prime1
}
