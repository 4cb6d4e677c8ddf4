package engine

import (
	"encoding/binary"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/zeebo/xxh3"
)

// dedupWindow drops messages whose id was stored recently: the last
// countMax ids, each for windowMicros (0: no time bound). Id 0 means "no
// id" and is never deduplicated. Dropping renumbers the kept frames'
// offset_delta and recomputes their checksums, so offsets stay contiguous.
type dedupWindow struct {
	countMax     int
	windowMicros uint64
	seen         map[messageID]uint64
	ring         []dedupItem
	head         int
	size         int
}

type messageID struct{ low, high uint64 }

type dedupItem struct {
	id        messageID
	timestamp uint64
}

func (d *dedupWindow) init(countMax int, windowMicros uint64) {
	if countMax == 0 && windowMicros > 0 {
		countMax = dedupCountDefault
	}
	d.countMax = countMax
	d.windowMicros = windowMicros
	if countMax > 0 {
		d.seen = make(map[messageID]uint64, min(countMax, 1<<12))
		d.ring = make([]dedupItem, countMax)
	}
}

func (d *dedupWindow) enabled() bool { return d.countMax > 0 }

// reset forgets every id: after a failed write the stored history is not
// what the window says.
func (d *dedupWindow) reset() {
	if d.enabled() {
		clear(d.seen)
		d.head, d.size = 0, 0
	}
}

// filter copies record into stored (without a window admit copied it
// already), dropping duplicate messages, and
// returns the kept message count; stored's batch_length and
// message_count describe the kept frames (the caller recomputes the
// batch checksum when stamping).
func (d *dedupWindow) filter(stored, record []byte, timestamp uint64) uint32 {
	if !d.enabled() {
		return batchMessageCount(stored) // Partition.admit copied it
	}
	d.expire(timestamp)
	copy(stored, record[:batchHeaderBytes])
	at := batchHeaderBytes
	kept := uint32(0)
	for position := batchHeaderBytes; position < len(record); {
		frame := record[position:]
		length := frameLength(frame)
		position += length
		low, high := frameID(frame)
		id := messageID{low, high}
		if id != (messageID{}) {
			if _, duplicate := d.seen[id]; duplicate {
				continue
			}
			d.add(id, timestamp)
		}
		target := stored[at : at+length]
		copy(target, frame[:length])
		if frameOffsetDelta(target) != kept {
			binary.LittleEndian.PutUint32(target[frameOffsetDeltaAt:], kept)
			binary.LittleEndian.PutUint64(target[frameChecksumAt:], xxh3.Hash(target[8:]))
		}
		at += length
		kept++
	}
	invariant.Assert(at <= len(record), "dedup never grows a batch")
	binary.LittleEndian.PutUint64(stored[batchLengthAt:], uint64(at))
	binary.LittleEndian.PutUint32(stored[batchMessageCountAt:], kept)
	return kept
}

func (d *dedupWindow) expire(timestamp uint64) {
	for d.size > 0 && d.windowMicros > 0 {
		oldest := &d.ring[d.head]
		if oldest.timestamp+d.windowMicros > timestamp {
			return
		}
		d.evictOldest()
	}
}

func (d *dedupWindow) add(id messageID, timestamp uint64) {
	if d.size == d.countMax {
		d.evictOldest()
	}
	d.ring[(d.head+d.size)%d.countMax] = dedupItem{id: id, timestamp: timestamp}
	d.size++
	d.seen[id] = timestamp
}

func (d *dedupWindow) evictOldest() {
	oldest := &d.ring[d.head]
	if stamped, ok := d.seen[oldest.id]; ok && stamped == oldest.timestamp {
		delete(d.seen, oldest.id)
	}
	d.head = (d.head + 1) % d.countMax
	d.size--
}
