package engine

import (
	"fmt"
	"math/bits"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
)

// Appending a batch while it arrives (a streamed append). A large batch
// of a request still being received is copied into the journal as its
// bytes arrive, validated frame by frame (wire.BatchValidator: layout,
// every frame's XXH3, the producer's batch checksum) with the stamped
// checksum computed alongside, and its whole blocks after the block(s)
// holding the batch header are written as data pieces, up to
// streamPiecesMax of them in flight when the journal is a region lent by
// the cache, one at a time when it is a journal of the storage's pools
// (streamPiecesLimit); into space allocated ahead they run at once on the
// device (allocate.go), and they may complete in any order.
// When the request is complete (StreamFinish) the validation ends, the
// header is stamped, and the rest of the data goes out as a last piece;
// the header block(s) [alignDown(S), alignUp(S+batchHeaderBytes)) — S
// the batch's file position — are written once every data piece
// completed. A batch with no piece written by then is written whole in
// one write. The batch is indexed, made visible, handed to the cache and
// acknowledged only after all of it completed, and was synced when
// persisted.
//
// Why a crash at any point leaves a log that recovery cuts back to the
// last acknowledged batch: nothing before the header write touches the
// header block(s), whose bytes from S on are the zero padding of the
// previous write (writeLength), space allocated ahead (zeros) or past the
// file's end, so they are not a valid header until the header write; a
// process crash leaves the writes it submitted to complete; the header
// goes out only after every data piece completed, and a header whose
// data a crash tore names a batch that overruns the file or fails its
// frame checksums; and a stream that fails validation or is aborted
// never writes its header and truncates the file back to S (dropping
// space allocated ahead) before the partition appends again, so no stale
// piece can later pass for a batch.
//
// While a stream is open no other append is admitted (ErrBusy: its
// offsets and file position would follow a batch that may still abort);
// a Sync, Flush, purge or Close, and the cache taking back the region
// the stream's journal borrowed, drop a stream still receiving
// (streamYield).
//
// The owner may receive the batch's bytes straight into the journal
// instead of feeding them (StreamRoom, StreamReceived), saving the copy.
// The journal then holds bytes its owner's copy of the batch (origin)
// lacks, so a stream dropped for its request to be appended whole first
// copies them back there; the owner's own StreamAbort does not, its
// request being gone. A drop while such a receive runs asks the owner to
// end it (cancel) and waits for StreamReceived: until then the kernel may
// write into the journal, which therefore stays the partition's.

type streamState uint8

const (
	streamIdle      streamState = iota
	streamReceiving             // bytes arrive; data pieces may be in flight
	streamFinishing             // the batch is complete; its last writes run
	streamAborting              // dropped or failed; waits for the room's receive and the pieces in flight
)

// batchStream is a partition's one streamed append.
type batchStream struct {
	state     streamState
	id        uint64 // names the stream to its owner; 0: none yet
	at        int    // the batch's position in the in-flight buffer
	length    int
	timestamp uint64
	copied    int // batch bytes copied into the journal
	// headerEnd is alignUp(at+batchHeaderBytes): data pieces start there.
	// written is where the next data piece starts.
	headerEnd int
	written   int
	// piecesBusy sets the bits of pieceOps (made by the first stream)
	// whose data piece is in flight.
	pieceOps   *[streamPiecesMax]Op
	piecesBusy uint8
	// writeErr is the first failed write's error once the batch is
	// complete (StreamFinish); the stream then fails with it.
	writeErr error
	// err is why the stream failed (an invalid batch, a failed piece); it
	// stays for its owner's next call until another stream opens.
	err       error
	validator wire.BatchValidator
	stamped   frameSums
	// origin is the owner's copy of the batch, given with StreamRoom; nil
	// while every byte came through StreamFeed, and once the owner's own
	// abort leaves nothing to give back. room marks a receive into the
	// journal under way (StreamRoom until StreamReceived); cancel asks the
	// owner to end it soon (a stream is dropped once).
	origin []byte
	cancel func()
	room   bool
}

