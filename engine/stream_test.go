package engine_test

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
	"github.com/whippetio/whippet/wire"
)

// Tests of batches appended while they arrive (stream.go). Method: with
// the in-memory storage, a large batch is fed in seeded random chunks
// with the storage completing one op now and then, as receives and disk
// writes interleave on a shard. The tests look at the file between
// steps (no header before the end, pieces after it), crash at each point
// that matters and reopen the clone, corrupt a frame mid-stream, abort,
// and fail a piece's write. MemStorage panics when a write's bytes
// change while it is in flight.

// streamFeeder feeds one streamed batch in random chunks.
type streamFeeder struct {
	t      *testing.T
	mem    *enginetest.MemStorage
	p      *engine.Partition
	random *rand.Rand
	record []byte
	id     uint64
	fed    int
}

// openStream opens a stream for record with its first chunk arrived.
func openStream(t *testing.T, mem *enginetest.MemStorage, p *engine.Partition, record []byte, seed uint64) *streamFeeder {
	t.Helper()
	f := &streamFeeder{t: t, mem: mem, p: p, random: rand.New(rand.NewPCG(seed, 5)), record: record}
	f.fed = 300 + f.random.IntN(60<<10)
	id, err := p.StreamOpen(record[:f.fed], len(record), 20)
	if err != nil {
		t.Fatalf("stream open: %v", err)
	}
	f.id = id
	return f
}

// feed feeds chunks until at least until bytes arrived (never all of the
// record), completing a storage op now and then; it returns the first
// error.
func (f *streamFeeder) feed(until int) error {
	for f.fed < min(until, len(f.record)-1) {
		f.fed = min(f.fed+1+f.random.IntN(96<<10), len(f.record)-1)
		if err := f.p.StreamFeed(f.id, f.record[:f.fed]); err != nil {
			return err
		}
		if f.random.IntN(2) == 0 {
			f.mem.Run(1)
		}
	}
	return nil
}

// finish feeds the rest and finishes; done counts acknowledgements.
func (f *streamFeeder) finish(done *int) (*engine.AppendOp, error) {
	f.t.Helper()
	if err := f.feed(len(f.record)); err != nil {
		return nil, err
	}
	op := &engine.AppendOp{Batch: f.record, Timestamp: 20, Done: func(*engine.AppendOp) { *done++ }}
	return op, f.p.StreamFinish(f.id, op)
}

// TestStreamAppend: a streamed batch is written in pieces while it
// arrives and its header block only at the end; before that nothing is
// acknowledged or visible, other appends wait (ErrBusy), and the log's
// bytes at the batch's position are not a header. Afterwards the record
// on disk verifies with an independently computed checksum and every
// message polls back; a second streamed batch follows the first.
func TestStreamAppend(t *testing.T) {
	for _, durability := range []engine.Durability{engine.DurabilityWritten, engine.DurabilityPersisted} {
		t.Run(durability.String(), func(t *testing.T) {
			mem, p, _, serial := piecedSetup(t, 21, durability)
			start := p.SizeBytes()
			large := enginetest.Batch(5, largeMessages(&serial, 64)...)
			f := openStream(t, mem, p, large, 1)
			if err := f.feed(len(large) * 3 / 4); err != nil {
				t.Fatal(err)
			}
			memBackend{mem}.drain()
			file, _ := mem.File(firstLog)
			if int64(len(file)) <= start+256<<10 {
				t.Fatalf("after 3/4 of the batch arrived the log holds %d bytes (batch at %d)", len(file), start)
			}
			headerEnd := (start + 256 + 4095) &^ 4095 // blockBytes
			for at := start; at < headerEnd; at++ {
				if file[at] != 0 {
					t.Fatalf("byte %d of the header block(s) is %#x before the batch was complete: a header could be read there", at, file[at])
				}
			}
			other := &engine.AppendOp{Batch: enginetest.Batch(6, randomMessages(newRandom(3), &serial, 2, 500)...),
				Timestamp: 21, Done: func(*engine.AppendOp) {}}
			if err := p.Append(other); !errors.Is(err, engine.ErrBusy) {
				t.Fatalf("append during a stream: %v, want ErrBusy", err)
			}
			done := 0
			op, err := f.finish(&done)
			if err != nil {
				t.Fatal(err)
			}
			if done != 0 || p.OffsetNext() != 3 {
				t.Fatalf("before the final writes: acks %d, visible end %d", done, p.OffsetNext())
			}
			memBackend{mem}.drain()
			if done != 1 || op.Err != nil || op.BaseOffset != 3 || p.OffsetNext() != 67 || p.StreamedBatches() != 1 {
				t.Fatalf("acks %d, error %v, base %d, visible end %d, streamed %d", done, op.Err, op.BaseOffset,
					p.OffsetNext(), p.StreamedBatches())
			}
			file, _ = mem.File(firstLog)
			checkStamped(t, file[start:start+int64(len(large))], 3, 20)
			if durability == engine.DurabilityPersisted && mem.Syncs == 0 {
				t.Fatal("a persisted stream was never synced")
			}
			serial = 67
			again, err := openStream(t, mem, p, enginetest.Batch(7, largeMessages(&serial, 64)...), 2).finish(&done)
			memBackend{mem}.drain()
			if err != nil || again.BaseOffset != 67 || done != 2 {
				t.Fatalf("second stream: base %d, acks %d: %v", again.BaseOffset, done, err)
			}
			checkMessages(t, memBackend{mem}, p, 0, 131)
		})
	}
}

