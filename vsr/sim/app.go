package sim

import (
	"encoding/binary"
	"errors"
)

// app is the application a replica drives: a running hash of every applied
// op, standing in for partitions and offsets. Two replicas that applied the
// same ops in the same order have the same hash.
type app struct {
	applied uint64
	hash    uint64
	padding int // filler bytes in a snapshot, so transfers span many chunks
}

var errSnapshot = errors.New("sim: snapshot corrupt")

func (a *app) apply(op uint64, checksum uint32, client, request uint64, body []byte) {
	a.applied = op
	h := a.hash ^ op
	h = mix(h ^ uint64(checksum))
	h = mix(h ^ client ^ request<<32)
	for _, b := range body {
		h = (h ^ uint64(b)) * 0x100000001b3
	}
	a.hash = mix(h)
}

// Snapshot implements vsr.Snapshotter.
func (a *app) Snapshot(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, a.applied)
	dst = binary.LittleEndian.AppendUint64(dst, a.hash)
	for i := range a.padding {
		dst = append(dst, byte(mix(a.hash+uint64(i))))
	}
	return dst
}

// restore installs a snapshot; the filler must be exactly what Snapshot
// wrote for that state, so a chunk out of place is caught.
func (a *app) restore(op uint64, snapshot []byte) error {
	if len(snapshot) != 16+a.padding || binary.LittleEndian.Uint64(snapshot) != op {
		return errSnapshot
	}
	hash := binary.LittleEndian.Uint64(snapshot[8:])
	for i, b := range snapshot[16:] {
		if b != byte(mix(hash+uint64(i))) {
			return errSnapshot
		}
	}
	a.applied = op
	a.hash = hash
	return nil
}

// mix is the splitmix64 finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