// pieces counts the stream's data pieces in flight.
func (s *batchStream) pieces() int { return bits.OnesCount8(s.piecesBusy) }

// streamFit reports whether a batch of length bytes may be streamed: as
// piecesFit, and the partition never retries writes (a stream's op
// fails with its write). Another stream is ruled out by appendAllowed.
func (p *Partition) streamFit(length int) bool {
	return p.piecesFit(length) && length <= batchBytesMax && !p.options.RetryWrites
}

// StreamOpen starts appending a batch record of length bytes whose first
// bytes, head (at least its header), arrived; timestamp (µs, > 0) is as
// Append's. It returns the stream's id for StreamFeed (or StreamRoom and
// StreamReceived), StreamFinish, StreamAbort and StreamDrop, or an error
// when the batch cannot be streamed now (ErrBusy: the partition is not
// idle; append it whole instead) or its header is invalid
// (ErrInvalidBatch).
func (p *Partition) StreamOpen(head []byte, length int, timestamp uint64) (uint64, error) {
	if err := p.appendAllowed(); err != nil {
		return 0, err
	}
	if !p.streamFit(length) || len(head) < batchHeaderBytes {
		return 0, ErrBusy
	}
	invariant.Assert(timestamp > 0, "stream timestamp is set")
	s := &p.stream
	if err := s.validator.Start(head, length, true, &s.stamped.hasher); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalidBatch, err)
	}
	buffer := p.lonePending(length, p.yieldStream)
	if !buffer.grow(length) {
		return 0, ErrJournalFull
	}
	active := p.active()
	if buffer.segment != active {
		buffer.rebase(active)
	}
	invariant.Assert(buffer.filePosition+int64(buffer.prefixBytes) == active.sizeBytes,
		"a streamed buffer continues the active segment")
	invariant.Assert(buffer.used < blockBytes, "a streamed batch starts in the buffer's first block")
	p.swapBuffers()
	p.flushPhase = flushStreaming
	timestamp = max(timestamp, p.timestampLast)
	s.id++
	s.state, s.at, s.length, s.timestamp, s.copied = streamReceiving, buffer.used, length, timestamp, 0
	s.headerEnd = int(alignUp(int64(buffer.used + batchHeaderBytes)))
	s.written, s.writeErr, s.err = s.headerEnd, nil, nil
	s.origin, s.cancel = nil, nil
	invariant.Assert(s.piecesBusy == 0 && !s.room, "a new stream has no piece or receive in flight")
	s.stamped.start(head, p.options.PartitionID, p.offsetNext, timestamp)
	p.allocateAhead(length)
	return s.id, nil
}

// StreamFeed takes the batch's arrived bytes (its first ones, more than
// the last call's): it copies the new ones into the journal, validates
// the frames now whole and writes whole blocks as pieces. An error means
// the stream failed (an invalid batch, a failed write); its owner ends
// it with StreamFinish, StreamAbort, or StreamDrop to append it whole
// (a partition that failed answers its fatal error and drops nothing).
func (p *Partition) StreamFeed(id uint64, arrived []byte) error {
	s := &p.stream
	switch {
	case s.id == id && s.err != nil:
		return s.err
	case p.fatal != nil:
		return p.fatal
	case s.id != id || s.state != streamReceiving:
		return ErrClosed
	}
	invariant.Assert(len(arrived) >= s.copied && len(arrived) <= s.length, "a stream grows within its batch")
	invariant.Assert(!s.room, "no bytes are fed while the room is lent")
	copy(p.inflight.data[s.at+s.copied:s.at+len(arrived)], arrived[s.copied:])
	s.copied = len(arrived)
	return p.streamTake()
}

