package engine

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// loan is a region the test borrowed and filled with its pattern.
type loan struct {
	data   []byte
	region uint64
	fill   byte
	steps  int // left before it ends
}

// TestCacheLendsRegions drives one cache with a seeded mix of inserts,
// held journals and lent regions, up to three lent at once and some kept
// for many steps, so the ring wraps onto them. Method: every lent region
// is block-aligned, filled with its own byte, and still holds it when
// its loan ends (nothing evicted or overwrote it meanwhile); an adopted
// batch is then served as a record with exactly its bytes, a dropped
// region by nothing; every other record keeps its bytes (the cache
// model); the pin count is the number of loans out, and evictions a
// loan stopped never count as pin-blocked (copying sends out would not
// free them); the loan that stopped one is the one asked to yield, once.
// Another cache's claims put the shared budget under
// pressure now and then, so Trim meets loans too. Release with a loan out keeps the region writable and the
// loan's end after it is harmless.
func TestCacheLendsRegions(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4, 5} {
		random := rand.New(rand.NewPCG(seed, 77))
		budget := NewCacheBudget(int64(512<<10) << random.IntN(3))
		cache := NewCache(budget, 2)
		cache.SetWake(func() {})
		want := map[uint64][]byte{}
		var loans []*loan
		var yielded []uint64
		adopted, dropped, refused, blockedSeen := 0, 0, 0, uint64(0)
		for step := range 4000 {
			switch choice := random.IntN(10); {
			case choice < 3 && len(loans) < 3:
				length := blockBytes * (1 + random.IntN(cache.recordBytesMax()/blockBytes))
				var l *loan
				data, region, ok := cache.lendJournal(length, func() { // the borrower gives it back next
					l.steps = 1
					yielded = append(yielded, l.region)
				})
				if !ok {
					refused++
					break
				}
				if !aligned(data) || len(data) != length {
					t.Fatalf("seed %d step %d: lent %d bytes (aligned %v) for %d", seed, step, len(data), aligned(data), length)
				}
				l = &loan{data: data, region: region, fill: byte(step) | 1, steps: 1 + random.IntN(60)}
				for index := range data {
					data[index] = l.fill
				}
				loans = append(loans, l)
			case choice < 6:
				record := bytes.Repeat([]byte{byte(step)}, 1+random.IntN(cache.recordBytesMax()))
				if sequence, ok := cache.insert(record); ok {
					want[sequence] = record
				}
			default:
				data, batches := randomJournal(random, cache.recordBytesMax(), byte(step))
				if first, ok := cache.hold(data, func([]byte) {}, batches); ok {
					for index := range batches {
						want[first+uint64(index)] = bytes.Clone(data[batches[index].at : batches[index].at+batches[index].length])
					}
				}
				cache.Drain(random.IntN(64 << 10))
			}
			if step%300 == 299 { // budget pressure: Trim stops at loans in the way
				other := NewCache(budget, 2)
				_, _ = other.insert(make([]byte, other.recordBytesMax()))
				cache.Trim()
				other.Release()
			}
			if blocked := cache.LoanBlocked(); blocked != blockedSeen {
				// The loan that stopped an eviction is the oldest record and
				// stays so until it ends: the yield goes to it, once.
				blockedSeen = blocked
				before, oldest := len(yielded), cache.sequenceTail
				cache.YieldBlockingLoan()
				cache.YieldBlockingLoan()
				if len(yielded) != before+1 || yielded[before] != oldest {
					t.Fatalf("seed %d step %d: yields %v after %d, want one to the oldest record %d", seed, step,
						yielded[before:], before, oldest)
				}
			}
			kept := loans[:0]
			for _, l := range loans {
				if l.steps--; l.steps > 0 {
					kept = append(kept, l)
					continue
				}
				if bytes.Count(l.data, []byte{l.fill}) != len(l.data) {
					t.Fatalf("seed %d step %d: a lent region was overwritten while lent", seed, step)
				}
				if random.IntN(4) == 0 {
					cache.dropJournal(l.region)
					dropped++
					continue
				}
				from := blockBytes * random.IntN(len(l.data)/blockBytes)
				length := 1 + random.IntN(len(l.data)-from)
				cache.adoptJournal(l.region, from, length)
				want[l.region] = bytes.Clone(l.data[from : from+length])
				adopted++
			}
			loans = kept
			for sequence := range want {
				if cache.get(sequence) == nil {
					delete(want, sequence) // evicted: the model checks only the living
				}
			}
			if !cache.empty() { // a Trim may have evicted everything
				checkCacheModel(t, cache, want, cache.sequenceHead-1)
			}
			if stats := cache.Stats(); stats.PinnedCount != len(loans) || stats.PinBlocked != 0 {
				t.Fatalf("seed %d step %d: %d pins and %d pin-blocked evictions with %d loans out", seed, step,
					stats.PinnedCount, stats.PinBlocked, len(loans))
			}
		}
		if adopted == 0 || dropped == 0 || refused == 0 || cache.Stats().EvictedCount == 0 || len(yielded) == 0 {
			t.Fatalf("seed %d: %d adopted, %d dropped, %d refused, %d evicted, %d yields: want some of each",
				seed, adopted, dropped, refused, cache.Stats().EvictedCount, len(yielded))
		}
		data, region, ok := cache.lendJournal(blockBytes, nil)
		for !ok { // the ring may be full of loans' records: free one by one
			cache.Drain(1 << 62)
			if len(loans) == 0 {
				t.Fatalf("seed %d: a one-block loan refused by an idle cache", seed)
			}
			cache.dropJournal(loans[0].region)
			loans = loans[1:]
			data, region, ok = cache.lendJournal(blockBytes, nil)
		}
		cache.Release()
		data[0] = 1 // the kernel may still read it: it stays mapped
		cache.dropJournal(region)
		for _, l := range loans {
			cache.dropJournal(l.region)
		}
		if cache.Stats().PinnedCount != 0 {
			t.Fatalf("seed %d: %d pins after every loan ended", seed, cache.Stats().PinnedCount)
		}
	}
}

