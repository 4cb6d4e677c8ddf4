package engine_test

import (
	"log/slog"
	"strings"
	"syscall"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// Tests of space allocated ahead of large appends (allocate.go). Method:
// a partition with a cache (its large batches are streamed or pieced
// into lent regions) appends large batches over several small segments;
// between batches the test reads the in-memory files: the active log
// runs past its batches with zeros only, every sealed log ends at its
// last batch, and after Close the active one does too. An injector
// counts allocations or refuses them.

// logFiles returns the partition's .log files in offset order: the last
// is the active segment's.
func logFiles(mem *enginetest.MemStorage, directory string) []string {
	var logs []string
	for _, name := range mem.Names(directory) {
		if strings.HasSuffix(name, ".log") {
			logs = append(logs, directory+"/"+name)
		}
	}
	return logs
}

// zeroTail counts the zero bytes that end file.
func zeroTail(file []byte) int {
	end := len(file)
	for end > 0 && file[end-1] == 0 {
		end--
	}
	return len(file) - end
}

// endsAtBatch reports whether a log ends with its last batch's payload,
// not zeros past it: no payload here holds two zero bytes in a row at
// its end (largeMessages' bytes step by one; randomMessages' are random
// and the seeds fixed).
func endsAtBatch(file []byte) bool { return len(file) > 0 && zeroTail(file) <= 1 }

// allocatingPartition returns in-memory storage and the options of a
// partition with a cache (its large batches go to lent regions), 4 MiB
// segments and durability, whose warnings are counted.
func allocatingPartition(t *testing.T, seed uint64, durability engine.Durability) (*enginetest.MemStorage, memBackend,
	engine.PartitionOptions, *int) {
	t.Helper()
	mem, storage, cache := drainedCache(t, seed, 64<<20, nil)
	warnings := new(int)
	options := testOptions()
	options.Cache, options.SegmentBytes, options.Durability = cache, 4<<20, durability
	options.Logger = slog.New(warnCounter{count: warnings})
	return mem, storage, options, warnings
}

// reopenClean reopens a closed partition and checks that it finds no
// torn bytes, that no warning was logged (since warnings was last
// reset) and that it serves messages [0, end).
func reopenClean(t *testing.T, storage memBackend, options engine.PartitionOptions, warnings *int, end uint64) {
	t.Helper()
	reopened := mustOpen(t, storage, options)
	if reopened.TornBytes() != 0 || *warnings != 0 {
		t.Fatalf("reopened with %d torn bytes and %d warnings", reopened.TornBytes(), *warnings)
	}
	checkMessages(t, storage, reopened, 0, end)
}

// appendLarge appends a large batch, streamed or whole (then pieced), and
// completes every op; a full active segment first rolls with a small batch.
func appendLarge(t *testing.T, mem *enginetest.MemStorage, p *engine.Partition, serial *uint64, streamed bool,
	seed uint64) {
	t.Helper()
	storage := memBackend{mem}
	if p.SizeBytes() > 0 && p.SegmentCount() > 0 {
		small := enginetest.Batch(6, randomMessages(newRandom(seed), serial, 2, 500)...)
		if _, err := appendBatch(t, storage, p, small, 30); err != nil {
			t.Fatal(err)
		}
	}
	record := enginetest.Batch(5, largeMessages(serial, 64)...)
	if streamed {
		op, err := openStream(t, mem, p, record, seed).finish(new(int))
		storage.drain()
		if err != nil || op.Err != nil {
			t.Fatalf("streamed batch: %v %v", err, op.Err)
		}
		return
	}
	if _, err := appendBatch(t, storage, p, record, 30); err != nil {
		t.Fatal(err)
	}
}

// TestLargeAppendsAllocateAhead: streamed and pieced batches allocate the
// active segment's space ahead, so its file runs past the batches with
// zeros; a roll cuts the sealed file back to its last batch, and so does
// Close for the active one. Nothing warns (an allocation completing on a
// closed file would), and a reopen finds every message and no torn bytes.
func TestLargeAppendsAllocateAhead(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		durability := engine.DurabilityPersisted
		if seed%2 == 0 {
			durability = engine.DurabilityWritten
		}
		mem, storage, options, warnings := allocatingPartition(t, seed, durability)
		p := mustOpen(t, storage, options)
		allocations, ahead := 0, 0
		mem.Inject = func(op *engine.Op) error {
			if op.Code == engine.OpAllocate {
				allocations++
			}
			return nil
		}
		serial := uint64(0)
		for batch := range 14 {
			appendLarge(t, mem, p, &serial, batch%2 == 0, seed*100+uint64(batch))
			logs := logFiles(mem, options.Directory)
			for _, name := range logs[:len(logs)-1] {
				if file, _ := mem.File(name); !endsAtBatch(file) {
					t.Fatalf("seed %d batch %d: sealed %s (%d bytes) does not end at its last batch", seed, batch, name, len(file))
				}
			}
			if active, _ := mem.File(logs[len(logs)-1]); zeroTail(active) > 4096 {
				ahead++ // more than the last block's padding
			}
		}
		if allocations == 0 || ahead == 0 || p.SegmentCount() < 3 {
			t.Fatalf("seed %d: %d allocations, %d batches left space ahead, %d segments; want some of each and 3 segments",
				seed, allocations, ahead, p.SegmentCount())
		}
		closePartition(t, storage, p)
		for _, name := range logFiles(mem, options.Directory) {
			if file, _ := mem.File(name); !endsAtBatch(file) {
				t.Fatalf("seed %d: after Close %s (%d bytes) does not end at its last batch", seed, name, len(file))
			}
		}
		reopenClean(t, storage, options, warnings, serial)
	}
}