// StreamRoom lends the owner the journal's room for the batch's next
// bytes (all of them, from the last fed or received one) to receive into,
// until it reports them with StreamReceived. origin is the owner's copy
// of the whole batch, which it keeps until it ends the stream
// (StreamFinish or StreamAbort): a drop for an append whole copies the
// bytes received into the room back there. cancel asks the owner to end
// the receive soon; a drop meanwhile calls it and waits. It returns nil
// when the stream is not receiving, or its journal is not a region lent
// by the cache (memory outside the Go heap that stays mapped).
func (p *Partition) StreamRoom(id uint64, origin []byte, cancel func()) []byte {
	s := &p.stream
	if s.id != id || s.state != streamReceiving || s.err != nil || p.fatal != nil || p.inflight.lender == nil {
		return nil
	}
	invariant.Assert(!s.room && len(origin) == s.length && cancel != nil, "one room lent at a time, with the batch's origin")
	s.origin, s.cancel, s.room = origin, cancel, true
	return p.inflight.data[s.at+s.copied : s.at+s.length]
}

// StreamReceived ends StreamRoom's loan: n bytes were received into the
// room. A receiving stream takes them as StreamFeed takes arrived ones;
// an error means the stream failed, or was dropped meanwhile (ErrClosed,
// or why it failed).
func (p *Partition) StreamReceived(id uint64, n int) error {
	s := &p.stream
	invariant.Assert(s.id == id && s.room && n >= 0 && s.copied+n <= s.length, "a lent room's receive ends once, within the batch")
	s.room = false
	s.copied += n
	switch {
	case s.state == streamAborting:
		p.streamLet()
		if s.err != nil {
			return s.err
		}
		return ErrClosed
	case p.fatal != nil:
		return p.fatal
	}
	invariant.Assert(s.state == streamReceiving, "a room is lent while receiving")
	return p.streamTake()
}

// streamTake validates the frames of the batch's bytes now arrived and
// writes whole blocks as pieces; an error fails the stream.
func (p *Partition) streamTake() error {
	s := &p.stream
	if err := s.validator.Advance(p.inflight.data[s.at : s.at+s.copied]); err != nil {
		p.streamFail(fmt.Errorf("%w: %w", ErrInvalidBatch, err))
		return s.err
	}
	p.streamPiece()
	return nil
}

// streamPiece writes the arrived whole blocks after the last piece when
// they are worth a write and a piece may start.
func (p *Partition) streamPiece() {
	s := &p.stream
	end := int(alignDown(int64(s.at + s.copied)))
	if s.pieces() == p.streamPiecesLimit() || p.fatal != nil || end-s.written < streamPieceBytesMin {
		return
	}
	p.streamWrite(end)
}

// streamPiecesLimit is how many data pieces may be in flight: a region
// lent by the cache is written in place, so its pieces go out at once;
// a journal of the storage's pools lends itself to one write at a time
// (registered buffers).
func (p *Partition) streamPiecesLimit() int {
	if p.inflight.lender != nil {
		return streamPiecesMax
	}
	return 1
}

// streamWrite writes the in-flight buffer's [written, end) as a data
// piece on a free one of the stream's piece ops.
func (p *Partition) streamWrite(end int) {
	s := &p.stream
	invariant.Assert(s.pieces() < p.streamPiecesLimit() && s.written < end, "a piece has an op and bytes")
	if s.pieceOps == nil {
		s.pieceOps = new([streamPiecesMax]Op)
		for index := range s.pieceOps {
			s.pieceOps[index].Callback = p.streamPieceDone
		}
	}
	slot := bits.TrailingZeros8(^s.piecesBusy)
	buffer := p.inflight
	op := &s.pieceOps[slot]
	op.Code, op.File, op.Buffer = OpWrite, buffer.segment.logFile, buffer.data[s.written:end]
	op.Position = buffer.filePosition + int64(s.written)
	op.InPlace = buffer.lender != nil // a lent region stays mapped until the write ends
	s.piecesBusy |= 1 << slot
	s.written = end
	p.storage.Submit(op)
}

