package shard

import "github.com/whippetio/whippet/internal/invariant"

// tokenKind says which part of a shard an op's completion goes to.
type tokenKind uint8

const (
	tokenAccept tokenKind = iota + 1
	tokenRecv
	tokenSend
	tokenFile
	tokenTimeout
	tokenRecvInto
)

// A token is an op's user data: kind in the top 8 bits, then the 24-bit
// generation of the slot's owner, then a 32-bit slot (connection or file
// op). The generation lets an assertion catch a completion routed to a
// slot's later owner.
const (
	tokenKindShift = 56
	tokenGenShift  = 32
	tokenGenMask   = 1<<24 - 1
)

func makeToken(kind tokenKind, gen, slot uint32) uint64 {
	invariant.Assert(kind != 0, "token kind is set")
	return uint64(kind)<<tokenKindShift | uint64(gen&tokenGenMask)<<tokenGenShift | uint64(slot)
}

func splitToken(token uint64) (kind tokenKind, gen, slot uint32) {
	return tokenKind(token >> tokenKindShift), uint32(token>>tokenGenShift) & tokenGenMask, uint32(token)
}