// TestStreamCrashPoints crashes (a seeded share of unsynced writes kept,
// ops in flight lost) after some data pieces, with the final writes
// queued, and once the header write (the last, after every data piece)
// completed but before its sync: every reopen recovers exactly the
// acknowledged batch, cutting the streamed one, and appends again at its
// offsets. The header case is checked to have happened.
func TestStreamCrashPoints(t *testing.T) {
	headerOnly := 0
	for seed := uint64(1); seed <= 24; seed++ {
		// Persisted: the acknowledged batch is synced, so every crash keeps it.
		mem, p, options, serial := piecedSetup(t, seed, engine.DurabilityPersisted)
		start := p.SizeBytes()
		large := enginetest.Batch(5, largeMessages(&serial, 64)...)
		f := openStream(t, mem, p, large, seed)
		if err := f.feed(len(large) / 2); err != nil {
			t.Fatal(err)
		}
		// headerRan: the op just completed wrote at or before the batch's
		// start (read at completion: the op is reused by its callback).
		headerRan := false
		mem.Inject = func(op *engine.Op) error {
			headerRan = op.Code == engine.OpWrite && op.Position <= start
			return nil
		}
		point := seed % 3
		if point > 0 {
			done := 0
			if _, err := f.finish(&done); err != nil {
				t.Fatal(err)
			}
			if point == 2 {
				for mem.Pending() > 0 && !headerRan {
					mem.Run(1)
				}
				if mem.Pending() == 0 {
					continue // everything completed: not this case
				}
				headerOnly++
			}
		}
		clone := memBackend{mem.Crash(seed * 13)}
		reopened := mustOpen(t, clone, options)
		if reopened.OffsetNext() != 3 {
			t.Fatalf("seed %d point %d: recovered up to %d, want the 3 acknowledged offsets", seed, point, reopened.OffsetNext())
		}
		if got := reopened.SizeBytes(); got != start {
			t.Fatalf("seed %d point %d: recovered log of %d bytes, want %d", seed, point, got, start)
		}
		serial = 3
		op, err := appendBatch(t, clone, reopened, enginetest.Batch(5, largeMessages(&serial, 64)...), 30)
		if err != nil || op.BaseOffset != 3 {
			t.Fatalf("seed %d: append after the crash at %d: %v", seed, op.BaseOffset, err)
		}
		checkMessages(t, clone, reopened, 0, 67)
	}
	if headerOnly == 0 {
		t.Fatal("no seed crashed with the header written and its sync not")
	}
}

// corruptFrame flips a payload byte of the frame starting at or after
// position: its checksum fails.
func corruptFrame(record []byte, position int) {
	at := 256
	for at < position {
		at += 48 + int(binary.LittleEndian.Uint32(record[at+36:])) + int(binary.LittleEndian.Uint32(record[at+32:]))
	}
	record[at+60] ^= 0xff
}

