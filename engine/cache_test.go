package engine

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

// TestCacheModel drives one cache with a seeded stream of records of
// random sizes against a model of what it was given. Method: after every
// insert, each live sequence returns exactly its bytes; records die
// oldest first (a dead sequence has no live one below it); the newest is
// alive; the claimed capacity stays within the budget; and records wrap
// around the arena (evictions happen) without ever overlapping.
func TestCacheModel(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4} {
		random := rand.New(rand.NewPCG(seed, seed+1))
		budget := NewCacheBudget(int64(64<<10) << random.IntN(4))
		cache := NewCache(budget, 1)
		want := map[uint64][]byte{}
		for step := range 3000 {
			record := bytes.Repeat([]byte{byte(step)}, 1+random.IntN(cache.recordBytesMax()))
			sequence, ok := cache.insert(record)
			if !ok {
				t.Fatalf("seed %d step %d: a %d-byte record refused by a %d-byte cache", seed, step, len(record), budget.limitBytes)
			}
			want[sequence] = record
			checkCacheModel(t, cache, want, sequence)
		}
		if stats := cache.Stats(); stats.EvictedCount == 0 || stats.Bytes > stats.CapacityBytes {
			t.Fatalf("seed %d: stats %+v: want evictions and bytes within the capacity", seed, stats)
		}
		cache.Release()
		if budget.UsedBytes() != 0 || cache.get(cache.sequenceHead-1) != nil {
			t.Fatalf("seed %d: %d bytes claimed after Release", seed, budget.UsedBytes())
		}
	}
}

func checkCacheModel(t *testing.T, cache *Cache, want map[uint64][]byte, newest uint64) {
	t.Helper()
	if cache.get(newest) == nil {
		t.Fatalf("the newest record %d is not cached", newest)
	}
	if int64(cache.capacityBytes) > cache.budget.limitBytes || cache.budget.UsedBytes() != int64(cache.capacityBytes) {
		t.Fatalf("capacity %d, budget %d, claimed %d", cache.capacityBytes, cache.budget.limitBytes, cache.budget.UsedBytes())
	}
	for sequence, record := range want {
		got := cache.get(sequence)
		if got == nil {
			if sequence >= cache.sequenceTail {
				t.Fatalf("sequence %d died above the tail %d", sequence, cache.sequenceTail)
			}
			delete(want, sequence)
			continue
		}
		if !bytes.Equal(got, record) {
			t.Fatalf("sequence %d returns other bytes than it was given", sequence)
		}
	}
}

// TestCacheBudgetShared: two shards share one budget. Method: shard A
// fills the whole budget (more than its fair half); shard B then claims
// its half past the limit, which puts the budget under pressure; A's
// Trim gives back down to its half, evicting its oldest records only,
// and the claimed total is within the limit again.
func TestCacheBudgetShared(t *testing.T) {
	budget := NewCacheBudget(4 << 20)
	first, second := NewCache(budget, 2), NewCache(budget, 2)
	defer first.Release()
	defer second.Release()
	record := make([]byte, 64<<10)
	var sequences []uint64
	for index := range 60 { // 3.75 MiB: past A's 2 MiB share
		record[0] = byte(index)
		sequence, ok := first.insert(record)
		if !ok {
			t.Fatalf("record %d refused", index)
		}
		sequences = append(sequences, sequence)
	}
	if first.capacityBytes <= first.fairBytes || first.Stats().EvictedCount != 0 {
		t.Fatalf("A holds %d bytes (share %d), evicted %d: want it past its share, nothing evicted",
			first.capacityBytes, first.fairBytes, first.Stats().EvictedCount)
	}
	for index := range 20 {
		if _, ok := second.insert(record); !ok {
			t.Fatalf("B refused record %d within its share while A holds %d", index, first.capacityBytes)
		}
	}
	if budget.UsedBytes() <= budget.LimitBytes() {
		t.Fatalf("claimed %d of %d: want B's share claimed past the limit", budget.UsedBytes(),
			budget.LimitBytes())
	}
	first.Trim()
	if first.capacityBytes != first.fairBytes || budget.UsedBytes() > budget.LimitBytes() {
		t.Fatalf("after Trim A holds %d (share %d), claimed %d of %d", first.capacityBytes, first.fairBytes,
			budget.UsedBytes(), budget.LimitBytes())
	}
	newest := first.get(sequences[len(sequences)-1])
	if first.get(sequences[0]) != nil || newest == nil && first.head > first.fairBytes {
		t.Fatalf("Trim kept the oldest record or dropped the newest that fits")
	}
	for _, sequence := range sequences {
		if got := first.get(sequence); got != nil && got[0] != byte(sequence) {
			t.Fatalf("sequence %d holds record %d after Trim", sequence, got[0])
		}
	}
}

