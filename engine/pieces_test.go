package engine_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// Tests of large batches written in pieces (pieces.go). Method: with the
// in-memory storage, Append returns with only the first piece's write
// queued; the test completes ops one at a time and looks at the file,
// the visible offsets and the acknowledgements between them, injects
// failures into one piece, and crashes between pieces. MemStorage also
// panics when a write's bytes change between Submit and completion: the
// rest of a batch is copied while its first piece is in flight, never
// into it.

// largeMessages builds count messages of 12,000 bytes (a 64-message
// batch is ~770 KB, written in two pieces).
func largeMessages(serial *uint64, count int) []enginetest.Message {
	messages := make([]enginetest.Message, count)
	for index := range messages {
		*serial++
		payload := make([]byte, 12000)
		copy(payload, fmt.Sprintf("m%07d", *serial))
		for at := 8; at < len(payload); at++ {
			payload[at] = byte(*serial*7 + uint64(at))
		}
		messages[index] = enginetest.Message{IDLow: *serial, IDHigh: 3, Payload: payload}
	}
	return messages
}

// piecedSetup opens a partition and appends one small acknowledged
// batch, so the large one starts inside a partial block (a prefix).
func piecedSetup(t *testing.T, seed uint64, durability engine.Durability) (*enginetest.MemStorage, *engine.Partition, engine.PartitionOptions, uint64) {
	t.Helper()
	mem := enginetest.NewMemStorage(seed)
	options := testOptions()
	options.Durability = durability
	p := mustOpen(t, memBackend{mem}, options)
	serial := uint64(0)
	small := randomMessages(newRandom(seed), &serial, 3, 700)
	if _, err := appendBatch(t, memBackend{mem}, p, enginetest.Batch(1, small...), 10); err != nil {
		t.Fatal(err)
	}
	return mem, p, options, serial
}

// runWrites completes ops one at a time, in the storage's seeded order,
// until count more writes of path completed (a large batch's allocation
// ahead completes among them).
func runWrites(mem *enginetest.MemStorage, path string, count int) {
	target := mem.Writes[path] + count
	for mem.Writes[path] < target && mem.Run(1) == 1 {
	}
}

// countingAppend submits record and counts its acknowledgements.
func countingAppend(t *testing.T, p *engine.Partition, record []byte, timestamp uint64, done *int) *engine.AppendOp {
	t.Helper()
	op := &engine.AppendOp{Batch: record, Timestamp: timestamp, Done: func(*engine.AppendOp) { *done++ }}
	if err := p.Append(op); err != nil {
		t.Fatalf("append: %v", err)
	}
	return op
}