// TestStreamInvalidMidStream: a frame that fails its checksum in the
// second half of the batch ends the stream with the status admission
// gives; pieces already written are truncated away before the next
// append, a crash before that truncation recovers the acknowledged
// batch only, and the next batches (whole and streamed) take the
// offsets.
func TestStreamInvalidMidStream(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		mem, p, options, serial := piecedSetup(t, seed, engine.DurabilityPersisted)
		large := enginetest.Batch(5, largeMessages(&serial, 64)...)
		corruptFrame(large, len(large)*2/3)
		f := openStream(t, mem, p, large, seed)
		err := f.feed(len(large))
		if !errors.Is(err, engine.ErrInvalidBatch) || wire.StatusOf(err) != wire.StatusInvalidMessageChecksum {
			t.Fatalf("seed %d: feed of a corrupt frame: %v (status %v)", seed, err, wire.StatusOf(err))
		}
		if _, again := f.finish(new(int)); !errors.Is(again, engine.ErrInvalidBatch) {
			t.Fatalf("seed %d: finish after the failure: %v", seed, again)
		}
		if seed%2 == 0 {
			clone := memBackend{mem.Crash(seed)}
			if reopened := mustOpen(t, clone, options); reopened.OffsetNext() != 3 {
				t.Fatalf("seed %d: crash after a failed stream recovered up to %d", seed, reopened.OffsetNext())
			}
		}
		memBackend{mem}.drain()
		if file, _ := mem.File(firstLog); int64(len(file)) != p.SizeBytes() {
			t.Fatalf("seed %d: log of %d bytes after the failed stream, segment %d", seed, len(file), p.SizeBytes())
		}
		serial = 3
		small := enginetest.Batch(6, randomMessages(newRandom(seed), &serial, 2, 500)...)
		if op, err := appendBatch(t, memBackend{mem}, p, small, 30); err != nil || op.BaseOffset != 3 {
			t.Fatalf("seed %d: append after the failed stream: %v", seed, err)
		}
		op, err := openStream(t, mem, p, enginetest.Batch(7, largeMessages(&serial, 64)...), seed).finish(new(int))
		memBackend{mem}.drain()
		if err != nil || op.BaseOffset != 5 || op.Err != nil {
			t.Fatalf("seed %d: stream after the failed one: %v", seed, err)
		}
		closePartition(t, memBackend{mem}, p)
		checkMessages(t, memBackend{mem}, mustOpen(t, memBackend{mem}, options), 0, 69)
	}
}

// TestStreamAbort drops a stream with a piece in flight (its connection
// closed): nothing is stored, the log is cut back, and the partition
// appends again; a stream open when the partition closes is dropped and
// the close completes.
func TestStreamAbort(t *testing.T) {
	mem, p, options, serial := piecedSetup(t, 4, engine.DurabilityWritten)
	large := enginetest.Batch(5, largeMessages(&serial, 64)...)
	f := openStream(t, mem, p, large, 9)
	if err := f.feed(len(large) / 2); err != nil {
		t.Fatal(err)
	}
	p.StreamAbort(f.id)
	if err := p.StreamFeed(f.id, large[:f.fed+1]); !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("feed after abort: %v", err)
	}
	memBackend{mem}.drain()
	if file, _ := mem.File(firstLog); int64(len(file)) != p.SizeBytes() || p.OffsetNext() != 3 {
		t.Fatalf("after the abort: log %d bytes, segment %d, visible end %d", len(file), p.SizeBytes(), p.OffsetNext())
	}
	serial = 3
	if op, err := appendBatch(t, memBackend{mem}, p, enginetest.Batch(5, largeMessages(&serial, 64)...), 30); err != nil || op.BaseOffset != 3 {
		t.Fatalf("append after the abort: %v", err)
	}
	g := openStream(t, mem, p, enginetest.Batch(6, largeMessages(&serial, 64)...), 10)
	if err := g.feed(len(large) / 3); err != nil {
		t.Fatal(err)
	}
	closePartition(t, memBackend{mem}, p)
	reopened := mustOpen(t, memBackend{mem}, options)
	if reopened.OffsetNext() != 67 || reopened.TornBytes() != 0 {
		t.Fatalf("reopened at %d with %d torn bytes", reopened.OffsetNext(), reopened.TornBytes())
	}
	checkMessages(t, memBackend{mem}, reopened, 0, 67)
}

