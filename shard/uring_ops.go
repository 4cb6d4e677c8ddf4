package shard

import "github.com/whippetio/whippet/internal/invariant"

// uringOps holds the io_uring backend's ops in flight by token without
// hashing: one slice per token kind, indexed by the token's slot (a
// connection's or a file op's, both dense and reused), each entry keeping
// its whole token so that a slot's later owner never finds an earlier
// op. A completion costs two index operations instead of a map lookup
// and a delete.
type uringOps struct {
	kinds [tokenKindsMax][]uringOpSlot
}

type uringOpSlot struct {
	token uint64
	op    *uringOp
}

// tokenKindsMax is one past the largest tokenKind.
const tokenKindsMax = int(tokenRecvInto) + 1

// get returns the op in flight under token, or nil.
func (t *uringOps) get(token uint64) *uringOp {
	kind, _, slot := splitToken(token)
	if int(kind) >= tokenKindsMax {
		return nil
	}
	slots := t.kinds[kind]
	if int(slot) >= len(slots) || slots[slot].token != token {
		return nil
	}
	return slots[slot].op
}

// put records op under token, which has none in flight.
func (t *uringOps) put(token uint64, op *uringOp) {
	kind, _, slot := splitToken(token)
	invariant.Assert(int(kind) < tokenKindsMax, "an op's token has a known kind")
	invariant.Assert(op != nil, "a tracked op exists")
	slots := t.kinds[kind]
	if int(slot) >= len(slots) {
		grown := make([]uringOpSlot, max(int(slot)+1, 2*len(slots), 64))
		copy(grown, slots)
		slots = grown
		t.kinds[kind] = slots
	}
	invariant.Assert(slots[slot].op == nil, "one op in flight per slot and kind")
	slots[slot] = uringOpSlot{token: token, op: op}
}

// remove forgets the op in flight under token.
func (t *uringOps) remove(token uint64) {
	kind, _, slot := splitToken(token)
	entry := &t.kinds[kind][slot]
	invariant.Assert(entry.token == token, "a removed op was tracked under its token")
	*entry = uringOpSlot{}
}

// each calls visit for every op in flight.
func (t *uringOps) each(visit func(op *uringOp)) {
	for kind := range t.kinds {
		for index := range t.kinds[kind] {
			if op := t.kinds[kind][index].op; op != nil {
				visit(op)
			}
		}
	}
}
