package engine

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCacheReusesForgottenRoom: records nobody lists any more give their
// room back before the arena grows. Method: one cache of 1 MiB; records
// of an "old" partition behind one live record, a pinned one among them;
// the tail stops at each live or pinned record and passes the dead ones
// once those go; a cache whose records all died takes its next record at
// the arena's start without claiming more capacity.
func TestCacheReusesForgottenRoom(t *testing.T) {
	cache := NewCache(NewCacheBudget(1<<20), 1)
	defer cache.Release()
	record := func(serial byte) []byte { return bytes.Repeat([]byte{serial}, 64<<10) }
	insert := func(serial byte) uint64 {
		sequence, ok := cache.insert(record(serial))
		if !ok {
			t.Fatalf("record %d refused", serial)
		}
		return sequence
	}
	live := insert(1)
	var old []uint64
	for serial := byte(2); serial < 8; serial++ {
		old = append(old, insert(serial))
	}
	capacity := cache.Stats().CapacityBytes
	pinned := cache.pin(old[2])
	if pinned == nil {
		t.Fatal("a record that is not held could not be pinned")
	}
	for _, sequence := range old {
		cache.forget(sequence)
		if cache.get(sequence) != nil {
			t.Fatalf("a forgotten record %d still reads", sequence)
		}
	}
	cache.passForgotten()
	stats := cache.Stats()
	if stats.Bytes != 64<<10 || stats.Records != 7 || stats.ForgottenCount != 0 || cache.sequenceTail != live {
		t.Fatalf("stats %+v, tail %d: want the live record's bytes only, the tail held at it (%d)", stats, cache.sequenceTail, live)
	}
	cache.forget(live)
	cache.passForgotten()
	if cache.sequenceTail != old[2] || cache.Stats().ForgottenCount != 3 {
		t.Fatalf("tail %d, %d forgotten: want the tail stopped by the pinned record %d", cache.sequenceTail,
			cache.Stats().ForgottenCount, old[2])
	}
	if !bytes.Equal(pinned, record(4)) {
		t.Fatal("a pinned record's bytes changed once it was forgotten")
	}
	cache.unpin(old[2])
	next := insert(9) // passes the rest, then starts again at 0
	entry := cache.entries[next%uint64(len(cache.entries))]
	stats = cache.Stats()
	if entry.at != 0 || stats.Records != 1 || stats.ForgottenCount != 7 || stats.EvictedCount != 0 ||
		stats.CapacityBytes != capacity {
		t.Fatalf("next record at %d, stats %+v: want it at 0, alone, nothing evicted, capacity %d kept", entry.at,
			stats, capacity)
	}
	if !bytes.Equal(cache.get(next), record(9)) {
		t.Fatal("the record reusing the room reads other bytes")
	}
}

// TestCacheModelWithForgetting runs the cache models (inserted and held
// records) while a seeded stream of forgets kills random live records.
// Method: each live record reads its own bytes after every step, a
// forgotten one reads nothing, the live byte count is the sum of the
// model's live records, and the records left never overlap (their bytes
// would differ).
func TestCacheModelWithForgetting(t *testing.T) {
	for _, seed := range []uint64{21, 22, 23} {
		random := rand.New(rand.NewPCG(seed, seed+1))
		cache := NewCache(NewCacheBudget(int64(128<<10)<<random.IntN(3)), 1)
		held := seed%2 == 0
		if held {
			cache.SetWake(func() {})
		}
		want := map[uint64][]byte{}
		for step := range 2000 {
			var newest uint64
			if held {
				data, batches := randomJournal(random, cache.recordBytesMax(), byte(step))
				first, ok := cache.hold(data, func([]byte) {}, batches)
				if !ok {
					t.Fatalf("seed %d step %d: a journal refused", seed, step)
				}
				for index := range batches {
					want[first+uint64(index)] = bytes.Clone(data[batches[index].at : batches[index].at+batches[index].length])
				}
				newest = first + uint64(len(batches)-1)
			} else {
				record := bytes.Repeat([]byte{byte(step)}, 1+random.IntN(cache.recordBytesMax()))
				sequence, ok := cache.insert(record)
				if !ok {
					t.Fatalf("seed %d step %d: a record refused", seed, step)
				}
				want[sequence] = record
				newest = sequence
			}
			checkCacheModel(t, cache, want, newest)
			// In sequence order: map order is random, and the seed alone
			// must pick the forgotten records.
			for _, sequence := range slices.Sorted(maps.Keys(want)) {
				if sequence != newest && random.IntN(3) == 0 {
					cache.forget(sequence)
					delete(want, sequence)
					if cache.get(sequence) != nil {
						t.Fatalf("seed %d step %d: forgotten record %d still reads", seed, step, sequence)
					}
				}
			}
			cache.passForgotten()
			if held {
				cache.Drain(random.IntN(64 << 10))
			}
			checkCacheModel(t, cache, want, newest)
			liveBytes := int64(0)
			for _, record := range want {
				liveBytes += int64(len(record))
			}
			if got := cache.Stats().Bytes; got != liveBytes {
				t.Fatalf("seed %d step %d: %d live bytes counted, the model has %d", seed, step, got, liveBytes)
			}
		}
		if cache.Stats().ForgottenCount == 0 {
			t.Fatalf("seed %d: the tail never passed a forgotten record", seed)
		}
		cache.Release()
	}
}

// TestCacheEvictionCountsOnlyLiveRecords: a dead record that eviction
// drops on its way (behind a live one, the tail could not pass it)
// counts as forgotten, not evicted, so EvictedCount stays the live
// records the cache gave up. Method: a 1 MiB cache of 64 KiB records, a
// live one then six forgotten ones then live ones to the arena's end;
// a 128 KiB record wraps to the start and evicts the live record and
// the forgotten one after it.
func TestCacheEvictionCountsOnlyLiveRecords(t *testing.T) {
	cache := NewCache(NewCacheBudget(1<<20), 1)
	defer cache.Release()
	insert := func(length int) uint64 {
		sequence, ok := cache.insert(make([]byte, length))
		if !ok {
			t.Fatalf("a record of %d bytes refused", length)
		}
		return sequence
	}
	live := insert(64 << 10)
	for range 6 {
		cache.forget(insert(64 << 10))
	}
	for cache.head+64<<10 <= cache.capacityBytes {
		insert(64 << 10)
	}
	insert(128 << 10)
	if cache.sequenceTail != live+2 {
		t.Fatalf("tail %d: the setup misses an eviction of the live record %d and one forgotten after it",
			cache.sequenceTail, live)
	}
	if stats := cache.Stats(); stats.EvictedCount != 1 || stats.ForgottenCount != 1 {
		t.Fatalf("stats %+v: want the live record evicted and the forgotten one counted as forgotten", stats)
	}
}