// TestAllocateRefused: a file system without fallocate (EOPNOTSUPP) is
// asked once per partition and its large appends go on as before, the
// log never longer than its last block; a failed allocation (ENOSPC) is
// not retried on its segment, asked again on the next one; an
// interrupted one (EINTR) is asked again by the next large batch; a
// partition told not to (AllocateAheadOff, refusal 0 here) never asks.
// Every message reads back after a reopen.
func TestAllocateRefused(t *testing.T) {
	for _, refusal := range []syscall.Errno{syscall.EOPNOTSUPP, syscall.ENOSPC, syscall.EINTR, 0} {
		mem, storage, options, _ := allocatingPartition(t, 7, engine.DurabilityPersisted)
		options.AllocateAheadOff = refusal == 0
		p := mustOpen(t, storage, options)
		allocations := 0
		mem.Inject = func(op *engine.Op) error {
			if op.Code == engine.OpAllocate {
				allocations++
				return refusal // never 0: such a partition does not ask
			}
			return nil
		}
		serial := uint64(0)
		for batch := range 14 {
			appendLarge(t, mem, p, &serial, batch%2 == 0, uint64(batch))
			logs := logFiles(mem, options.Directory)
			if file, _ := mem.File(logs[len(logs)-1]); zeroTail(file) >= 4096 {
				t.Fatalf("%v: batch %d: the active log ends in %d zeros, more than its last block's padding",
					refusal, batch, zeroTail(file))
			}
		}
		segments := p.SegmentCount()
		want := allocations == map[syscall.Errno]int{syscall.EOPNOTSUPP: 1, syscall.ENOSPC: segments, 0: 0}[refusal]
		if refusal == syscall.EINTR {
			want = allocations > segments // more than one large batch per segment asked
		}
		if !want || segments < 3 {
			t.Fatalf("%v: %d allocations over %d segments", refusal, allocations, segments)
		}
		closePartition(t, storage, p)
		checkMessages(t, storage, mustOpen(t, storage, options), 0, serial)
	}
}

