package shard

import "testing"

// TestURingOpsByToken: an op is found under its exact token only; a
// slot's later owner (another generation) and another kind on the same
// slot see their own ops; removing frees the slot for reuse.
func TestURingOpsByToken(t *testing.T) {
	var table uringOps
	recv, send := &uringOp{kind: tokenRecv}, &uringOp{kind: tokenSend}
	first := makeToken(tokenRecv, 1, 700)
	table.put(first, recv)
	table.put(makeToken(tokenSend, 1, 700), send)
	if table.get(first) != recv || table.get(makeToken(tokenSend, 1, 700)) != send {
		t.Fatal("ops not found under their tokens")
	}
	if table.get(makeToken(tokenRecv, 2, 700)) != nil || table.get(makeToken(tokenRecv, 1, 701)) != nil {
		t.Fatal("an op found under another generation's or slot's token")
	}
	if table.get(uringWakeData) != nil {
		t.Fatal("an internal user_data names an op")
	}
	table.remove(first)
	if table.get(first) != nil {
		t.Fatal("a removed op is still found")
	}
	later := makeToken(tokenRecv, 2, 700)
	table.put(later, recv)
	count := 0
	table.each(func(*uringOp) { count++ })
	if table.get(later) != recv || count != 2 {
		t.Fatalf("after reuse: found %v, %d ops in flight; want the op and 2", table.get(later) != nil, count)
	}
}

// BenchmarkURingOps: track, find and untrack one op per completion, over
// 256 connections' receives, with the table and with the map it replaced.
func BenchmarkURingOps(b *testing.B) {
	tokens := make([]uint64, 256)
	for index := range tokens {
		tokens[index] = makeToken(tokenRecv, 3, uint32(index))
	}
	op := &uringOp{}
	b.Run("table", func(b *testing.B) {
		var table uringOps
		b.ReportAllocs()
		for b.Loop() {
			for _, token := range tokens {
				table.put(token, op)
			}
			for _, token := range tokens {
				if table.get(token) != op {
					b.Fatal("lost op")
				}
				table.remove(token)
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		table := make(map[uint64]*uringOp, 256)
		b.ReportAllocs()
		for b.Loop() {
			for _, token := range tokens {
				table[token] = op
			}
			for _, token := range tokens {
				if table[token] != op {
					b.Fatal("lost op")
				}
				delete(table, token)
			}
		}
	})
}
