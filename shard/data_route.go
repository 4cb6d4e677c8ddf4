package shard

import (
	"fmt"
	"math/bits"
	"path/filepath"
	"strconv"

	"github.com/whippetio/whippet/internal/invariant"
)

// PartitionKey names one partition by its stream, topic and partition ids
// (0-based, as PROTOCOL.md numbers them).
type PartitionKey struct {
	Stream    uint32
	Topic     uint32
	Partition uint32
}

// Namespace limits: the fields of the packed u64 a partition hashes by.
// Creates beyond them are rejected at admission (the front's job); the
// data plane asserts them.
const (
	NamespaceStreamMax    = 1<<20 - 1
	NamespaceTopicMax     = 1<<12 - 1
	NamespacePartitionMax = 999_999
)

// Namespace packs the key as stream<<32 | topic<<20 | partition, the u64
// whose hash picks the owning shard.
func (k PartitionKey) Namespace() uint64 {
	invariant.Assert(k.Stream <= NamespaceStreamMax, "stream id fits the namespace")
	invariant.Assert(k.Topic <= NamespaceTopicMax, "topic id fits the namespace")
	invariant.Assert(k.Partition <= NamespacePartitionMax, "partition id fits the namespace")
	return uint64(k.Stream)<<32 | uint64(k.Topic)<<20 | uint64(k.Partition)
}

// Valid reports whether every field fits the namespace.
func (k PartitionKey) Valid() bool {
	return k.Stream <= NamespaceStreamMax && k.Topic <= NamespaceTopicMax && k.Partition <= NamespacePartitionMax
}

func (k PartitionKey) String() string {
	return fmt.Sprintf("%d/%d/%d", k.Stream, k.Topic, k.Partition)
}

// OwnerOf returns the shard that owns the partition: the upper half of
// MurmurHash3_x86_32 (seed 0) over the namespace's 8 little-endian bytes,
// modulo the shard count. The upper half, because Murmur3's low bits mix
// small integers poorly. The function is stable: it depends on the key and
// the shard count only, so a restart with the same shard count finds every
// partition on the shard that wrote it.
func OwnerOf(key PartitionKey, shardCount int) int {
	invariant.Assert(shardCount > 0, "shard count is positive")
	if shardCount == 1 {
		return 0
	}
	return int((murmur3Uint64(key.Namespace()) >> 16) % uint32(shardCount))
}

// murmur3Uint64 is MurmurHash3_x86_32 with seed 0 over the 8
// little-endian bytes of value: two body blocks, no tail.
func murmur3Uint64(value uint64) uint32 {
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	hash := uint32(0)
	for _, block := range [2]uint32{uint32(value), uint32(value >> 32)} {
		block *= c1
		block = bits.RotateLeft32(block, 15)
		block *= c2
		hash ^= block
		hash = bits.RotateLeft32(hash, 13)
		hash = hash*5 + 0xe6546b64
	}
	hash ^= 8
	hash ^= hash >> 16
	hash *= 0x85ebca6b
	hash ^= hash >> 13
	hash *= 0xc2b2ae35
	hash ^= hash >> 16
	return hash
}

// PartitionDirectory is where a partition keeps its segments under the
// data directory: {root}/streams/{stream}/topics/{topic}/partitions/{partition}.
func PartitionDirectory(root string, key PartitionKey) string {
	return filepath.Join(root, "streams", strconv.FormatUint(uint64(key.Stream), 10),
		"topics", strconv.FormatUint(uint64(key.Topic), 10),
		"partitions", strconv.FormatUint(uint64(key.Partition), 10))
}