// TestPiecesWriteBeforeTheBatchIsAcknowledged: the first piece is queued
// (and kicked) before Append returns; after it is written the batch is
// neither acknowledged nor visible, and the piece on disk already holds
// the final, stamped header; after the rest it is both, and the record on
// disk verifies with an independently computed checksum. A small batch
// appended meanwhile waits for the pieced write and follows it.
func TestPiecesWriteBeforeTheBatchIsAcknowledged(t *testing.T) {
	for _, durability := range []engine.Durability{engine.DurabilityWritten, engine.DurabilityPersisted} {
		t.Run(durability.String(), func(t *testing.T) {
			mem, p, _, serial := piecedSetup(t, 11, durability)
			sizeBefore := p.SizeBytes()
			large := enginetest.Batch(5, largeMessages(&serial, 64)...)
			done := 0
			op := countingAppend(t, p, large, 20, &done)
			if p.PiecedBatches() != 1 || mem.Kicked != 1 || mem.Pending() != 2 {
				t.Fatalf("pieced %d, kicked %d, pending %d: want the first piece and the allocation ahead queued and kicked",
					p.PiecedBatches(), mem.Kicked, mem.Pending())
			}
			small := randomMessages(newRandom(3), &serial, 2, 500)
			smallDone := 0
			smallOp := countingAppend(t, p, enginetest.Batch(6, small...), 21, &smallDone)
			runWrites(mem, firstLog, 1)
			file, _ := mem.File(firstLog)
			if done != 0 || p.OffsetNext() != 3 {
				t.Fatalf("after the first piece: acks %d, visible end %d", done, p.OffsetNext())
			}
			// Space allocated ahead may make the file longer: the rest of
			// the record must still read as zeros there.
			end := sizeBefore + int64(len(large))
			if got := int64(len(file)); got <= sizeBefore+256 || got >= end && !bytes.Equal(file[end-4096:end], make([]byte, 4096)) {
				t.Fatalf("after the first piece the log holds %d bytes (was %d, batch %d), its end written", got, sizeBefore, len(large))
			}
			header := append([]byte(nil), file[sizeBefore:sizeBefore+256]...)
			memBackend{mem}.drain()
			if done != 1 || smallDone != 1 || op.Err != nil || smallOp.Err != nil {
				t.Fatalf("acks %d and %d, errors %v and %v", done, smallDone, op.Err, smallOp.Err)
			}
			if op.BaseOffset != 3 || smallOp.BaseOffset != 67 || p.OffsetNext() != 69 {
				t.Fatalf("offsets %d, %d, visible end %d", op.BaseOffset, smallOp.BaseOffset, p.OffsetNext())
			}
			file, _ = mem.File(firstLog)
			record := file[sizeBefore : sizeBefore+int64(len(large))]
			if !bytes.Equal(header, record[:256]) {
				t.Fatal("the header written with the first piece changed afterwards")
			}
			checkStamped(t, record, 3, 20)
			if durability == engine.DurabilityPersisted && mem.Syncs == 0 {
				t.Fatal("persisted pieces were never synced")
			}
			checkMessages(t, memBackend{mem}, p, 0, 69)
		})
	}
}

// checkStamped verifies a stored record's server fields and checksum.
func checkStamped(t *testing.T, record []byte, offset, timestamp uint64) {
	t.Helper()
	if got := binary.LittleEndian.Uint64(record[8:]); got != offset {
		t.Fatalf("base_offset %d, want %d", got, offset)
	}
	if got := binary.LittleEndian.Uint64(record[16:]); got != timestamp {
		t.Fatalf("base_timestamp %d, want %d", got, timestamp)
	}
	if got, want := binary.LittleEndian.Uint64(record[40:]), enginetest.BatchChecksum(record); got != want {
		t.Fatalf("batch_checksum %x, want %x", got, want)
	}
}

// checkMessages polls [first, end) back and checks offsets and ids.
func checkMessages(t *testing.T, storage backend, p *engine.Partition, first, end uint64) {
	t.Helper()
	for offset := first; offset < end; {
		got := poll(t, storage, p, &engine.PollOp{Strategy: engine.PollOffset, Value: offset, Count: 100})
		if len(got) == 0 {
			t.Fatalf("poll at %d returned nothing, end %d", offset, end)
		}
		for _, message := range got {
			if message.Offset != offset || message.IDLow != offset+1 {
				t.Fatalf("offset %d holds id %d at %d", offset, message.IDLow, message.Offset)
			}
			offset++
		}
	}
	if p.OffsetNext() != end {
		t.Fatalf("visible end %d, want %d", p.OffsetNext(), end)
	}
}

