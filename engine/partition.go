package engine

import (
	"fmt"
	"log/slog"

	"github.com/whippetio/whippet/internal/invariant"
)

// Partition is one partition's log: segments on disk, two write buffers,
// a view of the shard's cache, consumer offsets and the dedup window. It
// is a state machine driven by Storage completions and by its callers on
// the owning shard's thread; it never blocks and is not safe for
// concurrent use.
type Partition struct {
	storage Storage
	options PartitionOptions
	logger  *slog.Logger
	state   partitionState
	fatal   error

	// writeFailures counts failed log writes; writeStalled: the last one
	// is still being retried (RetryWrites or DurabilityMemory).
	writeFailures uint64
	writeStalled  bool

	directory File
	segments  []*segment
	// offsetNext is the next offset to assign; offsetVisible is one past the
	// last acknowledged offset: polls never see offsets at or above it.
	offsetNext    uint64
	offsetVisible uint64
	timestampLast uint64

	buffers    [2]writeBuffer
	pending    *writeBuffer
	inflight   *writeBuffer
	flushPhase flushPhase
	flushOp    Op
	acks       []*AppendOp

	roll  roller
	index indexWriter
	cache partitionCache
	// yieldStream is streamYield as a value made once: the yield function
	// of a stream's lent region (lendJournal).
	yieldStream func()
	read        reader

	offsets     consumerOffsets
	dedup       dedupWindow
	maintenance maintenance
	recovery    recovery
	closer      closer
	syncer      syncer
	closeDone   func(error)
	// tornBytes counts bytes truncated from torn tails at open.
	tornBytes int64

	// kicker is the storage when it can start a write within the turn
	// (large batches are then written in pieces, pieces.go); sums is the
	// checksum state of the batch being pieced (1.7 KB, allocated by the
	// first, so that the many partitions that never see a large batch
	// do not carry it); pieced counts them.
	kicker Kicker
	sums   *frameSums
	pieced uint64
	// stream is the batch appended while it arrives (stream.go); streamed
	// counts them.
	stream   batchStream
	streamed uint64
	// space allocates the active segment's space ahead of large batches
	// (allocate.go); made by the first. trimmed counts TrimSpace's cuts.
	space   *allocator
	trimmed uint64
}

type partitionState uint8

const (
	stateOpening partitionState = iota + 1
	stateOpen
	stateClosing
	stateClosed
	stateFailed
)

type flushPhase uint8

const (
	flushIdle flushPhase = iota
	flushWriting
	flushSyncing
	flushRolling
	// flushStalled holds a failed write of a memory-durability partition
	// (already acknowledged) until Tick retries it.
	flushStalled
	// flushTruncating cuts what a failed write may have left past the
	// segment's end, so unacknowledged batches never reappear at recovery.
	flushTruncating
	// flushStreaming: a batch is appended while it arrives (stream.go);
	// its pieces and final writes complete in this phase.
	flushStreaming
)

// AppendOp appends one batch record. The caller owns it until Done runs.
type AppendOp struct {
	// Batch is a whole batch record in the wire layout, its checksums
	// computed by the producer; the engine copies it before Append returns.
	Batch []byte
	// Timestamp (µs) becomes base_timestamp, raised if needed so that
	// timestamps never decrease within the partition. It must be > 0.
	Timestamp uint64
	Done      func(*AppendOp)

	// BaseOffset and Count describe what was stored (Count is below the
	// batch's message_count when dedup dropped messages, 0 when it dropped
	// all). Err is nil, an operating error, or a *FatalError.
	BaseOffset uint64
	Count      uint32
	Err        error
}

// OpenPartition recovers the partition in options.Directory (creating it
// when missing) and calls done once, with the partition ready or with the
// error that refused it (errors.Is(err, ErrCorrupt) for damage before the
// last durable point). The partition serves nothing before done.
func OpenPartition(storage Storage, options PartitionOptions, done func(*Partition, error)) {
	options.EnsureDefaults()
	if err := options.Validate(); err != nil {
		done(nil, err)
		return
	}
	p := &Partition{
		storage: storage,
		options: options,
		logger:  options.Logger.With("partition_directory", options.Directory),
		state:   stateOpening,
		acks:    make([]*AppendOp, 0, 64),
	}
	p.buffers[0] = newWriteBuffer(options.JournalBytes, options.Allocate, options.Release)
	p.buffers[1] = newWriteBuffer(options.JournalBytes, options.Allocate, options.Release)
	p.pending = &p.buffers[0]
	p.flushOp.Callback = p.flushCallback
	p.roll.init(p)
	p.index.init(p)
	p.read.init(p)
	p.offsets.init(p)
	p.dedup.init(options.DedupCount, options.DedupWindowMicros)
	p.maintenance.init(p)
	p.syncer.init(p)
	p.yieldStream = p.streamYield
	p.cache = partitionCache{cache: options.Cache}
	if kicker, ok := storage.(Kicker); ok && kicker.Kicks() {
		p.kicker = kicker
	}
	p.recovery.start(p, done)
}

