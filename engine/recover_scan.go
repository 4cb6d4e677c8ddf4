package engine

import (
	"bytes"
	"fmt"

	"github.com/whippetio/whippet/internal/invariant"
)

// segmentScan holds the recovery scan's buffers and findings for the
// segment being recovered.
type segmentScan struct {
	buffer       []byte
	readPosition int64
	walkPosition int64
	fileSize     int64
	indexSize    int64
	indexBytes   []byte
	// disk holds the parsed on-disk index; witness is the position of its
	// last entry: a batch the log held durably (doc.go invariant 4).
	disk    []indexEntry
	witness int64
	rebuilt []byte
	stop    string
	// zeroPosition is how far the bytes past walkPosition were found to
	// be zeros; zeroTail says they all are, up to fileSize.
	zeroPosition int64
	zeroTail     bool
	// tail is the walk's partial last block, kept when the walk ends; the
	// last segment's is the first write buffer's prefix.
	tail []byte
}

func (s *segmentScan) init() {
	s.tail = make([]byte, 0, blockBytes)
}

func (s *segmentScan) release() {
	s.buffer, s.indexBytes, s.rebuilt, s.disk = nil, nil, nil, nil
}

func (s *segmentScan) readBuffer() []byte {
	if want := min(recoverReadBytes, alignUp(s.fileSize)-s.readPosition); int64(len(s.buffer)) < want {
		// Sized on first use, no larger than the log needs: a new
		// partition's recovery (CreateTopic) reads nothing. Each read
		// refills the buffer from readPosition, so nothing is lost.
		s.buffer = alignedBuffer(int(want))
	}
	length := min(int64(len(s.buffer)), alignUp(s.fileSize)-s.readPosition)
	return s.buffer[:length]
}

// openDone records the results of the open, size and index-read stages.
func (r *recovery) openDone(op *Op) error {
	current, scan := r.current, &r.scan
	switch r.stage {
	case recoverOpenLog:
		current.logFile = File(op.Result)
		r.stage = recoverOpenIndex
		return nil
	case recoverOpenIndex:
		current.indexFile = File(op.Result)
		current.filesOpen = true
		r.stage = recoverSizeLog
		return nil
	case recoverSizeLog:
		scan.fileSize = op.Result
		r.stage = recoverSizeIndex
		return nil
	case recoverSizeIndex:
		scan.indexSize = op.Result
		scan.disk = scan.disk[:0]
		scan.witness = -1
		if scan.indexSize > 0 {
			scan.indexBytes = alignedBuffer(int(scan.indexSize))
			r.stage = recoverReadIndex
			return nil
		}
	case recoverReadIndex:
		scan.parseIndex(scan.indexBytes[:min(op.Result, scan.indexSize)])
	}
	scan.readPosition, scan.walkPosition, scan.stop, scan.zeroTail = 0, 0, "", false
	if scan.fileSize == 0 {
		scan.tail = scan.tail[:0]
		return r.segmentScanned()
	}
	r.stage = recoverReadLog
	return nil
}

// parseIndex keeps the entries up to the first that breaks the order
// (offsets and positions increase; an all-zero entry ends the file).
func (s *segmentScan) parseIndex(raw []byte) {
	for at := 0; at+indexEntryBytes <= len(raw); at += indexEntryBytes {
		entry := readIndexEntry(raw[at:])
		if count := len(s.disk); count > 0 {
			last := s.disk[count-1]
			if entry.offset <= last.offset || entry.position <= last.position {
				break
			}
		}
		s.disk = append(s.disk, entry)
		s.witness = int64(entry.position)
	}
}

