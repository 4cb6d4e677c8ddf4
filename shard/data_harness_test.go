package shard

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/wire"
)

// dataHarness runs a real runtime with a data plane on t.TempDir() data
// and lets a test run closures on a chosen shard's thread: each shard
// drains its inject channel from a fast periodic timer.
type dataHarness struct {
	t       testing.TB
	rt      *Runtime
	data    *Data
	inject  []chan func(ds *DataShard)
	stopped bool
}

// testLogger keeps the data plane's logs out of the test output unless
// -v is given.
func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.Default()
	}
	return slog.New(slog.DiscardHandler)
}

// dataTestCacheBytes is the tests' per-shard cache: enough for what they
// write, far below the default, because tests start many runtimes.
const dataTestCacheBytes = 32 << 20

// dataInjectPeriod is how often a test shard looks for injected work.
const dataInjectPeriod = 100 * time.Microsecond

func startData(t testing.TB, backend string, options DataOptions, adjust ...func(*Options)) *dataHarness {
	t.Helper()
	return startDataWith(t, backend, options, nil, adjust...)
}

// startDataWith is startData with onStart run on each shard's thread
// right after the data plane's OnStart (partitions still recovering).
func startDataWith(t testing.TB, backend string, options DataOptions, onStart func(ds *DataShard), adjust ...func(*Options)) *dataHarness {
	t.Helper()
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) > 2 {
		cpus = cpus[:2]
	}
	if options.Logger == nil {
		options.Logger = testLogger()
	}
	if options.CacheBytes == 0 {
		options.CacheBytes = dataTestCacheBytes
	}
	data, err := NewData(options)
	if err != nil {
		t.Fatal(err)
	}
	h := &dataHarness{t: t, data: data, inject: make([]chan func(*DataShard), len(cpus))}
	for index := range h.inject {
		h.inject[index] = make(chan func(*DataShard), 1024)
	}
	runtimeOptions := data.Install(Options{Backend: backend, CPUs: cpus, Logger: options.Logger, OnStart: func(sh *Shard) {
		ds, queue := data.Local(sh), h.inject[sh.ID()]
		if onStart != nil {
			onStart(ds)
		}
		_, err := sh.Every(dataInjectPeriod, func(time.Time) {
			for range len(queue) {
				(<-queue)(ds)
			}
		})
		if err != nil {
			panic("test timer refused")
		}
	}})
	for _, change := range adjust {
		change(&runtimeOptions)
	}
	h.rt, err = Start(runtimeOptions)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.stop)
	return h
}

func (h *dataHarness) shardCount() int { return len(h.inject) }

// stop shuts the runtime down (partitions closed and synced).
func (h *dataHarness) stop() {
	if h.stopped {
		return
	}
	h.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.rt.Shutdown(ctx); err != nil {
		h.t.Errorf("shutdown: %v", err)
	}
	// t.Cleanup keeps h until the test ends: let the stopped runtime's
	// memory (caches, partitions) go now, tests restart many times.
	h.rt, h.data = nil, nil
}

// on runs fn on shard's thread and waits for it to return.
func (h *dataHarness) on(shard int, fn func(ds *DataShard)) {
	done := make(chan struct{})
	h.inject[shard] <- func(ds *DataShard) { fn(ds); close(done) }
	h.wait(done)
}

func (h *dataHarness) waitTimeout() <-chan time.Time { return time.After(60 * time.Second) }

func (h *dataHarness) wait(done <-chan struct{}) {
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		h.t.Fatal("shard did not answer within 30 s")
	}
}

// dataResult is a copy of a finished op's results, taken on the shard.
type dataResult struct {
	Err           error
	BaseOffset    uint64
	Messages      uint32
	OffsetFirst   uint64
	OffsetLast    uint64
	CurrentOffset uint64
	Offset        uint64
	Found         bool
	Out           []byte
	Partition     engine.Stats
	Stats         []PartitionStats
	Shards        []ShardDataStats
	SegmentCount  int
}