// Append stamps op.Batch with the next offset and the partition's id and
// queues it for the next group write. On nil, op.Done runs exactly once:
// at once for DurabilityMemory, after the write (DurabilityWritten) or
// after the write and fdatasync (DurabilityPersisted). On an error Done
// does not run.
func (p *Partition) Append(op *AppendOp) error {
	if err := p.appendAllowed(); err != nil {
		return err
	}
	defer p.checkInvariants()
	record := op.Batch
	if len(record) > batchBytesMax {
		return fmt.Errorf("%w: longer than batchBytesMax", ErrInvalidBatch)
	}
	invariant.Assert(op.Timestamp > 0, "append timestamp is set")
	if p.piecesFit(len(record)) {
		return p.appendPieces(op)
	}
	buffer := p.pending
	if len(buffer.batches) == journalBatchesMax || !buffer.grow(len(record)) {
		return ErrJournalFull
	}
	stored := buffer.data[buffer.used : buffer.used+len(record)]
	if reason := p.admit(stored, record); reason != "" {
		return invalidBatchError(reason)
	}
	timestamp := max(op.Timestamp, p.timestampLast)
	count := p.dedup.filter(stored, record, timestamp)
	op.BaseOffset, op.Count, op.Err = p.offsetNext, count, nil
	if count > 0 {
		length := int(batchLength(stored))
		stampBatch(stored[:length], p.options.PartitionID, p.offsetNext, timestamp)
		p.journal(buffer, length, count, timestamp)
	}
	if p.options.Durability == DurabilityMemory || count == 0 {
		if p.options.Durability == DurabilityMemory {
			p.offsetVisible = p.offsetNext
		}
		p.startFlush()
		op.Done(op)
		return nil
	}
	buffer.ops = append(buffer.ops, op)
	p.startFlush()
	return nil
}

// journal records the stamped batch of length bytes at buffer's used end,
// holding count messages from the next offset, and moves the partition's
// next offset and last timestamp past it.
func (p *Partition) journal(buffer *writeBuffer, length int, count uint32, timestamp uint64) {
	buffer.batches = append(buffer.batches, journalBatch{
		offsetFirst: p.offsetNext, count: count, timestamp: timestamp, at: buffer.used, length: length,
	})
	buffer.used += length
	p.offsetNext += uint64(count)
	p.timestampLast = timestamp
}

// admit checks record's layout. Without a dedup window it first copies
// record into stored, its place in the journal, and checks the copy: the
// frame walk then reads bytes the copy just brought into this core's
// cache instead of missing once per frame on a buffer another core
// received (the copy streams). The dedup filter walks the frames of
// record itself, so with a window the check comes first. A refused
// record leaves its bytes past the buffer's used end, where the next
// append overwrites them.
func (p *Partition) admit(stored, record []byte) string {
	checked := record
	if !p.dedup.enabled() {
		copy(stored, record)
		checked = stored
	}
	if reason := invalidLayout(checked); reason != "" {
		return reason
	}
	if invariant.Enabled {
		invariant.Assert(invalidBatch(checked) == "", "admitted batch verifies")
	}
	return ""
}

func (p *Partition) appendAllowed() error {
	switch {
	case p.fatal != nil:
		return p.fatal
	case p.state == stateClosing || p.state == stateClosed:
		return ErrClosed
	case p.maintenance.blocksAppends(), p.stream.state != streamIdle:
		return ErrBusy
	}
	invariant.Assert(p.state == stateOpen, "append on an open partition")
	return nil
}

// CurrentOffset is the last acknowledged offset (0 when empty), the
// current_offset of poll replies.
func (p *Partition) CurrentOffset() uint64 {
	if p.offsetVisible == 0 {
		return 0
	}
	return p.offsetVisible - 1
}

