package engine

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestCachePinModelHeld: as TestCachePinModel, through the path the shard
// takes (held journals copied by Drain a slice at a time): pinned records
// keep their bytes while journals are held, reserved, refused and
// drained around them, under budget pressure.
func TestCachePinModelHeld(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4} {
		random := rand.New(rand.NewPCG(seed, seed+7))
		budget := NewCacheBudget(256 << 10)
		cache, other := NewCache(budget, 2), NewCache(budget, 2)
		cache.SetWake(func() {})
		pinned := map[uint64][]byte{}
		live := map[uint64][]byte{} // held or copied records: sequence → bytes
		pins := 0
		for step := range 3000 {
			batches := make([]journalBatch, 1+random.IntN(4))
			var data []byte
			for index := range batches {
				length := 1 + random.IntN(cache.recordBytesMax()/2)
				batches[index] = journalBatch{at: len(data), length: length}
				data = append(data, bytes.Repeat([]byte{byte(step), byte(index), byte(step >> 8)}, length/3+1)[:length]...)
			}
			if first, ok := cache.hold(data, func([]byte) {}, batches); ok {
				for index, batch := range batches {
					live[first+uint64(index)] = data[batch.at : batch.at+batch.length]
				}
			}
			cache.Drain(random.IntN(cache.recordBytesMax()))
			for sequence := range live {
				if sequence < cache.sequenceTail || sequence >= cache.sequenceHead {
					delete(live, sequence)
					continue
				}
				if _, already := pinned[sequence]; !already && random.IntN(10) == 0 {
					if span := cache.pin(sequence); span != nil {
						if !bytes.Equal(span, live[sequence]) {
							t.Fatalf("seed %d step %d: pinned sequence %d differs from its record", seed, step, sequence)
						}
						pinned[sequence] = live[sequence]
						pins++
					}
				}
			}
			checkPinned(t, cache, pinned)
			if random.IntN(5) == 0 {
				unpinOldest(cache, pinned)
			}
			if step%300 == 299 {
				_, _ = other.insert(make([]byte, other.recordBytesMax()))
				cache.Trim()
				checkPinned(t, cache, pinned)
			}
		}
		for len(pinned) > 0 {
			unpinOldest(cache, pinned)
		}
		cache.Drain(1 << 62)
		if stats := cache.Stats(); stats.PinnedCount != 0 || stats.Bytes > stats.CapacityBytes || pins == 0 || stats.PinBlocked == 0 {
			t.Fatalf("seed %d: %d pins; %+v", seed, pins, stats)
		}
		cache.Release()
		other.Release()
	}
}
