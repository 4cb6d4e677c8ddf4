package shard

import (
	"errors"
	"testing"

	"github.com/whippetio/whippet/engine"
)

// TestOwnerOfVectors pins the partition-to-shard hash to the check values
// in IGGY-SERVER-NOTES.md §3.3 (namespace packing and MurmurHash3_x86_32).
func TestOwnerOfVectors(t *testing.T) {
	namespaces := []struct {
		key  PartitionKey
		want uint64
	}{
		{PartitionKey{5, 2, 7}, 0x5_0020_0007},
		{PartitionKey{1, 0, 0}, 0x1_0000_0000},
		{PartitionKey{4095, 4095, 999999}, 0xFFF_FFFF_423F},
	}
	for _, row := range namespaces {
		if got := row.key.Namespace(); got != row.want {
			t.Errorf("namespace %v = %#x, want %#x", row.key, got, row.want)
		}
	}
	hashes := []struct {
		namespace uint64
		want      uint32
	}{
		{0x0, 0x63852afc}, {0x1, 0x53075d44}, {0x100000000, 0x3ad85688}, {0x500200007, 0x4a90bb6b},
	}
	for _, row := range hashes {
		if got := murmur3Uint64(row.namespace); got != row.want {
			t.Errorf("murmur3(%#x) = %#x, want %#x", row.namespace, got, row.want)
		}
	}
	owners := []struct {
		key    PartitionKey
		shards int
		want   int
	}{
		{PartitionKey{0, 0, 0}, 8, 5}, {PartitionKey{0, 0, 0}, 4, 1},
		{PartitionKey{0, 0, 1}, 8, 7}, {PartitionKey{0, 0, 1}, 4, 3},
		{PartitionKey{1, 0, 0}, 8, 0}, {PartitionKey{5, 2, 7}, 8, 0}, {PartitionKey{5, 2, 7}, 16, 0},
		{PartitionKey{5, 2, 7}, 1, 0},
	}
	for _, row := range owners {
		if got := OwnerOf(row.key, row.shards); got != row.want {
			t.Errorf("OwnerOf(%v, %d) = %d, want %d", row.key, row.shards, got, row.want)
		}
	}
}

// TestDataAppendPollCrossShard: partitions owned by each shard take
// appends started on every shard, and polls started on every shard read
// them back in order, verified record by record.
func TestDataAppendPollCrossShard(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		h := startData(t, backend, DataOptions{Directory: t.TempDir()})
		shards := h.shardCount()
		h.create(PartitionKey{Stream: 1, Topic: 2}, 8, PartitionConfig{})
		for partition := uint32(0); partition < 8; partition++ {
			key := PartitionKey{Stream: 1, Topic: 2, Partition: partition}
			sequence := 0
			for round := range 3 {
				for origin := range shards {
					result := h.append(origin, key, testBatch(sequence, 5, 100))
					if result.Err != nil {
						t.Fatalf("append %v from shard %d: %v", key, origin, result.Err)
					}
					if result.BaseOffset != uint64(sequence) || result.Messages != 5 {
						t.Fatalf("append %v round %d: base %d count %d, want %d 5", key, round, result.BaseOffset, result.Messages, sequence)
					}
					sequence += 5
				}
			}
			for origin := range shards {
				result := h.poll(origin, key, engine.PollOffset, 0, 1000, engine.Consumer{}, false)
				if result.Err != nil {
					t.Fatalf("poll %v from shard %d: %v", key, origin, result.Err)
				}
				offsets, sequences := decodeSequences(t, result.Out)
				if len(offsets) != sequence || int(result.Messages) != sequence {
					t.Fatalf("poll %v: %d messages (%d reported), want %d", key, len(offsets), result.Messages, sequence)
				}
				for index := range offsets {
					if offsets[index] != uint64(index) || sequences[index] != uint64(index) {
						t.Fatalf("poll %v: message %d has offset %d sequence %d", key, index, offsets[index], sequences[index])
					}
				}
				if result.CurrentOffset != uint64(sequence-1) {
					t.Fatalf("poll %v: current offset %d, want %d", key, result.CurrentOffset, sequence-1)
				}
			}
		}
	})
}

// TestDataUnknownPartition: ops on a partition nobody created fail with
// ErrPartitionNotFound, from every shard.
func TestDataUnknownPartition(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		h := startData(t, backend, DataOptions{Directory: t.TempDir()})
		for origin := range h.shardCount() {
			for partition := uint32(0); partition < 4; partition++ {
				key := PartitionKey{Stream: 9, Topic: 9, Partition: partition}
				if result := h.append(origin, key, testBatch(0, 1, 10)); !errors.Is(result.Err, ErrPartitionNotFound) {
					t.Fatalf("append to missing %v: %v", key, result.Err)
				}
				result := h.poll(origin, key, engine.PollFirst, 0, 10, engine.Consumer{}, false)
				if !errors.Is(result.Err, ErrPartitionNotFound) {
					t.Fatalf("poll of missing %v: %v", key, result.Err)
				}
			}
		}
		if result := h.append(0, PartitionKey{Stream: 1 << 21}, testBatch(0, 1, 10)); !errors.Is(result.Err, ErrPartitionNotFound) {
			t.Fatalf("append outside the namespace: %v", result.Err)
		}
	})
}