// TestCacheDroppedNewestRegionGivesItsRoomBack: a dropped region that is
// the newest record gives its room back at once, so the next loan takes
// the same memory; dropped as the only record, it leaves the cache
// empty; a dropped region with newer records behind it keeps its place
// until eviction reaches it. No drop counts as an eviction.
func TestCacheDroppedNewestRegionGivesItsRoomBack(t *testing.T) {
	cache := NewCache(NewCacheBudget(8<<20), 1)
	defer cache.Release()
	lend := func() ([]byte, uint64) {
		t.Helper()
		data, region, ok := cache.lendJournal(64<<10, nil)
		if !ok {
			t.Fatal("an idle 8 MiB cache refused a 64 KiB loan")
		}
		return data, region
	}
	only, region := lend()
	cache.dropJournal(region)
	if stats := cache.Stats(); stats.Records != 0 || cache.head != 0 {
		t.Fatalf("after dropping the only record: %d records, head %d", stats.Records, cache.head)
	}
	older, olderRegion := lend()
	if &older[0] != &only[0] {
		t.Fatal("the loan after an emptied cache does not start at the arena's start")
	}
	newest, newestRegion := lend()
	cache.dropJournal(newestRegion)
	again, againRegion := lend()
	if &again[0] != &newest[0] {
		t.Fatal("a dropped newest region's room was not taken by the next loan")
	}
	middle, middleRegion := lend()
	cache.dropJournal(againRegion) // not the newest: its room waits for eviction
	next, nextRegion := lend()
	if &next[0] == &again[0] || &next[0] == &middle[0] {
		t.Fatal("a loan took room still held by another region")
	}
	cache.adoptJournal(olderRegion, 0, 1)
	cache.dropJournal(middleRegion)
	cache.dropJournal(nextRegion)
	if stats := cache.Stats(); stats.EvictedCount != 0 || stats.PinnedCount != 0 || stats.Bytes != 1 {
		t.Fatalf("after the drops: %+v; want no eviction, no pin, the one adopted byte", stats)
	}
}

// TestCacheDroppedNewestRegionLeavesNoEmptyRecordAtHead: a dropped newest
// region behind a live record gives its room back without leaving an
// empty record where head now is: once eviction reaches it, the ring
// would look wrapped (its oldest record at head) and a shrink would stop
// with head above the capacity it gave back.
func TestCacheDroppedNewestRegionLeavesNoEmptyRecordAtHead(t *testing.T) {
	cache := NewCache(NewCacheBudget(8<<20), 1)
	defer cache.Release()
	_, older, ok := cache.lendJournal(64<<10, nil)
	if !ok {
		t.Fatal("an idle 8 MiB cache refused a 64 KiB loan")
	}
	cache.adoptJournal(older, 0, 64<<10)
	_, newest, ok := cache.lendJournal(64<<10, nil)
	if !ok {
		t.Fatal("an 8 MiB cache holding 64 KiB refused a 64 KiB loan")
	}
	cache.dropJournal(newest)
	cache.shrink(int(cache.budget.chunkBytes))
	if cache.wrapped() || cache.head > cache.capacityBytes {
		t.Fatalf("after a shrink to %d bytes: wrapped %v, head %d, %+v", cache.capacityBytes, cache.wrapped(),
			cache.head, cache.Stats())
	}
	if stats := cache.Stats(); stats.Records != 0 || stats.Bytes != 0 {
		t.Fatalf("after evicting the one live record: %+v; want an empty cache", stats)
	}
}
