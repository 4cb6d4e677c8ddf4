package engine

import (
	"encoding/binary"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
)

// Writing a large batch in pieces. With the flush pipeline idle, a batch
// of at least piecesRecordBytesMin is checked and its stamped checksum
// computed on the received bytes, then its first pieceBytes are copied
// into the pending journal and their whole blocks written at once
// (Kicker.Kick) while the rest is copied; the first write's completion
// sends the rest (writeDone). The checksum comes first because it covers
// every frame's checksum and sits in the first block: the first piece
// carries the final header, so a write never goes out with bytes that
// change later. A batch that fails the check writes nothing. Only after
// the last piece was written (and synced, when persisted) is the batch
// indexed, made visible, handed to the cache and acknowledged, as a
// group write is. A crash between pieces leaves a header whose
// batch_length overruns the file: recovery cuts it as a torn tail.

// frameSums computes the stamped batch checksum of a record with wire's
// incremental hasher (§8.4), from the header as stamped with the
// partition id, base offset and timestamp, then every frame's checksum.
type frameSums struct {
	hasher wire.BatchHasher
	// touched keeps the look-ahead loads of touchAhead from being
	// dropped by the compiler; its value means nothing.
	touched byte
}

// start feeds the prefix of record's header as stamped with partitionID,
// offset and timestamp.
func (s *frameSums) start(record []byte, partitionID uint32, offset, timestamp uint64) {
	invariant.Assert(len(record) >= batchHeaderBytes, "summed record holds a header")
	var header [batchMessageCountAt + 4]byte
	copy(header[:], record)
	binary.LittleEndian.PutUint64(header[batchPartitionIDAt:], uint64(partitionID))
	binary.LittleEndian.PutUint64(header[batchBaseOffsetAt:], offset)
	binary.LittleEndian.PutUint64(header[batchBaseTimestampAt:], timestamp)
	s.hasher.Start(header[:])
}

func (s *frameSums) add(frame []byte) { s.hasher.Add(frame) }

// touchAhead loads the header of the frame walkAheadFrames past the one
// at position, guessing that frames are as long as this one. The walk
// runs on bytes another core received, one frame after the other, and
// each frame's place depends on the previous frame's length: without
// these independent loads it waits for one cache miss per frame in turn
// (~75 µs for 1,000 frames here, ~25 µs less with them). A wrong guess
// only loads a line for nothing.
func (s *frameSums) touchAhead(record []byte, position, length int) {
	ahead := position + walkAheadFrames*length
	if ahead+frameHeaderBytes <= len(record) {
		s.touched += record[ahead] + record[ahead+framePayloadLengthAt]
	}
}

func (s *frameSums) sum() uint64 { return s.hasher.Sum64() }

// stampSummed stamps a record's header with the partition id, base offset
// and timestamp, and the batch checksum computed over those (frameSums).
func stampSummed(record []byte, partitionID uint32, offset, timestamp, checksum uint64) {
	binary.LittleEndian.PutUint64(record[batchPartitionIDAt:], uint64(partitionID))
	binary.LittleEndian.PutUint64(record[batchBaseOffsetAt:], offset)
	binary.LittleEndian.PutUint64(record[batchBaseTimestampAt:], timestamp)
	binary.LittleEndian.PutUint64(record[batchChecksumAt:], checksum)
}

// piecesFit reports whether a record of length bytes is appended in
// pieces: the storage can start a write within the turn, nothing is being
// written or waits to be (so the record is the head of the next write),
// no roll is due, the ack waits for the disk, and no dedup window needs
// the received frames.
func (p *Partition) piecesFit(length int) bool {
	return p.kicker != nil && length >= piecesRecordBytesMin &&
		p.options.Durability != DurabilityMemory && !p.dedup.enabled() &&
		p.flushPhase == flushIdle && p.inflight == nil && p.pending.empty() &&
		p.state == stateOpen && p.active().sizeBytes < p.options.SegmentBytes
}

// lonePending returns the pending buffer, empty, about to take a lone
// batch of length bytes (streamed or in pieces): without memory of its
// own, it borrows a region of the cache's arena when it can, so the
// batch needs no copy into the cache once written. yield (a stream's)
// gives the region back early (lendJournal). Not with RetryWrites: a
// failed write then stalls until a Tick, holding the region as long.
func (p *Partition) lonePending(length int, yield func()) *writeBuffer {
	buffer := p.pending
	invariant.Assert(buffer.empty(), "a lone batch has the pending buffer to itself")
	if buffer.data == nil && p.cache.cache != nil && !p.options.RetryWrites {
		buffer.borrow(p.cache.cache, length, yield)
	}
	return buffer
}

// appendPieces appends op's record in pieces (see above).
func (p *Partition) appendPieces(op *AppendOp) error {
	record := op.Batch
	timestamp := max(op.Timestamp, p.timestampLast)
	invariant.Assert(len(record) >= piecesRecordBytesMin, "a pieced record is large")
	if p.sums == nil {
		p.sums = new(frameSums)
	}
	p.sums.start(record, p.options.PartitionID, p.offsetNext, timestamp)
	if reason := walkLayout(record, p.sums); reason != "" {
		return invalidBatchError(reason)
	}
	buffer := p.lonePending(len(record), nil) // the loan lasts its writes
	if !buffer.grow(len(record)) {
		return ErrJournalFull
	}
	active := p.active()
	if buffer.segment != active {
		buffer.rebase(active)
	}
	invariant.Assert(buffer.filePosition+int64(buffer.prefixBytes) == active.sizeBytes,
		"a pieced buffer continues the active segment")
	p.allocateAhead(len(record))
	at := buffer.used
	stored := buffer.data[at : at+len(record)]
	copy(stored[:pieceBytes], record[:pieceBytes])
	stampSummed(stored, p.options.PartitionID, p.offsetNext, timestamp, p.sums.sum())
	p.swapBuffers()
	buffer.writeStart, buffer.writeEnd = 0, int(alignDown(int64(at+pieceBytes)))
	p.submitWrite()
	p.kicker.Kick()
	copy(stored[pieceBytes:], record[pieceBytes:])
	if invariant.Enabled {
		invariant.Assert(invalidBatch(stored) == "", "a pieced batch verifies")
	}
	count := batchMessageCount(stored)
	op.BaseOffset, op.Count, op.Err = p.offsetNext, count, nil
	p.journal(buffer, len(record), count, timestamp)
	buffer.ops = append(buffer.ops, op)
	position, prefix := buffer.tail()
	p.pending.reset(active, position, prefix)
	p.pieced++
	return nil
}
