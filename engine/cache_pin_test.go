package engine

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestCachePinModel: records pinned for sends in place keep their bytes
// while the cache is under pressure. Method: a small cache takes a seeded
// stream of records; some are pinned at random and unpinned later. After
// every insert each pinned record's bytes equal what was inserted; an
// insert is refused only while a pin blocks the eviction it needs; a
// shrink under budget pressure stops at a pin; once every pin is gone
// the cache takes records and gives memory back as before.
func TestCachePinModel(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		random := rand.New(rand.NewPCG(seed, seed+1))
		budget := NewCacheBudget(256 << 10)
		cache, other := NewCache(budget, 2), NewCache(budget, 2)
		pinned := map[uint64][]byte{} // sequence → the bytes it was given
		refused := 0
		for step := range 2000 {
			record := bytes.Repeat([]byte{byte(step), byte(step >> 8)}, (1+random.IntN(cache.recordBytesMax()))/2)
			sequence, ok := cache.insert(record)
			switch {
			case !ok && len(pinned) == 0:
				t.Fatalf("seed %d step %d: a record refused with nothing pinned", seed, step)
			case !ok:
				refused++
			case random.IntN(8) == 0:
				if data := cache.pin(sequence); !bytes.Equal(data, record) {
					t.Fatalf("seed %d step %d: pinned bytes differ from the record", seed, step)
				}
				pinned[sequence] = record
			}
			checkPinned(t, cache, pinned)
			if random.IntN(6) == 0 {
				unpinOldest(cache, pinned)
			}
			if step%500 == 499 { // put the budget under pressure: the cache must shrink to its share
				_, _ = other.insert(make([]byte, other.recordBytesMax()))
				cache.Trim()
				checkPinned(t, cache, pinned)
			}
		}
		for len(pinned) > 0 {
			unpinOldest(cache, pinned)
		}
		if refused == 0 || cache.Stats().PinnedCount != 0 {
			t.Fatalf("seed %d: %d refusals (want some), %d pins left", seed, refused, cache.Stats().PinnedCount)
		}
		if _, ok := cache.insert(make([]byte, cache.recordBytesMax())); !ok {
			t.Fatalf("seed %d: a record refused after every pin was released", seed)
		}
		cache.Trim()
		if stats := cache.Stats(); budget.UsedBytes() > budget.LimitBytes() && stats.CapacityBytes > int64(cache.fairBytes) {
			t.Fatalf("seed %d: %d bytes claimed past the limit after the pins went", seed, budget.UsedBytes())
		}
		cache.Release()
		other.Release()
	}
}

func checkPinned(t *testing.T, cache *Cache, pinned map[uint64][]byte) {
	t.Helper()
	for sequence, record := range pinned {
		if got := cache.get(sequence); !bytes.Equal(got, record) {
			t.Fatalf("pinned sequence %d lost its bytes (tail %d)", sequence, cache.sequenceTail)
		}
	}
	if cache.Stats().PinnedCount != len(pinned) {
		t.Fatalf("%d pins counted, %d held", cache.Stats().PinnedCount, len(pinned))
	}
}

func unpinOldest(cache *Cache, pinned map[uint64][]byte) {
	oldest, found := uint64(0), false
	for sequence := range pinned {
		if !found || sequence < oldest {
			oldest, found = sequence, true
		}
	}
	if found {
		cache.unpin(oldest)
		delete(pinned, oldest)
	}
}

// TestCachePinHeldJournal: a record still served from a held journal is
// not pinned (Drain frees that memory after the copy); once drained into
// the arena it is.
func TestCachePinHeldJournal(t *testing.T) {
	cache := NewCache(NewCacheBudget(1<<20), 1)
	defer cache.Release()
	cache.SetWake(func() {})
	data := bytes.Repeat([]byte{7}, 3000)
	released := 0
	first, ok := cache.hold(data, func([]byte) { released++ }, []journalBatch{{at: 0, length: 1000}, {at: 1000, length: 2000}})
	if !ok {
		t.Fatal("hold refused")
	}
	if cache.pin(first) != nil || cache.Stats().PinnedCount != 0 {
		t.Fatal("a record in a held journal was pinned")
	}
	cache.Drain(1 << 30)
	span := cache.pin(first + 1)
	if released != 1 || len(span) != 2000 || &span[0] != &cache.arena.data[cache.entries[first+1].at] {
		t.Fatalf("after the drain: released %d, span of %d bytes not in the arena", released, len(span))
	}
	cache.unpin(first + 1)
}