// StreamFinish completes the stream with op.Batch, the whole batch (the
// bytes fed so far and the rest). On nil, op.Done runs exactly once, as
// for Append. On an error Done does not run and nothing of the batch is
// stored: ErrInvalidBatch (the answer to the request), or another error
// when the stream ended without storing (a failed piece, a close); the
// batch may then be appended whole.
func (p *Partition) StreamFinish(id uint64, op *AppendOp) error {
	s := &p.stream
	if err := p.StreamFeed(id, op.Batch); err != nil {
		p.StreamAbort(id)
		return err
	}
	invariant.Assert(len(op.Batch) == s.length, "a stream finishes with its whole batch")
	if _, err := s.validator.Finish(); err != nil {
		p.streamFail(fmt.Errorf("%w: %w", ErrInvalidBatch, err))
		return s.err
	}
	defer p.checkInvariants()
	buffer := p.inflight
	stored := buffer.data[s.at : s.at+s.length]
	stampSummed(stored, p.options.PartitionID, p.offsetNext, s.timestamp, s.stamped.sum())
	if invariant.Enabled {
		invariant.Assert(invalidBatch(stored) == "", "a streamed batch verifies")
	}
	count := batchMessageCount(stored)
	op.BaseOffset, op.Count, op.Err = p.offsetNext, count, nil
	p.journal(buffer, s.length, count, s.timestamp)
	buffer.ops = append(buffer.ops, op)
	position, prefix := buffer.tail()
	p.pending.reset(buffer.segment, position, prefix)
	s.state = streamFinishing
	s.origin, s.cancel = nil, nil // the owner's frame goes with its answer: hold no reference to it
	p.streamed++
	if s.pieces() == 0 && s.written == s.headerEnd {
		p.writeInflight(0, p.inflight.writeLength()) // whole, the last block padded with zeros
		p.kicker.Kick()
		return nil
	}
	p.streamRest()
	return nil
}

// streamRest writes a complete batch's data after the last piece (the
// last block padded with zeros) when a piece may start, and its header
// block(s) once no data piece is in flight: from the journal, whose
// only write they are then.
func (p *Partition) streamRest() {
	s := &p.stream
	invariant.Assert(s.state == streamFinishing && s.writeErr == nil, "a complete batch's writes go on")
	if end := p.inflight.writeLength(); s.written < end {
		if s.pieces() < p.streamPiecesLimit() {
			p.streamWrite(end)
			p.kicker.Kick()
		}
		return
	}
	if s.pieces() > 0 {
		return
	}
	p.writeInflight(0, s.headerEnd)
	p.kicker.Kick()
}

// streamFail ends a receiving stream that failed with err.
func (p *Partition) streamFail(err error) {
	s := &p.stream
	invariant.Assert(s.state == streamReceiving, "a receiving stream fails")
	s.err = err
	p.streamDrop(true)
}

// StreamAbort drops the stream for its owner, whose request is gone;
// nothing of it is stored, and origin gets nothing back. It does nothing
// for a stream that ended already.
func (p *Partition) StreamAbort(id uint64) {
	s := &p.stream
	if s.id != id || s.state != streamReceiving {
		return
	}
	invariant.Assert(!s.room, "an owner aborts no stream it receives into")
	p.streamDrop(false)
}

// StreamDrop drops the stream for its request to be appended whole:
// nothing of it is stored, and the bytes received into the journal go
// back to origin (StreamRoom). It does nothing for a stream that ended
// already.
func (p *Partition) StreamDrop(id uint64) {
	s := &p.stream
	if s.id != id || s.state != streamReceiving {
		return
	}
	p.streamDrop(true)
}

// streamDrop ends a receiving stream without storing it: at once, or
// once the owner's receive into the journal and its pieces in flight
// ended. keep: its request is appended whole (origin gets its bytes).
// A stream is dropped once: only a receiving one is.
func (p *Partition) streamDrop(keep bool) {
	s := &p.stream
	s.state = streamAborting
	if !keep {
		s.origin = nil // the owner's frame is gone with its request
	}
	if s.room {
		s.cancel()
		return
	}
	p.streamLet()
}

