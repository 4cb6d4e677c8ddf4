package engine

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestCacheHoldsAndCopies drives the cache with a seeded mix of held
// buffers (flushed journals) and copied records against a model of what
// each sequence must return. Method: after every step, each live sequence
// returns exactly the bytes it was given, the newest record is alive, the
// held bytes stay within the budget, and every buffer the cache took is
// released once, on eviction or by Release.
func TestCacheHoldsAndCopies(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		random := rand.New(rand.NewPCG(seed, seed+1))
		budget := 64 << 10 << random.IntN(4)
		cache := NewCache(budget)
		live := map[*byte]int{} // first byte of each buffer the cache took → its size
		allocate := func(size int) []byte {
			data := make([]byte, size)
			live[&data[0]] = size
			return data
		}
		release := func(data []byte) {
			if _, ok := live[&data[0]]; !ok {
				t.Fatalf("seed %d: released a buffer not held, or twice", seed)
			}
			delete(live, &data[0])
		}
		want := map[uint64][]byte{}
		serial := byte(0)
		for step := range 2000 {
			serial++
			var sequence uint64
			if random.IntN(3) == 0 {
				sequence = holdRandom(cache, random, allocate, release, serial, want)
			} else {
				record := bytes.Repeat([]byte{serial}, 1+random.IntN(budget/8))
				got, ok := cache.insert(record, allocate, release)
				if !ok {
					t.Fatalf("seed %d step %d: a record of %d bytes refused by a %d-byte cache", seed, step, len(record), budget)
				}
				sequence, want[got] = got, record
			}
			if cache.get(sequence) == nil {
				t.Fatalf("seed %d step %d: the newest record is not cached", seed, step)
			}
			checkCache(t, cache, live, want)
		}
		cache.Release()
		if len(live) != 0 || cache.heldBytes != 0 {
			t.Fatalf("seed %d: %d buffers (%d bytes) still held after Release", seed, len(live), cache.heldBytes)
		}
	}
}

// holdRandom hands the cache a journal of a few records and returns the
// last one's sequence.
func holdRandom(cache *Cache, random *rand.Rand, allocate func(int) []byte, release func([]byte),
	serial byte, want map[uint64][]byte) uint64 {
	data := allocate(cache.budgetBytes / 2 >> random.IntN(3))
	cache.hold(data, release)
	var sequence uint64
	at := 0
	for count := 1 + random.IntN(4); count > 0 && at < len(data); count-- {
		length := min(1+random.IntN(len(data)/4), len(data)-at)
		record := data[at : at+length]
		for index := range record {
			record[index] = serial
		}
		sequence = cache.entry(at, length)
		want[sequence] = bytes.Clone(record)
		at += length
	}
	return sequence
}

func checkCache(t *testing.T, cache *Cache, live map[*byte]int, want map[uint64][]byte) {
	t.Helper()
	if cache.heldBytes > cache.budgetBytes {
		t.Fatalf("cache holds %d bytes over a %d budget", cache.heldBytes, cache.budgetBytes)
	}
	held := 0
	for _, size := range live {
		held += size
	}
	if held != cache.heldBytes {
		t.Fatalf("cache counts %d held bytes, buffers not released add to %d", cache.heldBytes, held)
	}
	for sequence, record := range want {
		got := cache.get(sequence)
		if got == nil {
			delete(want, sequence)
			continue
		}
		if !bytes.Equal(got, record) {
			t.Fatalf("sequence %d returns other bytes than it was given", sequence)
		}
	}
}