// readLogDone walks the batches of one read; it stops at the first that
// does not verify or does not continue the offsets.
func (r *recovery) readLogDone(op *Op) error {
	current, scan := r.current, &r.scan
	available := op.Result
	at := scan.walkPosition - scan.readPosition
	for {
		endOfFile := scan.readPosition+available >= scan.fileSize
		if at+batchHeaderBytes > available {
			if endOfFile {
				return r.stopScan(at, available, "partial batch header")
			}
			return r.readMore()
		}
		length := int64(batchLength(scan.buffer[at:]))
		if length < batchHeaderBytes+frameHeaderBytes || length > batchBytesMax {
			return r.stopScan(at, available, "batch_length out of range")
		}
		if at+length > available {
			if scan.walkPosition+length > scan.fileSize {
				return r.stopScan(at, available, "batch overruns the file")
			}
			if at+length > int64(len(scan.buffer)) {
				scan.buffer = alignedBuffer(int(at+length) + blockBytes)
			}
			return r.readMore()
		}
		record := scan.buffer[at : at+length]
		if reason := invalidBatch(record); reason != "" {
			return r.stopScan(at, available, reason)
		}
		if base := batchBaseOffset(record); base != current.offsetEnd {
			return r.stopScan(at, available, fmt.Sprintf("base_offset %d, expected %d", base, current.offsetEnd))
		}
		current.addIndexEntry(indexEntry{offset: current.offsetEnd, timestamp: batchBaseTimestamp(record), position: uint64(scan.walkPosition)})
		current.offsetEnd = batchOffsetLast(record) + 1
		current.timestampMax = batchBaseTimestamp(record)
		at += length
		scan.walkPosition += length
		current.sizeBytes = scan.walkPosition
	}
}

func (r *recovery) readMore() error {
	r.scan.readPosition = alignDown(r.scan.walkPosition)
	r.stage = recoverReadLog
	return nil
}

// stopScan ends the walk at position walkPosition and keeps its partial
// last block. What lies past it decides the verdict: zeros only, however
// long, are a clean end (O_DIRECT padding, or space allocated ahead that a
// crash left unwritten); any other byte is a torn tail or damage.
func (r *recovery) stopScan(at, available int64, reason string) error {
	scan := &r.scan
	invariant.Assert(scan.readPosition+at == scan.walkPosition, "the walk stops inside the buffer")
	invariant.Assert(scan.walkPosition <= scan.fileSize, "the walk stops within the file")
	scan.stop = reason
	scan.keepTail()
	if scan.walkPosition == scan.fileSize {
		return r.segmentScanned()
	}
	scan.zeroPosition = scan.walkPosition
	return r.checkZeros(available)
}

// keepTail copies the block holding walkPosition, up to it, before a
// read past the walk reuses the buffer.
func (s *segmentScan) keepTail() {
	blockStart := alignDown(s.walkPosition)
	invariant.Assert(blockStart >= s.readPosition, "the tail block is in the buffer")
	s.tail = append(s.tail[:0], s.buffer[blockStart-s.readPosition:s.walkPosition-s.readPosition]...)
}

// checkZeros checks the bytes from zeroPosition that the last read
// brought, stopping at the first non-zero one, and reads on in
// recoverReadBytes chunks while they are zeros and the file goes on.
func (r *recovery) checkZeros(available int64) error {
	scan := &r.scan
	from := scan.zeroPosition - scan.readPosition
	end := min(available, scan.fileSize-scan.readPosition)
	invariant.Assert(from >= 0, "the zero check resumes inside the buffer")
	if end <= from {
		return fmt.Errorf("engine: recover %s: read at %d ended before the size %d",
			r.current.logPath(r.p.options.Directory), scan.zeroPosition, scan.fileSize)
	}
	if !allZero(scan.buffer[from:end]) {
		return r.segmentScanned()
	}
	scan.zeroPosition = scan.readPosition + end
	if scan.zeroPosition == scan.fileSize {
		scan.zeroTail = true
		return r.segmentScanned()
	}
	scan.readPosition = alignDown(scan.zeroPosition)
	r.stage = recoverReadTail
	return nil
}

func allZero(data []byte) bool {
	for _, value := range data {
		if value != 0 {
			return false
		}
	}
	return true
}