// TestStreamPieceWriteFails fails a data piece's write (EIO): the stream
// ends without storing (not ErrInvalidBatch: the batch may be appended
// whole), and the whole append then lands at the same offset.
func TestStreamPieceWriteFails(t *testing.T) {
	mem, p, _, serial := piecedSetup(t, 6, engine.DurabilityWritten)
	large := enginetest.Batch(5, largeMessages(&serial, 64)...)
	mem.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpWrite && len(op.Buffer) >= 128<<10 {
			return syscall.EIO
		}
		return nil
	}
	f := openStream(t, mem, p, large, 3)
	err := f.feed(len(large))
	if err == nil {
		memBackend{mem}.drain()
		_, err = f.finish(new(int))
	}
	if err == nil || errors.Is(err, engine.ErrInvalidBatch) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("stream with a failed piece: %v", err)
	}
	mem.Inject = nil
	memBackend{mem}.drain()
	op, err := appendBatch(t, memBackend{mem}, p, large, 30)
	if err != nil || op.BaseOffset != 3 {
		t.Fatalf("whole append after the failed stream: %v", err)
	}
	checkMessages(t, memBackend{mem}, p, 0, 67)
}

// TestStreamYieldsToFlush: a Flush while a stream receives drops the
// stream (its request would keep the flush waiting as long as its
// client takes), the flush completes, and the batch, appended whole,
// lands at the offset it would have had.
func TestStreamYieldsToFlush(t *testing.T) {
	for _, fsync := range []bool{false, true} {
		mem, p, _, serial := piecedSetup(t, 8, engine.DurabilityWritten)
		large := enginetest.Batch(5, largeMessages(&serial, 64)...)
		f := openStream(t, mem, p, large, 4)
		if err := f.feed(len(large) / 2); err != nil {
			t.Fatal(err)
		}
		flushed := 0
		flush := p.Flush
		if fsync {
			flush = p.Sync
		}
		if err := flush(func(err error) {
			if err != nil {
				t.Errorf("flush: %v", err)
			}
			flushed++
		}); err != nil {
			t.Fatal(err)
		}
		if err := p.StreamFeed(f.id, large[:f.fed+1]); !errors.Is(err, engine.ErrClosed) {
			t.Fatalf("feed after a flush: %v, want ErrClosed", err)
		}
		memBackend{mem}.drain()
		if flushed != 1 {
			t.Fatalf("flush completed %d times", flushed)
		}
		if _, err := f.finish(new(int)); !errors.Is(err, engine.ErrClosed) {
			t.Fatalf("finish of a dropped stream: %v, want ErrClosed", err)
		}
		if op, err := appendBatch(t, memBackend{mem}, p, large, 30); err != nil || op.BaseOffset != 3 {
			t.Fatalf("whole append after the dropped stream: %v", err)
		}
		checkMessages(t, memBackend{mem}, p, 0, 67)
	}
}

// TestStreamFinalWriteFails fails the header write (EIO): the batch is
// not acknowledged and fails, its offsets are handed out again, the log
// is cut back to the acknowledged end, and the next append takes them.
func TestStreamFinalWriteFails(t *testing.T) {
	mem, p, options, serial := piecedSetup(t, 12, engine.DurabilityWritten)
	start := p.SizeBytes()
	large := enginetest.Batch(5, largeMessages(&serial, 64)...)
	f := openStream(t, mem, p, large, 6)
	if err := f.feed(len(large) / 2); err != nil {
		t.Fatal(err)
	}
	mem.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpWrite && op.Position <= start && len(op.Buffer) <= 8192 {
			return syscall.EIO // the header block(s)
		}
		return nil
	}
	done := 0
	op, err := f.finish(&done)
	if err != nil {
		t.Fatal(err)
	}
	memBackend{mem}.drain()
	if done != 1 || !errors.Is(op.Err, syscall.EIO) || p.OffsetNext() != 3 {
		t.Fatalf("failed header write: acks %d, error %v, visible end %d", done, op.Err, p.OffsetNext())
	}
	if file, _ := mem.File(firstLog); int64(len(file)) != p.SizeBytes() {
		t.Fatalf("log of %d bytes after the failed header write, segment %d", len(file), p.SizeBytes())
	}
	mem.Inject = nil
	serial = 3
	if again, err := appendBatch(t, memBackend{mem}, p, enginetest.Batch(5, largeMessages(&serial, 64)...), 30); err != nil || again.BaseOffset != 3 {
		t.Fatalf("append after the failed stream: %v", err)
	}
	closePartition(t, memBackend{mem}, p)
	checkMessages(t, memBackend{mem}, mustOpen(t, memBackend{mem}, options), 0, 67)
}
