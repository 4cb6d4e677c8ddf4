package engine

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestCacheSharedModel drives two caches on one budget with a seeded mix
// of held journals (some with a batch too large, so the hold fails and
// is undone), inserts, partial Drains and Trims, with a populator on one
// of them. Method: a released journal is overwritten at once, so a
// record served from a freed journal shows; after every step each live
// sequence returns exactly its bytes, a sequence returns nil only once
// it died, Stats counts exactly the live records and their bytes, and
// the claimed total matches both capacities and stays within the limit
// plus one share; Release frees every journal and
// gives every byte back.
func TestCacheSharedModel(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		random := rand.New(rand.NewPCG(seed, seed*7))
		budget := NewCacheBudget(int64(256<<10) << random.IntN(4))
		caches := []*Cache{NewCache(budget, 2), NewCache(budget, 2)}
		wants := []map[uint64][]byte{{}, {}}
		live := map[*byte]bool{}
		release := func(data []byte) {
			if !live[&data[0]] {
				t.Fatalf("seed %d: journal freed twice", seed)
			}
			delete(live, &data[0])
			for i := range data {
				data[i] = 0xEE // poison
			}
		}
		for index, c := range caches {
			if random.IntN(2) == 0 {
				c.SetWake(func() {})
			}
			if index == 0 && random.IntN(2) == 0 {
				c.PopulateAhead()
			}
		}
		for step := range 2000 {
			which := random.IntN(2)
			c, want := caches[which], wants[which]
			switch op := random.IntN(10); {
			case op < 4 && c.wake != nil:
				data, batches := randomJournal(random, c.recordBytesMax()+c.recordBytesMax()/8, byte(step))
				first, ok := c.hold(data, release, batches)
				if ok {
					live[&data[0]] = true
					for index := range batches {
						want[first+uint64(index)] = bytes.Clone(data[batches[index].at : batches[index].at+batches[index].length])
					}
				} else {
					for s := range want {
						if s >= c.sequenceHead {
							delete(want, s)
						}
					}
				}
			case op < 6:
				record := bytes.Repeat([]byte{byte(step)}, 1+random.IntN(c.recordBytesMax()))
				record[0] = byte(seed)
				if s, ok := c.insert(record); ok {
					want[s] = record
				}
			case op < 8:
				c.Drain(random.IntN(128 << 10))
			default:
				c.Trim()
			}
			for s, record := range want {
				got := c.get(s)
				if got == nil {
					if s >= c.sequenceTail && s < c.sequenceHead {
						t.Fatalf("seed %d step %d: live sequence %d returns nil", seed, step, s)
					}
					delete(want, s)
					continue
				}
				if !bytes.Equal(got, record) {
					t.Fatalf("seed %d step %d: sequence %d returns other bytes (held %d)", seed, step, s, c.entries[s%uint64(len(c.entries))].journal)
				}
			}
			liveBytes := int64(0)
			for _, record := range want {
				liveBytes += int64(len(record))
			}
			if stats := c.Stats(); stats.Bytes != liveBytes || stats.Records != uint64(len(want)) {
				t.Fatalf("seed %d step %d: stats count %d records of %d bytes, %d of %d live", seed, step,
					stats.Records, stats.Bytes, len(want), liveBytes)
			}
			total := int64(caches[0].capacityBytes + caches[1].capacityBytes)
			if budget.UsedBytes() != total || total > budget.limitBytes+int64(caches[0].fairBytes) {
				t.Fatalf("seed %d: used %d, capacities %d", seed, budget.UsedBytes(), total)
			}
		}
		for _, c := range caches {
			c.Release()
			if stats := c.Stats(); stats.Bytes != 0 || stats.Records != 0 {
				t.Fatalf("seed %d: stats %+v after Release", seed, stats)
			}
		}
		if len(live) != 0 || budget.UsedBytes() != 0 {
			t.Fatalf("seed %d: %d journals live, %d bytes used after Release", seed, len(live), budget.UsedBytes())
		}
	}
}
