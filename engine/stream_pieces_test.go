package engine_test

import (
	"errors"
	"syscall"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// Tests of a stream's data pieces in flight together (stream.go). Method:
// a batch is fed in 150 KiB chunks while the in-memory storage completes
// nothing, so pieces pile up; then they complete in the storage's seeded
// order, a failure is injected into one of several in flight, or the
// stream is dropped with them in flight.

// piecesChunk is the feeding step: each chunk is a piece of its own.
const piecesChunk = 150 << 10

// streamedPartition opens a partition whose large batches are streamed
// into regions its cache lends (lent: several pieces in flight) or into
// its own journal (one piece at a time).
func streamedPartition(t *testing.T, seed uint64, lent bool) (*enginetest.MemStorage, memBackend, *engine.Partition,
	engine.PartitionOptions) {
	t.Helper()
	mem, storage, cache := drainedCache(t, seed, 64<<20, nil)
	options := testOptions()
	options.SegmentBytes = 64 << 20
	if lent {
		options.Cache = cache
	}
	return mem, storage, mustOpen(t, storage, options), options
}

// feedUnrun opens a stream for record and feeds all of it but its last
// byte in piecesChunk steps, completing nothing; it returns the stream's
// id and the most writes in flight seen.
func feedUnrun(t *testing.T, mem *enginetest.MemStorage, p *engine.Partition, record []byte) (uint64, int) {
	t.Helper()
	id, err := p.StreamOpen(record[:4096], len(record), 20)
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for fed := 4096; fed < len(record)-1; {
		fed = min(fed+piecesChunk, len(record)-1)
		if err := p.StreamFeed(id, record[:fed]); err != nil {
			t.Fatal(err)
		}
		most = max(most, mem.PendingOps(engine.OpWrite))
	}
	return id, most
}

// TestStreamPiecesInFlight: a stream into a lent region keeps up to 4
// data pieces in flight, one into its own journal (a registered buffer
// lends itself to one write at a time); they complete in any order, the
// header block(s) are written only once no piece is in flight, and the
// batch reads back stamped as a whole append would be.
func TestStreamPiecesInFlight(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		lent := seed%2 == 1
		mem, storage, p, options := streamedPartition(t, seed, lent)
		serial := uint64(0)
		record := enginetest.Batch(5, largeMessages(&serial, 100)...)
		id, most := feedUnrun(t, mem, p, record)
		if want := map[bool]int{true: 4, false: 1}[lent]; most != want {
			t.Fatalf("seed %d (lent %v): %d writes in flight at most; want %d", seed, lent, most, want)
		}
		headerWrites, done := 0, 0
		mem.Inject = func(op *engine.Op) error {
			if op.Code == engine.OpWrite && op.Position == 0 && done == 0 { // not the index's, written after the ack
				headerWrites++
				if pieces := mem.PendingOps(engine.OpWrite); pieces != 0 {
					t.Errorf("seed %d: the header went out with %d pieces in flight", seed, pieces)
				}
			}
			return nil
		}
		op := &engine.AppendOp{Batch: record, Timestamp: 20, Done: func(*engine.AppendOp) { done++ }}
		if err := p.StreamFinish(id, op); err != nil {
			t.Fatal(err)
		}
		storage.drain()
		if done != 1 || op.Err != nil || headerWrites != 1 || p.StreamedBatches() != 1 {
			t.Fatalf("seed %d: %d acks, %d header writes, %d streamed: %v", seed, done, headerWrites,
				p.StreamedBatches(), op.Err)
		}
		file, _ := mem.File(firstLog)
		checkStamped(t, file[:len(record)], 0, 20)
		closePartition(t, storage, p)
		checkMessages(t, storage, mustOpen(t, storage, options), 0, 100)
	}
}