// TestHeldAllocationStopsRollPurgeAndClose: an allocation the storage
// keeps in flight (MemStorage.Hold) holds back a roll, a purge and Close
// of its partition, which go on once it completes: each would close or
// cut its file under it. Then the sealed log ends at its last batch, no
// op met a closed file (it would warn), and everything reads back.
func TestHeldAllocationStopsRollPurgeAndClose(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		mem, storage, options, warnings := allocatingPartition(t, seed, engine.DurabilityPersisted)
		p := mustOpen(t, storage, options)
		held := true
		mem.Hold = func(op *engine.Op) bool { return held && op.Code == engine.OpAllocate }
		runFree := func() {
			for mem.Run(1<<20) > 0 {
			}
		}
		serial, done := uint64(0), 0
		for p.SizeBytes() < options.SegmentBytes { // the first large batch allocates
			countingAppend(t, p, enginetest.Batch(5, largeMessages(&serial, 64)...), 30, &done)
			runFree()
		}
		countingAppend(t, p, enginetest.Batch(6, randomMessages(newRandom(seed), &serial, 2, 500)...), 30, &done)
		runFree()
		if mem.PendingOps(engine.OpAllocate) != 1 || p.SegmentCount() != 1 || done != int(serial/64) {
			t.Fatalf("seed %d: %d allocations held, %d segments, %d acks: the roll went on under the allocation",
				seed, mem.PendingOps(engine.OpAllocate), p.SegmentCount(), done)
		}
		held = false
		storage.drain()
		if logs := logFiles(mem, options.Directory); p.SegmentCount() != 2 || len(logs) != 2 {
			t.Fatalf("seed %d: %d segments after the allocation completed", seed, p.SegmentCount())
		} else if file, _ := mem.File(logs[0]); !endsAtBatch(file) {
			t.Fatalf("seed %d: the sealed log (%d bytes) does not end at its last batch", seed, len(file))
		}

		held = true
		countingAppend(t, p, enginetest.Batch(5, largeMessages(&serial, 64)...), 30, &done)
		runFree()
		purged := false
		if err := p.Purge(&engine.MaintenanceOp{Done: func(*engine.MaintenanceOp) { purged = true }}); err != nil {
			t.Fatal(err)
		}
		runFree()
		if purged || len(logFiles(mem, options.Directory)) != 2 {
			t.Fatalf("seed %d: the purge went on under the allocation", seed)
		}
		held = false
		storage.drain()
		if !purged || p.OffsetNext() != 0 {
			t.Fatalf("seed %d: purge done %v, next offset %d", seed, purged, p.OffsetNext())
		}

		held, serial = true, 0
		countingAppend(t, p, enginetest.Batch(5, largeMessages(&serial, 64)...), 30, &done)
		runFree()
		closed := false
		p.Close(func(err error) {
			if err != nil {
				t.Errorf("close: %v", err)
			}
			closed = true
		})
		runFree()
		if closed {
			t.Fatalf("seed %d: Close went on under the allocation", seed)
		}
		held = false
		storage.drain()
		logs := logFiles(mem, options.Directory)
		if file, _ := mem.File(logs[len(logs)-1]); !closed || !endsAtBatch(file) || *warnings != 0 {
			t.Fatalf("seed %d: closed %v, the log's %d bytes end in %d zeros, %d warnings", seed, closed, len(file),
				zeroTail(file), *warnings)
		}
		checkMessages(t, storage, mustOpen(t, storage, options), 0, serial)
	}
}

// TestAllocationCutWhileInFlight: a stream dropped after one of its
// pieces was written cuts the log back to its batches while the
// partition's allocation ahead may still be in flight. When that
// allocation takes effect before the cut, the cut drops the space it
// allocated, so the allocator must not count on it: the next large
// batch allocates again. Method: seeds whose storage completes the
// piece, then the allocation, then the cut; the next stream's
// allocations are counted.
func TestAllocationCutWhileInFlight(t *testing.T) {
	raced := 0
	for seed := uint64(1); seed <= 40; seed++ {
		mem, p, _, serial := piecedSetup(t, seed, engine.DurabilityPersisted)
		start := p.SizeBytes()
		record := enginetest.Batch(5, largeMessages(&serial, 64)...)
		completed := map[engine.OpCode]int{}
		mem.Inject = func(op *engine.Op) error {
			completed[op.Code]++
			return nil
		}
		id, err := p.StreamOpen(record[:300], len(record), 20)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.StreamFeed(id, record[:len(record)/2]); err != nil {
			t.Fatal(err)
		}
		for completed[engine.OpWrite] == 0 && completed[engine.OpAllocate] == 0 {
			mem.Run(1)
		}
		if completed[engine.OpAllocate] != 0 || mem.Pending() != 1 {
			continue // the allocation went first, or a second piece is in flight: not this case
		}
		p.StreamAbort(id) // the cut is queued beside the allocation
		mem.Run(1)
		if completed[engine.OpAllocate] == 0 {
			continue // the cut went first: the allocation's space stays
		}
		memBackend{mem}.drain()
		raced++
		if file, _ := mem.File(firstLog); int64(len(file)) != start {
			t.Fatalf("seed %d: the log holds %d bytes after the cut, its batches %d", seed, len(file), start)
		}
		clear(completed)
		f := openStream(t, mem, p, record, seed)
		done := 0
		if _, err := f.finish(&done); err != nil {
			t.Fatal(err)
		}
		memBackend{mem}.drain()
		if done != 1 || completed[engine.OpAllocate] == 0 {
			t.Fatalf("seed %d: the next stream: %d acknowledgements, %d allocations; want 1 and its space allocated again",
				seed, done, completed[engine.OpAllocate])
		}
	}
	if raced == 0 {
		t.Fatal("no seed completed the allocation between the dropped stream's cut and its effect")
	}
}