// TestPiecesCrashBetweenPieces: a crash after the first piece was written
// (synced or not) recovers the acknowledged batch when it was persisted
// (a written one only when the crash kept its write) and cuts the pieced
// one as a torn tail; appends continue at the recovered end.
func TestPiecesCrashBetweenPieces(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		durability := engine.DurabilityWritten
		if seed%2 == 0 {
			durability = engine.DurabilityPersisted
		}
		mem, p, options, serial := piecedSetup(t, seed, durability)
		done := 0
		countingAppend(t, p, enginetest.Batch(5, largeMessages(&serial, 64)...), 20, &done)
		runWrites(mem, firstLog, 1)
		if done != 0 || mem.Pending() == 0 {
			t.Fatalf("seed %d: after the first piece: acks %d, pending %d", seed, done, mem.Pending())
		}
		clone := memBackend{mem.Crash(seed * 7)}
		reopened := mustOpen(t, clone, options)
		recovered := reopened.OffsetNext()
		if recovered != 3 && (durability == engine.DurabilityPersisted || recovered != 0) {
			t.Fatalf("seed %d: recovered up to %d, want the 3 acknowledged offsets", seed, recovered)
		}
		checkMessages(t, clone, reopened, 0, recovered)
		serial = recovered
		op, err := appendBatch(t, clone, reopened, enginetest.Batch(5, largeMessages(&serial, 64)...), 30)
		if err != nil || op.BaseOffset != recovered {
			t.Fatalf("seed %d: append after the crash at %d: %v", seed, op.BaseOffset, err)
		}
		checkMessages(t, clone, reopened, 0, recovered+64)
	}
}

// TestPiecesWriteFails fails the first or the second piece's write: the
// batch fails, its offsets are handed out again, the log is cut back to
// the acknowledged end, and a reopen finds only acknowledged batches.
// With RetryWrites the failed piece is retried and the batch lands.
func TestPiecesWriteFails(t *testing.T) {
	for _, failing := range []int{1, 2} {
		for _, retry := range []bool{false, true} {
			t.Run(fmt.Sprintf("piece=%d/retry=%v", failing, retry), func(t *testing.T) {
				mem, p, options, serial := piecedSetup(t, 5, engine.DurabilityWritten)
				if retry {
					closePartition(t, memBackend{mem}, p)
					options.RetryWrites = true
					p = mustOpen(t, memBackend{mem}, options)
				}
				writes := 0
				mem.Inject = func(op *engine.Op) error {
					if op.Code != engine.OpWrite || len(op.Buffer) < 128<<10 {
						return nil // not a piece of the log (index, offsets)
					}
					writes++
					if writes == failing {
						return syscall.EIO
					}
					return nil
				}
				op := &engine.AppendOp{Batch: enginetest.Batch(5, largeMessages(&serial, 64)...), Timestamp: 20}
				op.Done = func(*engine.AppendOp) {}
				if err := p.Append(op); err != nil {
					t.Fatal(err)
				}
				memBackend{mem}.drain()
				if retry {
					p.Tick()
					memBackend{mem}.drain()
					if op.Err != nil || p.OffsetNext() != 67 {
						t.Fatalf("retried piece: error %v, visible end %d", op.Err, p.OffsetNext())
					}
					checkMessages(t, memBackend{mem}, p, 0, 67)
					return
				}
				if !errors.Is(op.Err, syscall.EIO) || p.OffsetNext() != 3 {
					t.Fatalf("failed piece: error %v, visible end %d", op.Err, p.OffsetNext())
				}
				if file, _ := mem.File(firstLog); int64(len(file)) < p.SizeBytes() ||
					!bytes.Equal(file[p.SizeBytes():], make([]byte, int64(len(file))-p.SizeBytes())) {
					t.Fatalf("log holds %d bytes after the failed piece, segment %d: more than zeros past it",
						len(file), p.SizeBytes())
				}
				mem.Inject = nil
				serial = 3
				again, err := appendBatch(t, memBackend{mem}, p, enginetest.Batch(5, largeMessages(&serial, 64)...), 30)
				if err != nil || again.BaseOffset != 3 {
					t.Fatalf("append after the failure at %d: %v", again.BaseOffset, err)
				}
				closePartition(t, memBackend{mem}, p)
				checkMessages(t, memBackend{mem}, mustOpen(t, memBackend{mem}, options), 0, 67)
			})
		}
	}
}

