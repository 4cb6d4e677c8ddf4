package engine

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zeebo/xxh3"

	"github.com/whippetio/whippet/internal/invariant"
)

// Partition snapshots carry a partition's whole content for vsr state
// transfer: ExportSnapshot on a replica that has it, InstallSnapshot on
// one that lacks it. Little-endian:
//
//	0        4         8             16            24              32              40           44             48            52         56
//	+--------+---------+-------------+-------------+---------------+---------------+------------+--------------+-------------+----------+--------+
//	| magic  | version | offset_first| offset_next | timestamp_last| batches_bytes | batch_count| consumer_count| partition_id| reserved | xxh3   |
//	| "WPSN" | u32 = 1 | u64         | u64         | u64 µs        | u64           | u32        | u32          | u32         | u32      | u64    |
//	+--------+---------+-------------+-------------+---------------+---------------+------------+--------------+-------------+----------+--------+
//	then batches_bytes of stored batch records back to back, exactly as in
//	a .log (offsets contiguous from offset_first up to offset_next), then
//	consumer_count entries of 16 bytes: [kind u8][reserved 3][id u32][offset u64].
//
// The checksum at 56 is xxh3 of everything after the header seeded with
// xxh3 of bytes 0..56; each batch also keeps its own checksums, which
// install verifies again.
const (
	snapshotMagic         = 0x4e535057 // "WPSN"
	snapshotVersion       = 1
	snapshotHeaderBytes   = 64
	snapshotConsumerBytes = 16
	// SnapshotBytesMax bounds one partition snapshot: state transfer holds
	// it in memory whole (vsr's stateBytesMax).
	SnapshotBytesMax = 1 << 30
	// snapshotReadBytes is one blocking read of an export.
	snapshotReadBytes = 4 << 20
)

// ErrSnapshotTooLarge: the partition holds more than the byte limit given
// to ExportSnapshot.
var ErrSnapshotTooLarge = errors.New("engine: partition snapshot larger than its limit")

// ErrSnapshotInvalid: InstallSnapshot was handed bytes that are not a
// whole, intact snapshot (errors.Is; the wrapping error says why).
var ErrSnapshotInvalid = errors.New("engine: invalid partition snapshot")

// BlockingReader reads a partition's open files synchronously for
// ExportSnapshot: ReadAt fills buffer from file at position, short only at
// end of file. *DirectStorage is one (the shard's storage opens files
// through it, so a partition's File values are descriptors). Buffer,
// position and length are 4096-byte aligned, as O_DIRECT needs.
type BlockingReader interface {
	ReadAt(file File, buffer []byte, position int64) (int, error)
}

// ReadAt is a blocking pread (see BlockingReader).
func (s *DirectStorage) ReadAt(file File, buffer []byte, position int64) (int, error) {
	count, err := directRead(int(file), buffer, position)
	return int(count), err
}

// ExportSnapshot appends to dst the partition's snapshot: every stored
// batch from OffsetFirst to OffsetNext in order, its next offset and its
// consumer offsets (format above). It runs synchronously — blocking reads
// of the segment files through reader, on the caller's thread — because
// vsr's Snapshotter hook is synchronous and state transfer is rare. It
// fails with ErrSnapshotTooLarge past bytesMax (≤ SnapshotBytesMax), with
// ErrBusy during a purge or segment removal, and with an *CorruptError
// when a stored batch fails its checks.
func (p *Partition) ExportSnapshot(dst []byte, bytesMax int, reader BlockingReader) ([]byte, error) {
	invariant.Assert(bytesMax <= SnapshotBytesMax, "snapshot limit within SnapshotBytesMax")
	switch {
	case p.fatal != nil:
		return dst, p.fatal
	case p.state != stateOpen:
		return dst, ErrClosed
	case p.maintenance.busy():
		return dst, ErrBusy
	}
	x := exporter{p: p, reader: reader, start: len(dst), limit: p.offsetVisible, bytesMax: bytesMax}
	x.offset = p.OffsetFirst()
	x.out = append(dst, make([]byte, snapshotHeaderBytes)...)
	for _, s := range p.segments {
		if err := x.segment(s); err != nil {
			return dst, err
		}
	}
	for x.offset < x.limit {
		record := p.read.memoryRecord(x.offset)
		if record == nil {
			return dst, fmt.Errorf("engine: snapshot of %s: offset %d is neither on disk nor in memory", p.options.Directory, x.offset)
		}
		if err := x.take(record); err != nil {
			return dst, err
		}
	}
	batchesBytes := len(x.out) - x.start - snapshotHeaderBytes
	for index := range p.offsets.values {
		value := &p.offsets.values[index]
		if value.present {
			x.out = appendSnapshotConsumer(x.out, value.consumer, value.offset)
		}
	}
	if len(x.out)-x.start > bytesMax {
		return dst, ErrSnapshotTooLarge
	}
	header := snapshotHeader{
		offsetFirst: p.OffsetFirst(), offsetNext: x.limit, timestampLast: p.timestampLast,
		batchesBytes: uint64(batchesBytes), batchCount: x.batches, partitionID: p.options.PartitionID,
		consumerCount: uint32((len(x.out) - x.start - snapshotHeaderBytes - batchesBytes) / snapshotConsumerBytes),
	}
	header.seal(x.out[x.start:])
	return x.out, nil
}

