package engine_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

var seedFlag = flag.Uint64("seed", 0, "seed for the randomized engine tests (0: time-based)")

// testSeed returns the flag's seed or a fresh one, and logs it.
func testSeed(t testing.TB) uint64 {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -seed %d)", seed, seed)
	return seed
}

// backend is a Storage the test drives to quiescence.
type backend interface {
	engine.Storage
	drain()
}

type memBackend struct{ *enginetest.MemStorage }

func (b memBackend) drain() {
	for b.Pending() > 0 {
		b.Run(1 << 20)
	}
}

type directBackend struct{ *engine.DirectStorage }

func (b directBackend) drain() {
	for b.Pending() > 0 {
		b.Poll(1 << 20)
	}
}

func openPartition(t testing.TB, storage backend, options engine.PartitionOptions) (*engine.Partition, error) {
	t.Helper()
	var opened *engine.Partition
	var openErr error
	called := 0
	engine.OpenPartition(storage, options, func(p *engine.Partition, err error) {
		opened, openErr = p, err
		called++
	})
	storage.drain()
	if called != 1 {
		t.Fatalf("open callback ran %d times", called)
	}
	return opened, openErr
}

func mustOpen(t testing.TB, storage backend, options engine.PartitionOptions) *engine.Partition {
	t.Helper()
	p, err := openPartition(t, storage, options)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return p
}

func closePartition(t testing.TB, storage backend, p *engine.Partition) {
	t.Helper()
	var closeErr error
	called := 0
	p.Close(func(err error) { closeErr, called = err, called+1 })
	storage.drain()
	if called != 1 || closeErr != nil {
		t.Fatalf("close: called %d, error %v", called, closeErr)
	}
}

// appendBatch appends and drains; it returns the op's outcome.
func appendBatch(t testing.TB, storage backend, p *engine.Partition, record []byte, timestamp uint64) (*engine.AppendOp, error) {
	t.Helper()
	op := &engine.AppendOp{Batch: record, Timestamp: timestamp}
	called := 0
	op.Done = func(*engine.AppendOp) { called++ }
	if err := p.Append(op); err != nil {
		return op, err
	}
	storage.drain()
	if called != 1 {
		t.Fatalf("append callback ran %d times", called)
	}
	return op, op.Err
}

func poll(t testing.TB, storage backend, p *engine.Partition, op *engine.PollOp) []enginetest.Message {
	t.Helper()
	called := 0
	op.Done = func(*engine.PollOp) { called++ }
	if op.Out == nil {
		op.Out = make([]byte, 0, 64<<20)
	}
	op.Out = op.Out[:0]
	if err := p.Poll(op); err != nil {
		t.Fatalf("poll: %v", err)
	}
	storage.drain()
	if called != 1 {
		t.Fatalf("poll callback ran %d times", called)
	}
	if op.Err != nil {
		t.Fatalf("poll: %v", op.Err)
	}
	messages, err := enginetest.Decode(op.Out)
	if err != nil {
		t.Fatalf("poll output: %v", err)
	}
	if len(messages) != int(op.Messages) {
		t.Fatalf("poll decoded %d messages, reported %d", len(messages), op.Messages)
	}
	return messages
}

// randomMessages builds count messages whose payload names their serial.
func randomMessages(random *rand.Rand, serial *uint64, count, payloadMax int) []enginetest.Message {
	messages := make([]enginetest.Message, count)
	for index := range messages {
		*serial++
		size := 8 + random.IntN(payloadMax)
		payload := make([]byte, size)
		copy(payload, fmt.Sprintf("m%07d", *serial))
		for at := 8; at < size; at++ {
			payload[at] = byte(*serial + uint64(at))
		}
		messages[index] = enginetest.Message{IDLow: *serial, IDHigh: 7, Payload: payload}
	}
	return messages
}

func newRandom(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed+1)) }