// segmentScanned judges the scan and queues the repairs: cutting the
// log back to its last batch (a torn tail of the last segment, or a tail
// of zeros in any segment), syncing, and rewriting an index that does not
// match. A tail of zeros is no damage and no loss: only a walk that stops
// at or before the durable witness, or a sealed segment whose tail holds
// anything but zeros, is corruption.
func (r *recovery) segmentScanned() error {
	p, current, scan := r.p, r.current, &r.scan
	last := r.next == len(r.stems)
	stopped := scan.walkPosition < scan.fileSize
	torn := stopped && !scan.zeroTail
	path := current.logPath(p.options.Directory)
	invariant.Assert(current.sizeBytes == scan.walkPosition, "the segment ends where the walk stopped")
	if torn && !last {
		return &CorruptError{Path: path, Position: scan.walkPosition, Reason: "sealed segment: " + scan.stop}
	}
	if stopped && p.options.Durability == DurabilityPersisted && scan.walkPosition <= scan.witness {
		return &CorruptError{Path: path, Position: scan.walkPosition, Reason: "before the last durable point: " + scan.stop}
	}
	if !last && current.empty() {
		return &CorruptError{Path: path, Reason: "sealed segment is empty"}
	}
	rest := scan.fileSize - scan.walkPosition
	if torn {
		p.logger.Warn("truncated torn log tail", "file", path, "position", scan.walkPosition,
			"bytes", rest, "offsets_from", current.offsetEnd, "reason", scan.stop)
		p.tornBytes += rest
	}
	if stopped && !torn && (!last || rest >= blockBytes) {
		p.logger.Info("cutting zero log tail", "file", path, "position", scan.walkPosition, "bytes", rest)
	}
	current.indexWritten = len(current.index)
	r.serializeIndex()
	switch {
	case stopped:
		r.stage = recoverTruncateLog
	case last:
		r.stage = recoverSyncLog
	default:
		return r.indexRepairs()
	}
	return nil
}

func (r *recovery) serializeIndex() {
	scan, current := &r.scan, r.current
	length := len(current.index) * indexEntryBytes
	scan.rebuilt = alignedBuffer(max(length, 1))
	for index, entry := range current.index {
		putIndexEntry(scan.rebuilt[index*indexEntryBytes:], entry)
	}
	scan.rebuilt = scan.rebuilt[:alignUp(int64(length))]
}

// indexRepairs rewrites the .index when it differs from the rebuilt one,
// then moves on to the next segment.
func (r *recovery) indexRepairs() error {
	scan, current := &r.scan, r.current
	length := len(current.index) * indexEntryBytes
	if indexMatches(scan.indexBytes[:scan.indexSize], scan.rebuilt[:length]) {
		return r.segmentRecovered()
	}
	if scan.indexSize > 0 {
		r.p.logger.Info("rebuilding index", "file", current.indexPath(r.p.options.Directory), "entries", len(current.index))
	}
	r.stage = recoverTruncateIndex
	if length > 0 {
		r.stage = recoverWriteIndex
	}
	return nil
}

// indexMatches reports whether an .index file's bytes hold exactly the
// rebuilt entries. Index writes are O_DIRECT and whole blocks, so a file
// cleanly written ends in zeros up to the next block boundary; any other
// byte past the entries, or a file longer than that block, differs.
func indexMatches(file, entries []byte) bool {
	if len(file) < len(entries) || int64(len(file)) > alignUp(int64(len(entries))) {
		return false
	}
	if !bytes.Equal(file[:len(entries)], entries) {
		return false
	}
	for _, value := range file[len(entries):] {
		if value != 0 {
			return false
		}
	}
	return true
}

// repairDone advances through truncate, sync and index rewrite stages.
func (r *recovery) repairDone() error {
	switch r.stage {
	case recoverTruncateLog:
		r.stage = recoverSyncLog
	case recoverSyncLog:
		return r.indexRepairs()
	case recoverWriteIndex:
		r.stage = recoverTruncateIndex
	case recoverTruncateIndex:
		r.stage = recoverSyncIndex
	case recoverSyncIndex:
		return r.segmentRecovered()
	default:
		invariant.Assert(false, "repair stage")
	}
	return nil
}

func (r *recovery) segmentRecovered() error {
	p, current, scan := r.p, r.current, &r.scan
	last := r.next == len(r.stems)
	current.sealed = !last
	p.segments = append(p.segments, current)
	p.offsetNext = current.offsetEnd
	p.timestampLast = max(p.timestampLast, current.timestampMax)
	if last {
		invariant.Assert(int64(len(scan.tail)) == current.sizeBytes-alignDown(current.sizeBytes), "the kept tail is the last block's prefix")
	}
	return r.nextSegment()
}
