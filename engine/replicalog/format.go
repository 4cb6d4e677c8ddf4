package replicalog

import (
	"encoding/binary"

	"github.com/zeebo/xxh3"

	"github.com/whippetio/whippet/internal/invariant"
)

// Magic numbers and the format version (diagrams in doc.go).
const (
	journalMagic   = 0x4a4c5257 // "WRLJ"
	superMagic     = 0x534c5257 // "WRLS"
	formatVersion  = 1
	flagHardState  = 1 << 0
	flagAppRecord  = 1 << 1
	recordLengthAt = 0
	recordSumAt    = 4
	recordSlotAt   = 12
	recordOpAt     = 16
)

// putRecordHeader fills the 24-byte header of a record holding message
// for slot and op. The checksum covers slot, op and message, seeded with
// the length, so a damaged length fails it too.
func putRecordHeader(header []byte, slot int, op uint64, message []byte) {
	invariant.Assert(len(header) == recordHeaderBytes, "record header size")
	invariant.Assert(len(message) <= MessageBytesMax, "record within MessageBytesMax")
	le := binary.LittleEndian
	le.PutUint32(header[recordLengthAt:], uint32(len(message)))
	le.PutUint32(header[recordSlotAt:], uint32(slot))
	le.PutUint64(header[recordOpAt:], op)
	le.PutUint64(header[recordSumAt:], recordChecksum(header, message))
}

// recordChecksum hashes slot and op (from header) and message without
// concatenating them: the xxh3 of the message seeded with the header's
// hash.
func recordChecksum(header, message []byte) uint64 {
	seed := xxh3.HashSeed(header[recordSlotAt:recordHeaderBytes], uint64(len(message)))
	return xxh3.HashSeed(message, seed)
}

// recordAt parses the record at the start of raw: it returns the record's
// total size, or a reason when raw does not start with a whole valid record.
// need > 0 asks for that many bytes before the record can be judged.
type parsedRecord struct {
	slot    int
	op      uint64
	message []byte
	bytes   int64
}

func parseRecord(raw []byte, slotCount int) (record parsedRecord, need int64, reason string) {
	if len(raw) < recordHeaderBytes {
		return record, recordHeaderBytes, ""
	}
	le := binary.LittleEndian
	length := int64(le.Uint32(raw[recordLengthAt:]))
	if length > MessageBytesMax {
		return record, 0, "record length out of range"
	}
	if int64(len(raw)) < recordHeaderBytes+length {
		return record, recordHeaderBytes + length, ""
	}
	message := raw[recordHeaderBytes : recordHeaderBytes+length]
	if recordChecksum(raw[:recordHeaderBytes], message) != le.Uint64(raw[recordSumAt:]) {
		return record, 0, "record checksum mismatch"
	}
	slot := int(le.Uint32(raw[recordSlotAt:]))
	if slot >= slotCount {
		return record, 0, "record slot out of range"
	}
	record = parsedRecord{slot: slot, op: le.Uint64(raw[recordOpAt:]), message: message, bytes: recordHeaderBytes + length}
	return record, 0, ""
}

// fileHeader is the journal file's first 64 bytes.
type fileHeader struct {
	slotCount  uint32
	generation uint64
	// baseBytes is the file length when it was created or compacted:
	// fdatasynced before the file got its name, so durable.
	baseBytes uint64
}

func (h fileHeader) encode(target []byte) {
	invariant.Assert(len(target) == fileHeaderBytes, "file header size")
	clear(target)
	le := binary.LittleEndian
	le.PutUint32(target[8:], journalMagic)
	le.PutUint32(target[12:], formatVersion)
	le.PutUint32(target[16:], h.slotCount)
	le.PutUint64(target[24:], h.generation)
	le.PutUint64(target[32:], h.baseBytes)
	le.PutUint64(target[0:], xxh3.Hash(target[8:]))
}

func decodeFileHeader(source []byte) (fileHeader, string) {
	if len(source) < fileHeaderBytes {
		return fileHeader{}, "journal shorter than its header"
	}
	le := binary.LittleEndian
	if xxh3.Hash(source[8:fileHeaderBytes]) != le.Uint64(source) {
		return fileHeader{}, "journal header checksum mismatch"
	}
	if le.Uint32(source[8:]) != journalMagic || le.Uint32(source[12:]) != formatVersion {
		return fileHeader{}, "journal header magic or version"
	}
	header := fileHeader{
		slotCount: le.Uint32(source[16:]), generation: le.Uint64(source[24:]), baseBytes: le.Uint64(source[32:]),
	}
	if header.baseBytes < recordsAt {
		return fileHeader{}, "journal header base bytes out of range"
	}
	return header, ""
}