// OffsetNext is one past the last acknowledged offset.
func (p *Partition) OffsetNext() uint64 { return p.offsetVisible }

// OffsetFirst is the first offset still stored (retention removes older).
func (p *Partition) OffsetFirst() uint64 { return p.segments[0].offsetStart }

// SegmentCount is the number of segments, the active one included.
func (p *Partition) SegmentCount() int { return len(p.segments) }

// SizeBytes is the written bytes of every segment.
func (p *Partition) SizeBytes() int64 {
	total := int64(0)
	for _, s := range p.segments {
		total += s.sizeBytes
	}
	return total
}

// Stats is what GetPartitions and GetStats report for a partition.
type Stats struct {
	SegmentCount  int
	SizeBytes     int64
	MessagesCount uint64
	OffsetFirst   uint64
	// CurrentOffset is the last acknowledged offset (0 when empty).
	CurrentOffset uint64
}

// Stats returns the partition's counters.
func (p *Partition) Stats() Stats {
	return Stats{
		SegmentCount:  len(p.segments),
		SizeBytes:     p.SizeBytes(),
		MessagesCount: p.offsetVisible - p.OffsetFirst(),
		OffsetFirst:   p.OffsetFirst(),
		CurrentOffset: p.CurrentOffset(),
	}
}

// TornBytes is the byte count recovery truncated from torn log tails.
func (p *Partition) TornBytes() int64 { return p.tornBytes }

// Err is the fatal error that stopped the partition, or nil.
func (p *Partition) Err() error { return p.fatal }

func (p *Partition) active() *segment { return p.segments[len(p.segments)-1] }

// fail stops the partition for good: every queued op gets err.
func (p *Partition) fail(err error) {
	if p.fatal != nil {
		return
	}
	p.fatal = err
	p.state = stateFailed
	p.logger.Error("partition stopped", "error", err)
	p.failAppends(p.inflight, err)
	p.failAppends(p.pending, err)
	p.read.failAll(err)
	p.offsets.failAll(err)
	p.maintenance.failAll(err)
	p.syncer.failAll(err)
	if p.closeDone != nil {
		done := p.closeDone
		p.closeDone = nil
		done(err)
	}
}

// failAppends completes a buffer's unacknowledged appends with err.
func (p *Partition) failAppends(buffer *writeBuffer, err error) {
	if buffer == nil {
		return
	}
	p.acks = append(p.acks[:0], buffer.ops...)
	clear(buffer.ops)
	buffer.ops = buffer.ops[:0]
	for _, op := range p.acks {
		op.Err = err
		op.Done(op)
	}
	clear(p.acks)
}

func invalidBatchError(reason string) error {
	return fmt.Errorf("%w: %s", ErrInvalidBatch, reason)
}

// PiecedBatches counts the batches written in pieces since the partition
// opened.
func (p *Partition) PiecedBatches() uint64 { return p.pieced }

// invalidLayout checks what every append needs to be safe to store: the
// header, counts and the frames tiling the record. Checksums are the
// admission gateway's job (verified again here in invariant builds and on
// every read from disk).
func invalidLayout(record []byte) string { return walkLayout(record, nil) }

// walkLayout is invalidLayout feeding every frame's checksum to sums
// when it is not nil.
func walkLayout(record []byte, sums *frameSums) string {
	if len(record) < batchHeaderBytes+frameHeaderBytes {
		return "shorter than a header and one frame"
	}
	if len(record) > batchBytesMax {
		return "longer than batchBytesMax"
	}
	if batchLength(record) != uint64(len(record)) {
		return "batch_length does not match the record"
	}
	count := batchMessageCount(record)
	if count == 0 || count > batchMessagesMax {
		return "message_count out of range"
	}
	position := batchHeaderBytes
	for index := uint32(0); index < count; index++ {
		if len(record)-position < frameHeaderBytes {
			return "frame header overruns the record"
		}
		length := frameLength(record[position:])
		if length > len(record)-position {
			return "frame overruns the record"
		}
		if frameOffsetDelta(record[position:]) != index {
			return "offset_delta is not the frame index"
		}
		if sums != nil {
			sums.add(record[position:])
			sums.touchAhead(record, position, length)
		}
		position += length
	}
	if position != len(record) {
		return "frames do not tile the record"
	}
	return ""
}