// TestCacheRefuses: a record larger than a quarter of the shard's share,
// or an empty one, is refused and leaves the cache as it was.
func TestCacheRefuses(t *testing.T) {
	cache := NewCache(NewCacheBudget(4<<20), 1)
	defer cache.Release()
	kept, _ := cache.insert([]byte("kept"))
	for _, size := range []int{0, 1<<20 + 1} {
		if _, ok := cache.insert(make([]byte, size)); ok {
			t.Fatalf("a %d-byte record was taken by a 4 MiB cache", size)
		}
	}
	if !bytes.Equal(cache.get(kept), []byte("kept")) {
		t.Fatalf("a refused insert disturbed the cache")
	}
	if NewCacheBudget(blockBytes-1).LimitBytes() != 0 || NewCacheBudget(cacheSmallBytes+1).LimitBytes() != cacheSmallBytes {
		t.Fatalf("budgets round down to whole blocks (small) and whole chunks (large)")
	}
}

// TestCacheHeldJournals: with a wake function the cache holds written
// journals and copies them on Drain. Method: seeded journals of a few
// batches, drained by random slices; every live sequence returns its
// bytes before and after its copy, the wake runs once per episode, each
// journal is freed exactly once (after its copy or its eviction), and
// Release frees what still waits.
func TestCacheHeldJournals(t *testing.T) {
	for _, seed := range []uint64{5, 6, 7} {
		random := rand.New(rand.NewPCG(seed, seed+1))
		cache := NewCache(NewCacheBudget(int64(256<<10)<<random.IntN(3)), 1)
		wakes := 0
		cache.SetWake(func() { wakes++ })
		live := map[*byte]bool{}
		release := func(data []byte) {
			if !live[&data[0]] {
				t.Fatalf("seed %d: a journal freed twice or never held", seed)
			}
			delete(live, &data[0])
		}
		want := map[uint64][]byte{}
		waiting := false
		for step := range 1500 {
			data, batches := randomJournal(random, cache.recordBytesMax(), byte(step))
			first, ok := cache.hold(data, release, batches)
			if !ok {
				t.Fatalf("seed %d step %d: a journal of %d batches refused", seed, step, len(batches))
			}
			live[&data[0]] = true
			for index := range batches {
				want[first+uint64(index)] = bytes.Clone(data[batches[index].at : batches[index].at+batches[index].length])
			}
			if !waiting && wakes == 0 {
				t.Fatalf("seed %d step %d: no wake for the first held journal", seed, step)
			}
			checkCacheModel(t, cache, want, first+uint64(len(batches)-1))
			waiting = cache.Drain(random.IntN(64 << 10))
			if !waiting {
				wakes = 0
				if len(live) != 0 {
					t.Fatalf("seed %d step %d: drained, but %d journals are not freed", seed, step, len(live))
				}
			}
			checkCacheModel(t, cache, want, first+uint64(len(batches)-1))
		}
		cache.Release()
		if len(live) != 0 {
			t.Fatalf("seed %d: %d journals not freed by Release", seed, len(live))
		}
	}
}

// randomJournal lays out one to four batches of random lengths, filled
// with serial, at random gaps in a buffer.
func randomJournal(random *rand.Rand, lengthMax int, serial byte) ([]byte, []journalBatch) {
	var batches []journalBatch
	at := random.IntN(512)
	for range 1 + random.IntN(4) {
		length := 1 + random.IntN(lengthMax/2)
		batches = append(batches, journalBatch{at: at, length: length})
		at += length + random.IntN(64)
	}
	data := make([]byte, at)
	for index := range batches {
		batch := &batches[index]
		for position := batch.at; position < batch.at+batch.length; position++ {
			data[position] = serial + byte(position)
		}
	}
	return data, batches
}

// TestCachePopulateAhead: with a populator the cache's claimed memory
// becomes resident ahead of the copies, records keep their bytes, and
// Release stops the populator before it unmaps. Method: insert a few
// records, wait for the populator to reach the claimed capacity (the
// first claim takes a lead beyond the need), check them.
func TestCachePopulateAhead(t *testing.T) {
	budget := NewCacheBudget(64 << 20)
	cache := NewCache(budget, 1)
	cache.PopulateAhead()
	want := map[uint64][]byte{}
	for index := range 8 {
		record := bytes.Repeat([]byte{byte(index + 1)}, 256<<10)
		sequence, ok := cache.insert(record)
		if !ok {
			t.Fatalf("record %d refused", index)
		}
		want[sequence] = record
	}
	if cache.capacityBytes <= cache.head {
		t.Fatalf("capacity %d: the claim took no lead beyond the need %d", cache.capacityBytes, cache.head)
	}
	deadline := time.Now().Add(20 * time.Second)
	for cache.Stats().ReadyBytes < int64(cache.capacityBytes) {
		if time.Now().After(deadline) {
			t.Fatalf("the populator made %d of %d claimed bytes ready in 20 s", cache.Stats().ReadyBytes, cache.capacityBytes)
		}
		time.Sleep(time.Millisecond) // the populator is a goroutine of its own
	}
	checkCacheModel(t, cache, want, uint64(len(want)-1))
	arena := cache.arena
	cache.Release()
	select {
	case <-arena.stopped:
	default:
		t.Fatalf("Release left the populator running")
	}
}