// superCopy is one of the superblock's two copies.
type superCopy struct {
	sequence uint64
	// generation is the journal file generation journalBytes refers to.
	generation uint64
	// journalBytes is the journal length this copy's Persist wrote up to:
	// the copy is only trusted when the journal's valid prefix reaches it.
	journalBytes uint64
	// syncedBytes is the journal length as of its last completed
	// fdatasync before the copy was written: damage below it is corruption.
	syncedBytes uint64
	hardState   []byte // nil when never set
	app         []byte // nil when never set
}

// encode writes the copy into target and returns the bytes to write.
func (c *superCopy) encode(target []byte) []byte {
	total := copyHeaderBytes + len(c.hardState) + len(c.app)
	invariant.Assert(total <= copyBytes, "superblock copy within its region")
	invariant.Assert(len(target) >= total, "superblock buffer holds the copy")
	out := target[:total]
	clear(out[:copyHeaderBytes])
	le := binary.LittleEndian
	flags := uint32(0)
	if c.hardState != nil {
		flags |= flagHardState
	}
	if c.app != nil {
		flags |= flagAppRecord
	}
	le.PutUint32(out[8:], superMagic)
	le.PutUint32(out[12:], formatVersion)
	le.PutUint64(out[16:], c.sequence)
	le.PutUint64(out[24:], c.generation)
	le.PutUint64(out[32:], c.journalBytes)
	le.PutUint64(out[40:], c.syncedBytes)
	le.PutUint32(out[48:], uint32(len(c.hardState)))
	le.PutUint32(out[52:], uint32(len(c.app)))
	le.PutUint32(out[56:], flags)
	copy(out[copyHeaderBytes:], c.hardState)
	copy(out[copyHeaderBytes+len(c.hardState):], c.app)
	le.PutUint64(out[0:], xxh3.Hash(out[8:]))
	return out
}

// decodeSuperCopy reads one copy region. empty reports an all-zero
// header (never written); reason is set for a damaged or torn copy. The
// returned slices alias source.
func decodeSuperCopy(source []byte) (c superCopy, empty bool, reason string) {
	if len(source) < copyHeaderBytes {
		return c, len(source) == 0 || allZero(source), "superblock copy truncated"
	}
	if allZero(source[:copyHeaderBytes]) {
		return c, true, ""
	}
	le := binary.LittleEndian
	hardBytes, appBytes := int(le.Uint32(source[48:])), int(le.Uint32(source[52:]))
	if hardBytes > HardStateBytesMax || appBytes > AppBytesMax {
		return c, false, "superblock copy lengths out of range"
	}
	total := copyHeaderBytes + hardBytes + appBytes
	if total > len(source) {
		return c, false, "superblock copy truncated"
	}
	if xxh3.Hash(source[8:total]) != le.Uint64(source) {
		return c, false, "superblock copy checksum mismatch"
	}
	if le.Uint32(source[8:]) != superMagic || le.Uint32(source[12:]) != formatVersion {
		return c, false, "superblock copy magic or version"
	}
	c = superCopy{
		sequence: le.Uint64(source[16:]), generation: le.Uint64(source[24:]),
		journalBytes: le.Uint64(source[32:]), syncedBytes: le.Uint64(source[40:]),
	}
	flags := le.Uint32(source[56:])
	if flags&flagHardState != 0 {
		c.hardState = source[copyHeaderBytes : copyHeaderBytes+hardBytes]
	}
	if flags&flagAppRecord != 0 {
		c.app = source[copyHeaderBytes+hardBytes : total]
	}
	return c, false, ""
}

func allZero(source []byte) bool {
	for _, b := range source {
		if b != 0 {
			return false
		}
	}
	return true
}

// copyAt is the journal file position of superblock copy region index.
func copyAt(index int) int64 { return 4096 + int64(index)*copyBytes }

// regionOf is the copy region of sequence: copy s goes to region s mod 2,
// never over the newest copy.
func regionOf(sequence uint64) int { return int(sequence % 2) }