// TestStreamPieceFailsAmongOthers fails one of several pieces in flight,
// while the batch still arrives or once it is complete: the stream ends
// without storing after every other piece completed (ErrBusy until
// then), the log holds nothing but zeros past its batches, and the batch
// appended whole lands at the same offset and survives a reopen.
func TestStreamPieceFailsAmongOthers(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		mem, storage, p, options := streamedPartition(t, seed, true)
		serial := uint64(0)
		first := enginetest.Batch(5, largeMessages(&serial, 3)...)
		if _, err := appendBatch(t, storage, p, first, 10); err != nil {
			t.Fatal(err)
		}
		record := enginetest.Batch(5, largeMessages(&serial, 100)...)
		id, most := feedUnrun(t, mem, p, record)
		pieces := 0
		failing := 1 + int(seed)%most
		mem.Inject = func(op *engine.Op) error {
			if op.Code != engine.OpWrite || len(op.Buffer) < 128<<10 {
				return nil
			}
			if pieces++; pieces == failing {
				return syscall.EIO
			}
			return nil
		}
		finishing := seed%2 == 0
		op := &engine.AppendOp{Batch: record, Timestamp: 20, Done: func(*engine.AppendOp) {}}
		if finishing {
			if err := p.StreamFinish(id, op); err != nil {
				t.Fatal(err)
			}
		}
		mem.Run(failing)
		if err := p.Append(&engine.AppendOp{Batch: first, Timestamp: 30, Done: func(*engine.AppendOp) {}}); !errors.Is(err, engine.ErrBusy) && mem.PendingOps(engine.OpWrite) > 0 {
			t.Fatalf("seed %d: an append with pieces in flight: %v", seed, err)
		}
		storage.drain()
		if !finishing {
			op.Err = p.StreamFinish(id, op)
		}
		if !errors.Is(op.Err, syscall.EIO) || p.OffsetNext() != 3 {
			t.Fatalf("seed %d (finishing %v): the failed stream: %v, next offset %d", seed, finishing, op.Err, p.OffsetNext())
		}
		storage.drain()
		file, _ := mem.File(firstLog)
		if zeroTail(file[p.SizeBytes():]) != len(file)-int(p.SizeBytes()) {
			t.Fatalf("seed %d: the log holds more than zeros past its batches", seed)
		}
		mem.Inject = nil
		if again, err := appendBatch(t, storage, p, record, 30); err != nil || again.BaseOffset != 3 {
			t.Fatalf("seed %d: the whole append after the failure: %v", seed, err)
		}
		closePartition(t, storage, p)
		checkMessages(t, storage, mustOpen(t, storage, options), 0, 103)
	}
}

// TestStreamAbortWithPiecesInFlight drops a stream with pieces in
// flight: the partition refuses appends (ErrBusy) until they completed,
// then cuts the log back to its batches; a reopen finds no torn bytes.
func TestStreamAbortWithPiecesInFlight(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		mem, storage, p, options := streamedPartition(t, seed, true)
		serial := uint64(0)
		small := enginetest.Batch(5, largeMessages(&serial, 3)...)
		if _, err := appendBatch(t, storage, p, small, 10); err != nil {
			t.Fatal(err)
		}
		id, most := feedUnrun(t, mem, p, enginetest.Batch(5, largeMessages(&serial, 100)...))
		p.StreamAbort(id)
		if err := p.Append(&engine.AppendOp{Batch: small, Timestamp: 30, Done: func(*engine.AppendOp) {}}); most != 4 || !errors.Is(err, engine.ErrBusy) {
			t.Fatalf("seed %d: an append after the abort with %d pieces in flight: %v", seed, most, err)
		}
		storage.drain()
		file, _ := mem.File(firstLog)
		if zeroTail(file[p.SizeBytes():]) != len(file)-int(p.SizeBytes()) {
			t.Fatalf("seed %d: the log holds more than zeros past its batches after the abort", seed)
		}
		serial = 3
		if again, err := appendBatch(t, storage, p, enginetest.Batch(5, largeMessages(&serial, 10)...), 30); err != nil || again.BaseOffset != 3 {
			t.Fatalf("seed %d: append after the abort: %v", seed, err)
		}
		closePartition(t, storage, p)
		reopened := mustOpen(t, storage, options)
		if reopened.TornBytes() != 0 {
			t.Fatalf("seed %d: %d torn bytes", seed, reopened.TornBytes())
		}
		checkMessages(t, storage, reopened, 0, 13)
	}
}
