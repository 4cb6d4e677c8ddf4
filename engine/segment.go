package engine

import (
	"path/filepath"
	"sort"

	"github.com/whippetio/whippet/internal/invariant"
)

// segment is one .log/.index pair. The last segment of a partition is
// active (appended to); the others are sealed and immutable.
type segment struct {
	offsetStart uint64
	// offsetEnd is one past the last written offset (offsetStart if empty).
	offsetEnd uint64
	// sizeBytes counts whole written records in the .log.
	sizeBytes int64
	// allocated is how far the file's space is known to be allocated
	// (allocate.go), a hint: 0 when nothing is known. spaceAhead is set
	// once an allocation was issued for the segment and until a roll
	// cuts the file back to sizeBytes.
	allocated    int64
	spaceAhead   bool
	timestampMax uint64
	logFile      File
	indexFile    File
	filesOpen    bool
	sealed       bool
	// index mirrors the .index; indexWritten entries of it are on file.
	index        []indexEntry
	indexWritten int
}

func (s *segment) empty() bool { return s.offsetEnd == s.offsetStart }

func (s *segment) logPath(directory string) string {
	return filepath.Join(directory, segmentStem(s.offsetStart)+logSuffix)
}

func (s *segment) indexPath(directory string) string {
	return filepath.Join(directory, segmentStem(s.offsetStart)+indexSuffix)
}

// positionForOffset returns where a walk for offset starts: the position
// of the last index entry at or below it, or 0 (the index is a hint).
func (s *segment) positionForOffset(offset uint64) int64 {
	invariant.Assert(offset >= s.offsetStart, "offset is in or after the segment")
	found := sort.Search(len(s.index), func(i int) bool { return s.index[i].offset > offset })
	if found == 0 {
		return 0
	}
	return int64(s.index[found-1].position)
}

// positionForTimestamp returns where a walk for the first batch with
// base_timestamp >= timestamp starts.
func (s *segment) positionForTimestamp(timestamp uint64) int64 {
	found := sort.Search(len(s.index), func(i int) bool { return s.index[i].timestamp >= timestamp })
	if found == 0 {
		return 0
	}
	return int64(s.index[found-1].position)
}

// addIndexEntry records a write chunk's first batch when it starts at
// least indexIntervalBytes after the previous entry, keeping the index
// sparse and its memory bounded (24 bytes per indexIntervalBytes of log).
func (s *segment) addIndexEntry(entry indexEntry) {
	if count := len(s.index); count > 0 {
		last := s.index[count-1]
		invariant.Assert(entry.offset > last.offset, "index offsets increase")
		if entry.position < last.position+indexIntervalBytes {
			return
		}
	}
	s.index = append(s.index, entry)
}