// TestAllocatedSpaceCutFails fails the cut of a full segment's log at its
// roll and of the active one at Close: each is logged once and neither
// stops its roll or Close; whatever zeros they left past the batches are
// the clean end a reopen cuts, quietly, with every message kept.
func TestAllocatedSpaceCutFails(t *testing.T) {
	mem, storage, options, warnings := allocatingPartition(t, 3, engine.DurabilityPersisted)
	p := mustOpen(t, storage, options)
	cuts := 0
	mem.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpTruncate && op.Position > 0 {
			cuts++
			return syscall.EIO
		}
		return nil
	}
	serial := uint64(0)
	for batch := range 8 {
		appendLarge(t, mem, p, &serial, batch%2 == 0, uint64(batch))
	}
	closePartition(t, storage, p)
	logs := logFiles(mem, options.Directory)
	if cuts != len(logs) || *warnings != cuts || len(logs) < 2 {
		t.Fatalf("%d cuts failed, %d warnings, %d segments; want one of each per segment", cuts, *warnings, len(logs))
	}
	mem.Inject, *warnings = nil, 0
	reopenClean(t, storage, options, warnings, serial)
}

// TestIdlePartitionTrimsItsSpace: TrimSpace (the shard's maintenance
// pass) cuts the space allocated ahead off the active log of a partition
// that saw no large batch since the previous call, never while a stream
// is open; an append meanwhile waits for the cut and lands; the next
// large batch allocates again, and everything reads back after a reopen.
func TestIdlePartitionTrimsItsSpace(t *testing.T) {
	mem, storage, options, warnings := allocatingPartition(t, 5, engine.DurabilityPersisted)
	options.SegmentBytes = 64 << 20
	p := mustOpen(t, storage, options)
	allocations := 0
	mem.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpAllocate {
			allocations++
		}
		return nil
	}
	serial := uint64(0)
	activeLog := func() []byte {
		file, _ := mem.File(firstLog)
		return file
	}
	appendLarge(t, mem, p, &serial, true, 1)
	p.TrimSpace() // a large batch came since the partition opened
	storage.drain()
	if zeroTail(activeLog()) <= 4096 || p.SpaceTrims() != 0 {
		t.Fatalf("after a large batch: %d zeros past the batches, %d trims; want the space kept", zeroTail(activeLog()),
			p.SpaceTrims())
	}
	p.TrimSpace()
	small := enginetest.Batch(6, randomMessages(newRandom(5), &serial, 2, 500)...)
	done := 0
	countingAppend(t, p, small, 30, &done) // waits for the cut
	storage.drain()
	if zeroTail(activeLog()) >= 4096 || p.SpaceTrims() != 1 || done != 1 {
		t.Fatalf("idle: the log ends in %d zeros, %d trims, %d acks; want no more than the last block's padding, one cut and the append landed",
			zeroTail(activeLog()), p.SpaceTrims(), done)
	}
	p.TrimSpace()
	if p.SpaceTrims() != 1 {
		t.Fatalf("%d trims of a log with no space ahead", p.SpaceTrims())
	}
	before := allocations
	record := enginetest.Batch(5, largeMessages(&serial, 64)...)
	f := openStream(t, mem, p, record, 2)
	storage.drain() // the stream's allocation completes: only the open stream keeps the space
	p.TrimSpace()
	p.TrimSpace() // the stream is still open
	storage.drain()
	if p.SpaceTrims() != 1 || allocations == before {
		t.Fatalf("with a stream open: %d trims, %d allocations since; want none and one", p.SpaceTrims(),
			allocations-before)
	}
	if op, err := f.finish(new(int)); err != nil || op.Err != nil {
		t.Fatalf("the stream: %v %v", err, op.Err)
	}
	storage.drain()
	closePartition(t, storage, p)
	reopenClean(t, storage, options, warnings, serial)
}

