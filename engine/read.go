package engine

import (
	"fmt"
	"sort"

	"github.com/whippetio/whippet/internal/invariant"
)

// PollStrategy is how a poll picks its first offset (PROTOCOL.md §1.6).
type PollStrategy uint8

const (
	PollOffset    PollStrategy = 1 // the offset in Value
	PollTimestamp PollStrategy = 2 // the first batch with base_timestamp >= Value (µs)
	PollFirst     PollStrategy = 3 // the first stored offset
	PollLast      PollStrategy = 4 // the last Count messages
	PollNext      PollStrategy = 5 // the consumer's stored offset + 1, or the first
)

// PollOp reads up to Count messages. The caller owns it until Done runs.
type PollOp struct {
	Strategy   PollStrategy
	Value      uint64
	Count      uint32
	Consumer   Consumer
	AutoCommit bool
	// Out receives whole or sliced batch records (PROTOCOL.md §8.5) appended
	// after its current length, within its capacity: a poll returns fewer
	// messages rather than grow it.
	Out []byte
	// Spans, when it has spare capacity, lets the poll leave whole records
	// the cache holds in its arena in place instead of copying them into
	// Out (up to that capacity; the rest is copied as usual). Each record
	// left in place is appended to Spans, pinned, and its bytes still count
	// against Out's capacity, which shrinks by them: a reply is as large as
	// with copies. The caller owns the spans once Done runs, whatever Err
	// says, and releases each (PollSpan.Release). Spans is empty at Poll.
	Spans []PollSpan
	Done  func(*PollOp)

	// Messages is the count appended to Out; OffsetFirst and OffsetLast
	// bound them. CurrentOffset is the partition's last acknowledged offset.
	// NeedBytes is set when Messages is 0 only because the first message
	// due does not fit Out's spare capacity: the capacity a retry needs to
	// receive it (one whole or sliced record); else 0.
	NeedBytes     int
	Messages      uint32
	OffsetFirst   uint64
	OffsetLast    uint64
	CurrentOffset uint64
	Err           error

	offset    uint64
	limit     uint64
	remaining uint32
	timestamp uint64
	// byTimestamp is set until the first batch at or after timestamp.
	byTimestamp bool
	queued      *PollOp
}

// Poll serves op from the write buffers, the cache or the disk. On nil,
// op.Done runs exactly once, possibly before Poll returns. A poll never
// returns offsets at or above OffsetNext.
func (p *Partition) Poll(op *PollOp) error {
	if p.fatal != nil {
		return p.fatal
	}
	if p.state != stateOpen {
		return ErrClosed
	}
	if p.maintenance.blocksAppends() {
		return ErrBusy
	}
	if op.Strategy < PollOffset || op.Strategy > PollNext {
		return fmt.Errorf("engine: unknown poll strategy %d", op.Strategy)
	}
	invariant.Assert(len(op.Spans) == 0, "a poll starts with no spans")
	op.Messages, op.OffsetFirst, op.OffsetLast, op.Err = 0, 0, 0, nil
	op.NeedBytes = 0
	op.limit = p.offsetVisible
	op.remaining = min(op.Count, pollMessagesMax)
	op.byTimestamp = false
	op.queued = nil
	p.resolveStart(op)
	if p.read.fill(op) {
		p.read.complete(op)
	}
	return nil
}

func (p *Partition) resolveStart(op *PollOp) {
	first := p.OffsetFirst()
	switch op.Strategy {
	case PollOffset:
		op.offset = op.Value
	case PollFirst:
		op.offset = first
	case PollLast:
		op.offset = 0
		if op.limit > uint64(op.Count) {
			op.offset = op.limit - uint64(op.Count)
		}
	case PollNext:
		op.offset = first
		if stored, ok := p.offsets.get(op.Consumer); ok {
			op.offset = stored + 1
		}
	case PollTimestamp:
		p.resolveTimestamp(op)
	}
	op.offset = max(op.offset, first)
}

// resolveTimestamp picks where a timestamp poll starts walking: the cache
// when its first batch is older than the timestamp (timestamps never
// decrease), else the first segment that reaches it.
func (p *Partition) resolveTimestamp(op *PollOp) {
	op.timestamp = op.Value
	op.byTimestamp = true
	if oldest := p.cache.oldest(); oldest != nil && oldest.timestamp < op.timestamp {
		op.offset = oldest.offsetFirst
		if record := p.cache.findTimestamp(op.timestamp); record != nil {
			op.offset = batchBaseOffset(record)
		}
		return
	}
	for _, s := range p.segments {
		if !s.empty() && s.timestampMax >= op.timestamp {
			op.offset = s.offsetStart
			return
		}
	}
	op.offset = p.active().offsetEnd
}

// reader serves polls; one poll at a time reads from disk, others queue.
type reader struct {
	p       *Partition
	op      Op
	buffer  []byte
	current *PollOp
	first   *PollOp
	last    *PollOp
	// segment, walkPosition and walkOffset let a poll continue its walk
	// where the previous read of that segment stopped.
	segment      *segment
	walkPosition int64
	walkOffset   uint64
	readPosition int64
	// readLimit is the segment's written size when the read was issued:
	// bytes past it may be older than the write that completed since.
	readLimit int64
	ahead     readAhead
}

