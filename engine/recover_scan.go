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
	padding bool
	// tail is the last segment's partial last block, the first write
	// buffer's prefix.
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
	scan.readPosition, scan.walkPosition, scan.stop, scan.padding = 0, 0, "", false
	if scan.fileSize == 0 {
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

// stopScan ends the walk at position walkPosition: zero padding from an
// O_DIRECT write is a clean end; anything else is a torn tail or damage.
func (r *recovery) stopScan(at, available int64, reason string) error {
	scan := &r.scan
	scan.stop = reason
	rest := scan.fileSize - scan.walkPosition
	if rest < blockBytes && scan.readPosition+available >= scan.fileSize {
		end := min(available, at+rest)
		scan.padding = allZero(scan.buffer[at:end])
	}
	return r.segmentScanned()
}

func allZero(data []byte) bool {
	for _, value := range data {
		if value != 0 {
			return false
		}
	}
	return true
}

// segmentScanned judges the scan and queues the repairs: truncating the
// log's torn tail, syncing, and rewriting an index that does not match.
func (r *recovery) segmentScanned() error {
	p, current, scan := r.p, r.current, &r.scan
	last := r.next == len(r.stems)
	torn := scan.walkPosition < scan.fileSize && !scan.padding
	path := current.logPath(p.options.Directory)
	if torn && !last {
		return &CorruptError{Path: path, Position: scan.walkPosition, Reason: "sealed segment: " + scan.stop}
	}
	if torn && p.options.Durability == DurabilityPersisted && scan.walkPosition <= scan.witness {
		return &CorruptError{Path: path, Position: scan.walkPosition, Reason: "before the last durable point: " + scan.stop}
	}
	if !last && current.empty() {
		return &CorruptError{Path: path, Reason: "sealed segment is empty"}
	}
	if torn {
		p.logger.Warn("truncated torn log tail", "file", path, "position", scan.walkPosition,
			"bytes", scan.fileSize-scan.walkPosition, "offsets_from", current.offsetEnd, "reason", scan.stop)
		p.tornBytes += scan.fileSize - scan.walkPosition
	}
	current.indexWritten = len(current.index)
	r.serializeIndex()
	switch {
	case last && scan.fileSize != current.sizeBytes:
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
		blockStart := alignDown(current.sizeBytes)
		scan.tail = append(scan.tail[:0], scan.buffer[blockStart-scan.readPosition:current.sizeBytes-scan.readPosition]...)
	}
	return r.nextSegment()
}
