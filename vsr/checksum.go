package vsr

import "hash/crc32"

// castagnoli is CRC-32C, hardware-accelerated on amd64 and arm64. It detects
// torn writes, bit rot and truncation; it is not a defence against an
// adversary, and the replica port is authenticated elsewhere.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum never returns zero, so zero can mean "no checksum known".
func checksum(data []byte) uint32 {
	sum := crc32.Checksum(data, castagnoli)
	if sum == 0 {
		return 1
	}
	return sum
}