func (r *reader) init(p *Partition) {
	r.p = p
	r.op.Callback = r.readDone
	r.initAhead()
}

func (r *reader) busy() bool { return r.current != nil || r.ahead.busy }

// fill copies what memory holds and starts a disk read when needed. It
// returns true when op is complete, false when a read is in flight or op
// is queued.
func (r *reader) fill(op *PollOp) bool {
	p := r.p
	for op.remaining > 0 && op.offset < op.limit {
		if record, sequence := r.memoryRecordAt(op.offset); record != nil {
			if !r.take(op, record, sequence) {
				return true
			}
			continue
		}
		target := p.segmentFor(op.offset)
		if target == nil {
			return true
		}
		if r.current != nil && r.current != op || r.current == nil && p.maintenance.busy() {
			r.enqueue(op)
			return false
		}
		if r.takeAhead(op, target) {
			return false
		}
		r.current = op
		r.startRead(op, target)
		return false
	}
	return true
}

func (r *reader) memoryRecord(offset uint64) []byte {
	record, _ := r.memoryRecordAt(offset)
	return record
}

// memoryRecordAt returns the record holding offset in the write buffers
// or the cache, and its cache sequence (noSequence for a write buffer's).
func (r *reader) memoryRecordAt(offset uint64) ([]byte, uint64) {
	p := r.p
	for _, buffer := range [2]*writeBuffer{p.inflight, p.pending} {
		if buffer == nil {
			continue
		}
		if index := buffer.find(offset); index >= 0 {
			return buffer.record(index), noSequence
		}
	}
	return p.cache.findSequence(offset)
}

// noSequence marks a record that is not the cache's.
const noSequence = ^uint64(0)

// take appends the part of record op wants; false means Out is full:
// nothing fit, or the record was sliced short of what op wants of it for
// want of room (a later, smaller record must not be taken past the
// frames left out). sequence is the record's in the cache, or noSequence.
func (r *reader) take(op *PollOp, record []byte, sequence uint64) bool {
	if op.byTimestamp {
		if batchBaseTimestamp(record) < op.timestamp {
			op.offset = batchOffsetLast(record) + 1
			return true
		}
		op.byTimestamp = false
		op.offset = max(op.offset, batchBaseOffset(record))
	}
	start := max(op.offset, batchBaseOffset(record))
	countMax := uint32(min(uint64(op.remaining), op.limit-start))
	// A batch wanted whole is copied as it is; one that does not fit whole
	// is sliced to the frames that do, so a poll always makes progress
	// (PROTOCOL.md §15 #4). Slicing walks every frame header: a 1 MB batch
	// of 1 KB messages costs a thousand header reads more than its copy.
	var out []byte
	var taken uint32
	var needBytes int
	if start == batchBaseOffset(record) && batchMessageCount(record) <= countMax && len(record) <= cap(op.Out)-len(op.Out) {
		out, taken = r.takeWhole(op, record, sequence), batchMessageCount(record)
	} else {
		out, taken, needBytes = appendSlice(op.Out, record, start, countMax)
	}
	if taken == 0 {
		if op.Messages == 0 {
			op.NeedBytes = needBytes
		}
		return false
	}
	op.Out = out
	if op.Messages == 0 {
		op.OffsetFirst = start
	}
	op.Messages += taken
	op.remaining -= taken
	op.offset = start + uint64(taken)
	op.OffsetLast = op.offset - 1
	return op.offset > batchOffsetLast(record) || op.remaining == 0 || op.offset >= op.limit
}

// takeWhole appends a whole record to Out, or leaves it in the cache's
// arena as a span when op takes spans and the cache can pin it; a span's
// bytes come off Out's capacity. It returns the new Out.
func (r *reader) takeWhole(op *PollOp, record []byte, sequence uint64) []byte {
	if sequence == noSequence || len(op.Spans) == cap(op.Spans) {
		return append(op.Out, record...)
	}
	cache := r.p.cache.cache // a record with a sequence came from it
	data := cache.pin(sequence)
	if data == nil {
		return append(op.Out, record...)
	}
	invariant.Assert(&data[0] == &record[0] && len(data) == len(record), "a pinned record is the one found")
	op.Spans = append(op.Spans, PollSpan{At: len(op.Out), Data: data, cache: cache, sequence: sequence})
	return op.Out[: len(op.Out) : cap(op.Out)-len(record)]
}

// segmentFor returns the segment whose written range holds offset.
func (p *Partition) segmentFor(offset uint64) *segment {
	index := sort.Search(len(p.segments), func(i int) bool { return p.segments[i].offsetEnd > offset })
	if index == len(p.segments) || p.segments[index].offsetStart > offset {
		return nil
	}
	return p.segments[index]
}