// TestTrimSpaceDuringPurge: a maintenance pass that comes while a purge
// removes the segments (the partition has no active segment until the
// fresh one is open) leaves the partition alone; the purge completes
// and the partition appends again.
func TestTrimSpaceDuringPurge(t *testing.T) {
	mem, storage, options, warnings := allocatingPartition(t, 4, engine.DurabilityPersisted)
	p := mustOpen(t, storage, options)
	serial := uint64(0)
	appendLarge(t, mem, p, &serial, true, 1)
	p.TrimSpace() // a large batch came: the space is kept
	purged := false
	if err := p.Purge(&engine.MaintenanceOp{Done: func(*engine.MaintenanceOp) { purged = true }}); err != nil {
		t.Fatal(err)
	}
	if storage.Pending() == 0 {
		t.Fatal("the purge submitted nothing")
	}
	p.TrimSpace() // idle since the last call, and purging
	storage.drain()
	if !purged || p.OffsetNext() != 0 || p.SpaceTrims() != 0 {
		t.Fatalf("purge done %v, next offset %d, %d trims", purged, p.OffsetNext(), p.SpaceTrims())
	}
	serial = 0
	appendLarge(t, mem, p, &serial, false, 2)
	closePartition(t, storage, p)
	if *warnings != 0 {
		t.Fatalf("%d warnings", *warnings)
	}
	checkMessages(t, storage, mustOpen(t, storage, options), 0, serial)
}

// TestFailedTrimLeavesTheCutToClose: a failed TrimSpace cut is logged
// once and not retried by the next passes; Close still cuts the space
// allocated ahead, so the closed log ends at its last batch.
func TestFailedTrimLeavesTheCutToClose(t *testing.T) {
	mem, storage, options, warnings := allocatingPartition(t, 6, engine.DurabilityPersisted)
	options.SegmentBytes = 64 << 20
	p := mustOpen(t, storage, options)
	serial := uint64(0)
	appendLarge(t, mem, p, &serial, false, 1)
	failed := 0
	mem.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpTruncate && failed == 0 {
			failed++
			return syscall.EIO
		}
		return nil
	}
	for range 4 { // the first clears the large batch's mark, the second cuts
		p.TrimSpace()
		storage.drain()
	}
	if failed != 1 || p.SpaceTrims() != 1 || *warnings != 1 {
		t.Fatalf("%d cuts failed, %d trims, %d warnings; want one of each", failed, p.SpaceTrims(), *warnings)
	}
	closePartition(t, storage, p)
	if file, _ := mem.File(firstLog); !endsAtBatch(file) || *warnings != 1 {
		t.Fatalf("closed: the log's %d bytes end in %d zeros, %d warnings", len(file), zeroTail(file), *warnings)
	}
	checkMessages(t, storage, mustOpen(t, storage, options), 0, serial)
}

// TestActiveLogReadsAfterTrim: with no cache every poll reads the disk;
// after TrimSpace cut the active log back to its batches (mid-block, so
// the read of its last block comes back short) every message still
// reads back, before and after another append and after a reopen.
func TestActiveLogReadsAfterTrim(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		mem := enginetest.NewMemStorage(seed)
		storage := memBackend{mem}
		options := testOptions()
		options.SegmentBytes, options.Durability = 64<<20, engine.DurabilityPersisted
		p := mustOpen(t, storage, options)
		serial := uint64(0)
		appendLarge(t, mem, p, &serial, seed%2 == 0, seed)
		p.TrimSpace()
		p.TrimSpace()
		storage.drain()
		if file, _ := mem.File(firstLog); p.SpaceTrims() != 1 || len(file)%4096 == 0 || !endsAtBatch(file) {
			t.Fatalf("seed %d: %d trims, the log's %d bytes end in %d zeros; want one cut to mid-block", seed,
				p.SpaceTrims(), len(file), zeroTail(file))
		}
		checkMessages(t, storage, p, 0, serial)
		small := enginetest.Batch(6, randomMessages(newRandom(seed), &serial, 2, 500)...)
		if _, err := appendBatch(t, storage, p, small, 30); err != nil {
			t.Fatal(err)
		}
		checkMessages(t, storage, p, 0, serial)
		closePartition(t, storage, p)
		checkMessages(t, storage, mustOpen(t, storage, options), 0, serial)
	}
}