// exporter walks the segments of one export.
type exporter struct {
	p        *Partition
	reader   BlockingReader
	out      []byte
	start    int
	bytesMax int
	buffer   []byte
	// offset is the next offset expected; limit is OffsetNext.
	offset  uint64
	limit   uint64
	batches uint32
}

// segment copies the segment's batches below limit, reading its .log in
// aligned chunks; a record longer than the buffer grows it.
func (x *exporter) segment(s *segment) error {
	if len(x.buffer) == 0 {
		x.buffer = alignedBuffer(snapshotReadBytes)
	}
	position := int64(0)
	for position < s.sizeBytes && x.offset < x.limit {
		start := alignDown(position)
		length := min(int64(len(x.buffer)), alignUp(s.sizeBytes)-start)
		count, err := x.reader.ReadAt(s.logFile, x.buffer[:length], start)
		if err != nil {
			return fmt.Errorf("engine: snapshot read %s: %w", s.logPath(x.p.options.Directory), err)
		}
		available := min(int64(count), s.sizeBytes-start)
		at, need, err := x.walk(s, start, position-start, available)
		if err != nil {
			return err
		}
		if at == position-start && x.offset < x.limit {
			// No whole record: either it is longer than the buffer, or the
			// read came back short of the written size.
			if at+need <= int64(len(x.buffer)) {
				return x.corrupt(s, position, "short read inside the written log")
			}
			x.buffer = alignedBuffer(int(at + need))
			continue
		}
		position = start + at
	}
	return nil
}

// walk takes the whole records in buffer[at:available]; it returns where
// it stopped and, when a record did not fit, that record's length.
func (x *exporter) walk(s *segment, start, at, available int64) (int64, int64, error) {
	for at+batchHeaderBytes <= available && x.offset < x.limit {
		length := int64(batchLength(x.buffer[at:]))
		if length < batchHeaderBytes+frameHeaderBytes || start+at+length > s.sizeBytes {
			return at, 0, x.corrupt(s, start+at, "batch_length out of range")
		}
		if at+length > available {
			return at, length, nil
		}
		if err := x.take(x.buffer[at : at+length]); err != nil {
			if errors.Is(err, ErrCorrupt) {
				return at, 0, x.corrupt(s, start+at, err.Error())
			}
			return at, 0, err
		}
		at += length
	}
	return at, batchHeaderBytes, nil
}

// take appends one stored record after checking it continues the export.
func (x *exporter) take(record []byte) error {
	if reason := invalidBatch(record); reason != "" {
		return fmt.Errorf("%w: %s", ErrCorrupt, reason)
	}
	if batchBaseOffset(record) != x.offset {
		return fmt.Errorf("%w: batch at offset %d, expected %d", ErrCorrupt, batchBaseOffset(record), x.offset)
	}
	if len(x.out)-x.start+len(record) > x.bytesMax {
		return ErrSnapshotTooLarge
	}
	x.out = append(x.out, record...)
	x.offset = batchOffsetLast(record) + 1
	x.batches++
	return nil
}

func (x *exporter) corrupt(s *segment, position int64, reason string) error {
	return &CorruptError{Path: s.logPath(x.p.options.Directory), Position: position, Reason: reason}
}

// snapshotHeader is a snapshot's first 64 bytes.
type snapshotHeader struct {
	offsetFirst   uint64
	offsetNext    uint64
	timestampLast uint64
	batchesBytes  uint64
	batchCount    uint32
	consumerCount uint32
	partitionID   uint32
}

// seal writes the header into snapshot[:64] and checksums the whole.
func (h *snapshotHeader) seal(snapshot []byte) {
	le := binary.LittleEndian
	header := snapshot[:snapshotHeaderBytes]
	clear(header)
	le.PutUint32(header[0:], snapshotMagic)
	le.PutUint32(header[4:], snapshotVersion)
	le.PutUint64(header[8:], h.offsetFirst)
	le.PutUint64(header[16:], h.offsetNext)
	le.PutUint64(header[24:], h.timestampLast)
	le.PutUint64(header[32:], h.batchesBytes)
	le.PutUint32(header[40:], h.batchCount)
	le.PutUint32(header[44:], h.consumerCount)
	le.PutUint32(header[48:], h.partitionID)
	le.PutUint64(header[56:], snapshotChecksum(snapshot))
}

func snapshotChecksum(snapshot []byte) uint64 {
	return xxh3.HashSeed(snapshot[snapshotHeaderBytes:], xxh3.Hash(snapshot[:56]))
}

func appendSnapshotConsumer(out []byte, consumer Consumer, offset uint64) []byte {
	out = append(out, byte(consumer.Kind), 0, 0, 0)
	out = binary.LittleEndian.AppendUint32(out, consumer.ID)
	return binary.LittleEndian.AppendUint64(out, offset)
}