// TestCacheBudgetOvershootOneShare: the caches of all shards claim at
// most the limit plus one shard's fair share (engine invariant 11), also
// when several shards claim past the limit before the one holding it
// trims. Method: four caches on a 4 MiB budget; the first fills the
// whole budget, then the three others each try to fill their 1 MiB share
// with no Trim in between.
func TestCacheBudgetOvershootOneShare(t *testing.T) {
	budget := NewCacheBudget(4 << 20)
	caches := make([]*Cache, 4)
	for index := range caches {
		caches[index] = NewCache(budget, len(caches))
		defer caches[index].Release()
	}
	record := make([]byte, 64<<10)
	for range 64 {
		if _, ok := caches[0].insert(record); !ok {
			t.Fatalf("the first cache refused a record within the limit")
		}
	}
	for _, cache := range caches[1:] {
		for range 16 {
			cache.insert(record)
		}
	}
	share := int64(caches[0].fairBytes)
	if budget.UsedBytes() > budget.LimitBytes()+share {
		t.Fatalf("claimed %d: more than the limit %d plus one share %d", budget.UsedBytes(), budget.LimitBytes(), share)
	}
	caches[0].Trim()
	if _, ok := caches[3].insert(record); !ok || budget.UsedBytes() > budget.LimitBytes()+share {
		t.Fatalf("after the first cache trimmed, the last took no record or the claim is %d", budget.UsedBytes())
	}
}

// TestCacheShareUnderOneChunk: a budget whose even split is less than a
// chunk (16 MiB over 16 shards, 2 MiB chunks) still gives every shard a
// share of one chunk, so a shard that took the whole budget first gives
// memory back to the others. Method: the first of sixteen caches takes
// one record (its claim leads to the whole budget); another cache then
// inserts, with the first's Trim in between.
func TestCacheShareUnderOneChunk(t *testing.T) {
	budget := NewCacheBudget(16 << 20)
	caches := make([]*Cache, 16)
	for index := range caches {
		caches[index] = NewCache(budget, len(caches))
		defer caches[index].Release()
	}
	record := make([]byte, 64<<10)
	if _, ok := caches[0].insert(record); !ok {
		t.Fatalf("the first cache refused a record")
	}
	caches[1].insert(record)
	caches[0].Trim()
	if _, ok := caches[1].insert(record); !ok {
		t.Fatalf("the second cache takes nothing while the first holds %d of %d bytes", caches[0].capacityBytes,
			budget.LimitBytes())
	}
}

// TestCacheTrimFollowsTheClaims: a cache above its share gives back
// whenever the caches hold more than the limit. Method: A holds the
// whole budget, B claims its share past it; A's Trim must shrink to its
// share.
func TestCacheTrimFollowsTheClaims(t *testing.T) {
	budget := NewCacheBudget(4 << 20)
	first, second := NewCache(budget, 2), NewCache(budget, 2)
	defer first.Release()
	defer second.Release()
	record := make([]byte, 64<<10)
	for range 64 {
		first.insert(record)
	}
	if _, ok := second.insert(record); !ok || budget.UsedBytes() <= budget.LimitBytes() {
		t.Fatalf("B's claim past the limit refused (claimed %d)", budget.UsedBytes())
	}
	first.Trim()
	if first.capacityBytes > first.fairBytes || budget.UsedBytes() > budget.LimitBytes() {
		t.Fatalf("after Trim A holds %d (share %d), claimed %d of %d", first.capacityBytes, first.fairBytes,
			budget.UsedBytes(), budget.LimitBytes())
	}
}

// TestCacheFailedHoldCounts: a hold whose last batch is too large is
// undone after its first batches took room, and Stats counts the records
// and bytes alive before it, not the undone ones. Method: insert a
// record, hold a journal of a fitting batch and an oversized one, and
// compare Stats with the record inserted.
func TestCacheFailedHoldCounts(t *testing.T) {
	cache := NewCache(NewCacheBudget(256<<10), 1)
	cache.SetWake(func() {})
	record := bytes.Repeat([]byte{7}, 1000)
	if _, ok := cache.insert(record); !ok {
		t.Fatal("a 1000-byte record refused")
	}
	oversized := cache.recordBytesMax() + 1
	data := make([]byte, 500+oversized)
	batches := []journalBatch{{at: 0, length: 500}, {at: 500, length: oversized}}
	if _, ok := cache.hold(data, func([]byte) {}, batches); ok {
		t.Fatal("a journal with an oversized batch was held")
	}
	if stats := cache.Stats(); stats.Records != 1 || stats.Bytes != int64(len(record)) {
		t.Fatalf("after the failed hold: %d records of %d bytes, want 1 of %d", stats.Records, stats.Bytes, len(record))
	}
}