func (r *reader) startRead(op *PollOp, target *segment) {
	var position int64
	switch {
	case r.segment == target && r.walkOffset == op.offset:
		position = r.walkPosition
	case op.byTimestamp:
		position = target.positionForTimestamp(op.timestamp)
	default:
		position = target.positionForOffset(op.offset)
	}
	if r.buffer == nil { // a partition nobody reads from disk holds no read buffer
		r.buffer = r.p.options.Allocate(max(r.p.options.ReadBytes, 2*blockBytes))
		invariant.Assert(aligned(r.buffer), "the read buffer is aligned")
	}
	r.segment = target
	r.walkPosition = position
	r.walkOffset = op.offset
	r.readPosition = alignDown(position)
	r.readLimit = target.sizeBytes
	length := min(int64(len(r.buffer)), alignUp(r.readLimit)-r.readPosition)
	invariant.Assert(length > 0, "a read covers written bytes")
	r.op.Code = OpRead
	r.op.File = target.logFile
	r.op.Buffer = r.buffer[:length]
	r.op.Position = r.readPosition
	r.p.storage.Submit(&r.op)
}

func (r *reader) readDone(op *Op) {
	poll := r.current
	invariant.Assert(poll != nil, "read completion has a poll")
	if op.Err != nil {
		poll.Err = fmt.Errorf("engine: read %s: %w", r.segment.logPath(r.p.options.Directory), op.Err)
		r.finish(poll)
		return
	}
	complete, err := r.walk(poll, op.Result)
	if err != nil {
		poll.Err = err
		r.finish(poll)
		return
	}
	if complete || r.fill(poll) {
		r.current = nil
		if r.first == nil {
			r.startAhead() // a sequential consumer's next poll will want what follows
		}
		r.finish(poll)
	}
}

// walk serves records from the read buffer; it returns true when poll is
// complete (Out full, count reached).
func (r *reader) walk(poll *PollOp, readBytes int64) (bool, error) {
	available := min(readBytes, r.readLimit-r.readPosition)
	at := r.walkPosition - r.readPosition
	for at+batchHeaderBytes <= available {
		length := int64(batchLength(r.buffer[at:]))
		// Records are written whole, so one whose header lies below the
		// size at issue ends below it too.
		if length < batchHeaderBytes+frameHeaderBytes || r.readPosition+at+length > r.readLimit {
			return true, r.corrupt(at, "batch_length out of range")
		}
		if at+length > available {
			if at != r.walkPosition-r.readPosition {
				break
			}
			if at+length <= int64(len(r.buffer)) {
				return true, r.corrupt(at, "short read inside the written log")
			}
			r.p.options.Release(r.buffer)
			r.buffer = r.p.options.Allocate(int(at+length) + blockBytes)
			break
		}
		record := r.buffer[at : at+length]
		if reason := r.invalid(record); reason != "" {
			return true, r.corrupt(at, reason)
		}
		if batchOffsetLast(record) >= poll.offset && !r.take(poll, record, noSequence) {
			return true, nil
		}
		at += length
		poll.offset = max(poll.offset, batchOffsetLast(record)+1)
		if poll.remaining == 0 || poll.offset >= poll.limit {
			break
		}
	}
	r.walkPosition = r.readPosition + at
	r.walkOffset = poll.offset
	return poll.remaining == 0 || poll.offset >= poll.limit, nil
}

func (r *reader) corrupt(at int64, reason string) error {
	return &CorruptError{Path: r.segment.logPath(r.p.options.Directory), Position: r.readPosition + at, Reason: reason}
}

func (r *reader) finish(poll *PollOp) {
	r.current = nil
	r.complete(poll)
	r.p.resume()
}

func (r *reader) complete(op *PollOp) {
	p := r.p
	op.CurrentOffset = p.CurrentOffset()
	if op.AutoCommit && op.Messages > 0 && op.Err == nil {
		p.offsets.autoCommit(op.Consumer, op.OffsetLast)
	}
	op.Done(op)
}

func (r *reader) enqueue(op *PollOp) {
	op.queued = nil
	if r.last == nil {
		r.first = op
	} else {
		r.last.queued = op
	}
	r.last = op
}

// resume restarts queued polls once the disk reader is free.
func (r *reader) resume() {
	for r.current == nil && r.first != nil && !r.p.maintenance.busy() {
		op := r.first
		r.first = op.queued
		if r.first == nil {
			r.last = nil
		}
		op.limit = min(op.limit, r.p.offsetVisible)
		if r.fill(op) {
			r.complete(op)
		}
	}
}

func (r *reader) failAll(err error) {
	for r.first != nil {
		op := r.first
		r.first = op.queued
		op.Err = err
		op.Done(op)
	}
	r.last = nil
}

// invalid checks a record read from disk: its layout always, its checksums
// unless the partition was told not to (ReadChecksumsUnverified).
func (r *reader) invalid(record []byte) string {
	if r.p.options.ReadChecksumsUnverified {
		return invalidLayout(record)
	}
	return invalidBatch(record)
}