// TestCachePinKeepsAMargin: a record the next inserts would overwrite
// soon is copied rather than pinned, so a consumer reading at the
// eviction frontier never makes the cache refuse records; the newest
// record, a whole arena of inserts away, is pinned. Method: fill a small
// cache until it wraps, then pin the oldest live record and the newest.
func TestCachePinKeepsAMargin(t *testing.T) {
	cache := NewCache(NewCacheBudget(1<<20), 1)
	defer cache.Release()
	record := make([]byte, 64<<10)
	var newest uint64
	for cache.Stats().EvictedCount < 4 {
		sequence, ok := cache.insert(record)
		if !ok {
			t.Fatal("a record refused with nothing pinned")
		}
		newest = sequence
	}
	oldest := cache.sequenceTail
	if room := cache.roomBefore(cache.entries[oldest%uint64(len(cache.entries))].at); room >= cache.capacityBytes/cachePinMarginDivisor {
		t.Fatalf("the oldest record is %d bytes from being overwritten: the setup misses the frontier", room)
	}
	if cache.pin(oldest) != nil {
		t.Fatal("the record next to be overwritten was pinned")
	}
	if cache.pin(newest) == nil {
		t.Fatal("the newest record was not pinned")
	}
	cache.unpin(newest)
	if stats := cache.Stats(); stats.PinnedCount != 0 {
		t.Fatalf("%d pins left", stats.PinnedCount)
	}
}

// TestCachePinCountsTheShareItGrowsTo: a record near the start of an
// arena whose head is close to its claimed end, but below the share the
// budget always grants, is pinned: the arena grows before head wraps.
// Method: a 128 MiB budget of one shard; 60 MiB of records claim 66 MiB
// (the need and a lead); the oldest is pinned; inserts go on until the
// arena has grown to the whole share without one being refused, and the
// pinned record's bytes never change.
func TestCachePinCountsTheShareItGrowsTo(t *testing.T) {
	cache := NewCache(NewCacheBudget(128<<20), 1)
	defer cache.Release()
	record := make([]byte, 64<<10)
	insert := func(serial int) uint64 {
		record[0], record[len(record)-1] = byte(serial), byte(serial>>8)
		sequence, ok := cache.insert(record)
		if !ok {
			t.Fatalf("record %d refused (pin blocked %d)", serial, cache.PinBlocked())
		}
		return sequence
	}
	first := insert(0)
	for serial := 1; serial < 60*16; serial++ {
		insert(serial)
	}
	if cache.capacityBytes >= cache.fairBytes || cache.capacityBytes-cache.head > cache.capacityBytes/cachePinMarginDivisor {
		t.Fatalf("capacity %d, head %d, share %d: the setup misses a head near a claimed end below the share",
			cache.capacityBytes, cache.head, cache.fairBytes)
	}
	pinned := cache.pin(first)
	if pinned == nil {
		t.Fatal("the oldest record, a grown arena of inserts from being overwritten, was not pinned")
	}
	want := bytes.Clone(pinned)
	for serial := 60 * 16; cache.capacityBytes < cache.fairBytes || cache.head+len(record) <= cache.capacityBytes; serial++ {
		insert(serial)
	}
	if cache.PinBlocked() != 0 || !bytes.Equal(pinned, want) {
		t.Fatalf("pin blocked %d times, pinned bytes changed %v", cache.PinBlocked(), !bytes.Equal(pinned, want))
	}
	cache.unpin(first)
}

// TestCachePinCountsOnlyTheGrowthTheBudgetGrants: the margin counts the
// share the arena would grow to only while the budget would grant that
// growth. Method: a cache of one of two shards with 60 MiB of records in
// the 66 MiB it claimed; other claims on the budget take it to its
// limit plus one share, which refuses the cache's growth, and its oldest
// record, 6 MiB of inserts from being overwritten, is then not pinned;
// once they are given back it is.
func TestCachePinCountsOnlyTheGrowthTheBudgetGrants(t *testing.T) {
	budget := NewCacheBudget(256 << 20)
	cache := NewCache(budget, 2)
	defer cache.Release()
	record := make([]byte, 64<<10)
	first, ok := cache.insert(record)
	for index := 1; ok && index < 60*16; index++ {
		_, ok = cache.insert(record)
	}
	if !ok || cache.capacityBytes >= cache.fairBytes || cache.capacityBytes-cache.head > cache.capacityBytes/cachePinMarginDivisor {
		t.Fatalf("capacity %d, head %d, share %d: the setup misses a head near a claimed end below the share",
			cache.capacityBytes, cache.head, cache.fairBytes)
	}
	others := budget.limitBytes - budget.UsedBytes() + int64(cache.fairBytes) // the limit, then one share past it
	if !budget.claim(budget.limitBytes-budget.UsedBytes(), 0, int64(cache.fairBytes)) ||
		!budget.claim(int64(cache.fairBytes), 0, int64(cache.fairBytes)) {
		t.Fatal("the other shards' claims were refused")
	}
	if cache.pin(first) != nil {
		t.Fatal("a record 6 MiB from being overwritten was pinned while the budget refuses the arena's growth")
	}
	budget.release(others)
	if cache.pin(first) == nil {
		t.Fatal("the oldest record was not pinned once the budget grants the growth again")
	}
	cache.unpin(first)
}