// streamLet hands a dropped stream's bytes back to its origin once no
// receive into the journal runs, and drains it once no piece is in
// flight either.
func (p *Partition) streamLet() {
	s := &p.stream
	invariant.Assert(s.state == streamAborting && !s.room, "a dropped stream lets go of its journal")
	if s.origin != nil {
		copy(s.origin[:s.copied], p.inflight.data[s.at:s.at+s.copied])
	}
	s.origin, s.cancel = nil, nil
	if s.pieces() == 0 {
		p.streamDrain()
	}
}

// streamYield drops a receiving stream for what waits for the write
// pipeline to drain (a Sync or Flush, a purge, Close) or for the cache
// region its journal borrowed (lonePending's yield): the stream's request
// could keep them waiting as long as its client takes to send it, and
// appended whole it follows them instead.
func (p *Partition) streamYield() { p.StreamDrop(p.stream.id) }

// streamDrain gives the partition back once no piece of a dropped
// stream is in flight: the buffer returns to pending, empty, and a log
// that pieces extended is truncated back to the segment's end before
// anything else is written there.
func (p *Partition) streamDrain() {
	s := &p.stream
	invariant.Assert(s.state == streamAborting && s.pieces() == 0 && !s.room, "a stream drains once its pieces and receive completed")
	s.state = streamIdle
	buffer := p.inflight
	wrote := s.written > s.headerEnd
	p.inflight = nil
	buffer.reset(buffer.segment, buffer.filePosition, buffer.prefix())
	buffer.free()
	p.pending = buffer
	if wrote && p.fatal == nil {
		p.truncateTail(buffer.segment)
		return
	}
	p.flushPhase = flushIdle
	p.resume()
}

// streamWriteDone handles the completion of a stream's final write: the
// whole batch, or its header block(s).
func (p *Partition) streamWriteDone(op *Op) {
	s := &p.stream
	invariant.Assert(s.state == streamFinishing && s.pieces() == 0 && s.writeErr == nil, "a stream's final write completed")
	if op.Err == nil {
		invariant.Assert(op.Result == int64(len(op.Buffer)), "whole stream write completed")
	}
	s.writeErr = op.Err
	p.streamFinished()
}

// streamPieceDone handles the completion of a data piece: the next may
// follow, or the header once the batch is complete and every piece was
// written.
func (p *Partition) streamPieceDone(op *Op) {
	s := &p.stream
	slot := 0
	for op != &s.pieceOps[slot] {
		slot++
	}
	invariant.Assert(s.piecesBusy&(1<<slot) != 0, "a stream's data piece was in flight")
	s.piecesBusy &^= 1 << slot
	if op.Err == nil {
		invariant.Assert(op.Result == int64(len(op.Buffer)), "whole stream piece completed")
	}
	op.Buffer = nil
	switch {
	case op.Err != nil && s.state == streamReceiving:
		p.streamFail(fmt.Errorf("engine: write %s: %w", p.inflight.segment.logPath(p.options.Directory), op.Err))
	case s.state == streamReceiving:
		p.streamPiece()
	case s.state == streamAborting:
		if s.pieces() == 0 && !s.room { // else StreamReceived drains it
			p.streamDrain()
		}
	case op.Err != nil || s.writeErr != nil:
		if s.writeErr == nil {
			s.writeErr = op.Err
		}
		if s.pieces() == 0 {
			p.streamFinished()
		}
	default:
		p.streamRest()
	}
}

// streamFinished ends a stream whose final writes completed: as a group
// write's completion (sync when persisted, then visible and
// acknowledged), or as a failed one.
func (p *Partition) streamFinished() {
	s := &p.stream
	s.state = streamIdle
	if s.writeErr != nil {
		p.writeFailed(s.writeErr)
		return
	}
	p.writeCompleted()
}

// StreamedBatches counts the batches appended while they arrived since
// the partition opened.
func (p *Partition) StreamedBatches() uint64 { return p.streamed }
