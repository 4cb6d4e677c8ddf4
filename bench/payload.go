package bench

import (
	"math/rand/v2"
	"time"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
)

// alphabet is what payload bytes are drawn from, as iggy-bench's are.
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// newPayloadPool returns PayloadPoolBytes random alphanumeric bytes.
func newPayloadPool(random *rand.Rand) []byte {
	pool := make([]byte, PayloadPoolBytes)
	for index := range pool {
		pool[index] = alphabet[random.IntN(len(alphabet))]
	}
	return pool
}

// batcher builds one actor's batches: sizes drawn from the configured
// ranges by the actor's own seeded stream, payloads sliced from the shared
// pool (the client copies them into the frame), ids unique per run.
type batcher struct {
	pool     []byte
	random   *rand.Rand
	sizes    Range
	counts   Range
	idHigh   uint64
	sequence uint64
	messages []wire.OutgoingMessage
}

func newBatcher(pool []byte, seed uint64, actor uint64, sizes, counts Range) *batcher {
	invariant.Assert(int(sizes.Max) <= len(pool), "the payload pool holds at least one message")
	random := rand.New(rand.NewPCG(seed, actor))
	// The high half of every id is drawn once per actor, so ids stay unique
	// across runs that reuse streams; the low half counts.
	return &batcher{pool: pool, random: random, sizes: sizes, counts: counts, idHigh: random.Uint64() | 1,
		messages: make([]wire.OutgoingMessage, 0, counts.Max)}
}

// draw returns a value of r.
func (b *batcher) draw(r Range) uint32 {
	if r.Fixed() {
		return r.Min
	}
	return r.Min + uint32(b.random.IntN(int(r.Max-r.Min)+1))
}

// drawCount draws the message count of the next batch.
func (b *batcher) drawCount() uint32 { return b.draw(b.counts) }

// next builds a batch of count messages, each stamped with origin. The
// returned slice is reused by the following call.
func (b *batcher) next(count uint32, origin time.Time) (messages []wire.OutgoingMessage, userBytes uint64) {
	stamp := uint64(origin.UnixMicro())
	b.messages = b.messages[:0]
	for range count {
		size := int(b.draw(b.sizes))
		start := b.random.IntN(len(b.pool) - size + 1)
		b.sequence++
		b.messages = append(b.messages, wire.OutgoingMessage{
			ID:              wire.Uint128{Lo: b.sequence, Hi: b.idHigh},
			OriginTimestamp: stamp,
			Payload:         b.pool[start : start+size : start+size],
		})
		userBytes += uint64(size)
	}
	invariant.Assert(len(b.messages) == int(count), "a batch holds the drawn count")
	return b.messages, userBytes
}

// batchWireBytes is a batch's size with headers, as total_bytes counts it.
func batchWireBytes(messages, userBytes uint64) uint64 {
	return wire.BatchHeaderBytes + messages*wire.MessageHeaderBytes + userBytes
}
