package client

import (
	"sync"

	"github.com/whippetio/whippet/wire"
)

// topicCache keeps what a send needs to pick a partition the way the
// official Go SDK does (round robin per topic for Balanced, XXH32(key) mod
// the partition count for keys) without a metadata round trip per batch.
type topicCache struct {
	mu         sync.Mutex
	partitions map[string]uint32
	cursors    map[string]uint32
}

func topicKey(stream, topic wire.Identifier) string {
	buffer := make([]byte, 0, stream.EncodedSize()+topic.EncodedSize())
	for _, id := range [...]wire.Identifier{stream, topic} {
		body := wire.StreamTarget{Stream: id}
		encoded := make([]byte, body.EncodedSize())
		body.Encode(encoded)
		buffer = append(buffer, encoded...)
	}
	return string(buffer)
}

func (t *topicCache) partitionsCount(key string) (uint32, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	count, ok := t.partitions[key]
	return count, ok
}

func (t *topicCache) setPartitionsCount(key string, count uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.partitions == nil {
		t.partitions = map[string]uint32{}
	}
	t.partitions[key] = count
}

func (t *topicCache) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.partitions, key)
}

// choose resolves Balanced and MessagesKey partitioning to a partition id,
// advancing the topic's round-robin cursor for Balanced.
func (t *topicCache) choose(key string, partitioning wire.Partitioning, count uint32) uint32 {
	if partitioning.Kind != wire.PartitioningBalanced {
		return partitioning.Select(count, 0)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cursors == nil {
		t.cursors = map[string]uint32{}
	}
	cursor := t.cursors[key]
	t.cursors[key] = cursor + 1
	return partitioning.Select(count, cursor)
}

func (t *topicCache) forgetAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.partitions)
}