// call starts one op on shard (fill sets its inputs and starts it), waits
// for Done and returns the results.
func (h *dataHarness) call(shard int, fill func(ds *DataShard, op *DataOp)) dataResult {
	done := make(chan dataResult, 1)
	h.inject[shard] <- func(ds *DataShard) {
		op := ds.Get()
		op.Done = func(op *DataOp) {
			result := dataResult{Err: op.Err, BaseOffset: op.BaseOffset, Messages: op.Messages,
				OffsetFirst: op.OffsetFirst, OffsetLast: op.OffsetLast, CurrentOffset: op.CurrentOffset,
				Offset: op.Offset, Found: op.Found, Partition: op.Partition, SegmentCount: op.SegmentCount,
				Out: append([]byte(nil), op.Out...), Stats: op.Stats, Shards: op.Shards}
			ds.Put(op)
			done <- result
		}
		fill(ds, op)
	}
	select {
	case result := <-done:
		return result
	case <-time.After(30 * time.Second):
		h.t.Fatal("op did not complete within 30 s")
	}
	return dataResult{}
}

func (h *dataHarness) create(key PartitionKey, count int, config PartitionConfig) {
	h.t.Helper()
	result := h.call(0, func(ds *DataShard, op *DataOp) {
		op.Key, op.PartitionCount, op.Config = key, count, config
		ds.Create(op)
	})
	if result.Err != nil {
		h.t.Fatalf("create %v ×%d: %v", key, count, result.Err)
	}
}

func (h *dataHarness) append(shard int, key PartitionKey, batch []byte) dataResult {
	return h.call(shard, func(ds *DataShard, op *DataOp) {
		op.Key, op.Batch = key, batch
		ds.Append(op)
	})
}

func (h *dataHarness) poll(shard int, key PartitionKey, strategy engine.PollStrategy, value uint64, count uint32, consumer engine.Consumer, autoCommit bool) dataResult {
	return h.call(shard, func(ds *DataShard, op *DataOp) {
		op.Key, op.Strategy, op.Value, op.Count, op.Consumer, op.AutoCommit = key, strategy, value, count, consumer, autoCommit
		op.Out = make([]byte, 0, 4<<20)
		ds.Poll(op)
	})
}

// testBatch encodes count messages whose payloads name their sequence
// numbers first..first+count-1, as a producer would.
func testBatch(first, count int, payloadBytes int) []byte {
	messages := make([]wire.OutgoingMessage, count)
	for index := range messages {
		payload := make([]byte, max(payloadBytes, 8))
		binary.LittleEndian.PutUint64(payload, uint64(first+index))
		messages[index] = wire.OutgoingMessage{ID: wire.Uint128{Lo: uint64(first + index + 1)},
			OriginTimestamp: 1_700_000_000_000_000, Payload: payload}
	}
	batch := make([]byte, wire.BatchBytes(messages))
	wire.EncodeBatch(batch, messages)
	if _, err := wire.ValidateBatch(batch); err != nil {
		panic(fmt.Sprintf("test batch invalid: %v", err))
	}
	return batch
}

// decodeSequences verifies poll output record by record and returns each
// message's offset and the sequence number in its payload.
func decodeSequences(t testing.TB, out []byte) (offsets, sequences []uint64) {
	t.Helper()
	for position := 0; position < len(out); {
		if len(out)-position < wire.BatchHeaderBytes {
			t.Fatalf("record at %d: %d bytes left, less than a header", position, len(out)-position)
		}
		length := int(binary.LittleEndian.Uint64(out[position+32:]))
		if length > len(out)-position {
			t.Fatalf("record at %d: batch_length %d past the output", position, length)
		}
		record := out[position : position+length]
		header, err := wire.VerifyRecord(record)
		if err != nil {
			t.Fatalf("record at %d: %v", position, err)
		}
		iterator := wire.Messages(record)
		for {
			message, ok := iterator.Next()
			if !ok {
				break
			}
			offsets = append(offsets, message.Offset)
			sequences = append(sequences, binary.LittleEndian.Uint64(message.Payload))
		}
		position += int(header.BatchLength)
	}
	return offsets, sequences
}

// keysOwnedBy returns count partition keys of topic (stream, topic) whose
// owner is shard, among the first partitions of the topic.
func keysOwnedBy(stream, topic uint32, shard, shardCount, count int) []PartitionKey {
	var keys []PartitionKey
	for partition := uint32(0); len(keys) < count; partition++ {
		key := PartitionKey{Stream: stream, Topic: topic, Partition: partition}
		if OwnerOf(key, shardCount) == shard {
			keys = append(keys, key)
		}
	}
	return keys
}