// TestPiecesInvalidBatchWritesNothing: a large batch whose layout fails
// the check is refused before any piece goes out; the log and the
// offsets are untouched and the next append takes the offsets.
func TestPiecesInvalidBatchWritesNothing(t *testing.T) {
	mem, p, _, serial := piecedSetup(t, 9, engine.DurabilityWritten)
	writes := mem.Writes[firstLog]
	file, _ := mem.File(firstLog)
	broken := enginetest.Batch(5, largeMessages(&serial, 64)...)
	binary.LittleEndian.PutUint32(broken[len(broken)-12048+24:], 99) // the last frame's offset_delta
	op := &engine.AppendOp{Batch: broken, Timestamp: 20, Done: func(*engine.AppendOp) { t.Fatal("refused batch acknowledged") }}
	if err := p.Append(op); !errors.Is(err, engine.ErrInvalidBatch) {
		t.Fatalf("append of a broken batch: %v", err)
	}
	after, _ := mem.File(firstLog)
	if mem.Pending() != 0 || mem.Writes[firstLog] != writes || !bytes.Equal(file, after) || p.PiecedBatches() != 0 {
		t.Fatalf("a refused batch reached the storage: pending %d, writes %d -> %d", mem.Pending(), writes, mem.Writes[firstLog])
	}
	serial = 3
	again, err := appendBatch(t, memBackend{mem}, p, enginetest.Batch(5, largeMessages(&serial, 64)...), 30)
	if err != nil || again.BaseOffset != 3 || p.PiecedBatches() != 1 {
		t.Fatalf("append after the refusal at %d (pieced %d): %v", again.BaseOffset, p.PiecedBatches(), err)
	}
	checkMessages(t, memBackend{mem}, p, 0, 67)
}

// TestPiecesRollAtSegmentEnd: pieced batches cross the 1 MiB segment
// end; the next append seals the segment first, as after a group write
// (that batch is written whole, after the roll: 4 of 6 go in pieces),
// and every segment recovers.
func TestPiecesRollAtSegmentEnd(t *testing.T) {
	for _, durability := range []engine.Durability{engine.DurabilityWritten, engine.DurabilityPersisted} {
		mem, p, options, serial := piecedSetup(t, 13, durability)
		for batch := 0; batch < 6; batch++ {
			if _, err := appendBatch(t, memBackend{mem}, p, enginetest.Batch(5, largeMessages(&serial, 64)...), uint64(20+batch)); err != nil {
				t.Fatal(err)
			}
		}
		if p.SegmentCount() != 3 || p.PiecedBatches() != 4 {
			t.Fatalf("%s: %d segments, %d pieced batches", durability, p.SegmentCount(), p.PiecedBatches())
		}
		closePartition(t, memBackend{mem}, p)
		reopened := mustOpen(t, memBackend{mem}, options)
		checkMessages(t, memBackend{mem}, reopened, 0, 3+6*64)
		if reopened.TornBytes() != 0 {
			t.Fatalf("%s: clean close left %d torn bytes", durability, reopened.TornBytes())
		}
	}
}

// TestPiecesNeedAKicker: a storage that cannot start ops within the turn
// gets whole group writes only.
func TestPiecesNeedAKicker(t *testing.T) {
	mem := enginetest.NewMemStorage(4)
	mem.NoKick = true
	p := mustOpen(t, memBackend{mem}, testOptions())
	serial := uint64(0)
	if _, err := appendBatch(t, memBackend{mem}, p, enginetest.Batch(5, largeMessages(&serial, 64)...), 20); err != nil {
		t.Fatal(err)
	}
	if p.PiecedBatches() != 0 || mem.Kicked != 0 || mem.Writes[firstLog] != 1 {
		t.Fatalf("pieced %d, kicked %d, writes %d", p.PiecedBatches(), mem.Kicked, mem.Writes[firstLog])
	}
	checkMessages(t, memBackend{mem}, p, 0, 64)
}
