package replicalog

import (
	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
)

// scanner reads the journal after its header in readChunkBytes reads and
// hands every valid record to the opener, stopping at the first record
// that is partial or fails its checks.
type scanner struct {
	o *opener
	// buffer holds file bytes [position, position+filled); at is the
	// parse point within it.
	buffer   []byte
	position int64
	filled   int
	at       int
}

func (s *scanner) init(o *opener, position int64) {
	s.o = o
	s.position = position
	s.buffer = make([]byte, min(readChunkBytes, max(o.fileBytes-position, recordHeaderBytes)))
}

// next parses what the buffer holds, then reads more or ends the scan.
func (s *scanner) next() {
	o := s.o
	for {
		record, need, reason := parseRecord(s.buffer[s.at:s.filled], o.l.slotCount)
		at := s.position + int64(s.at)
		switch {
		case reason != "":
			o.scanned(at, reason)
			return
		case need == 0:
			o.record(record, at)
			s.at += int(record.bytes)
			continue
		case at == o.fileBytes:
			o.scanned(at, "")
			return
		case at+need > o.fileBytes:
			o.scanned(at, "partial record at the end of the journal")
			return
		}
		s.read(need)
		return
	}
}

// read moves the unparsed bytes to the front, grows the buffer to hold
// need bytes, and reads more of the file after them.
func (s *scanner) read(need int64) {
	o := s.o
	copy(s.buffer, s.buffer[s.at:s.filled])
	s.position += int64(s.at)
	s.filled -= s.at
	s.at = 0
	if need > int64(len(s.buffer)) {
		grown := make([]byte, need)
		copy(grown, s.buffer[:s.filled])
		s.buffer = grown
	}
	end := s.position + int64(s.filled)
	length := min(int64(len(s.buffer)-s.filled), o.fileBytes-end)
	invariant.Assert(length > 0, "replicalog: a scan read makes progress")
	o.set(engine.OpRead, o.l.journalFile, "", 0)
	o.c.op.Buffer, o.c.op.Position = s.buffer[s.filled:s.filled+int(length)], end
	o.c.run(o.then(func(op *engine.Op) {
		if op.Result == 0 {
			o.finish(&engine.CorruptError{Path: o.l.path(journalName), Position: end, Reason: "journal read short of its size"})
			return
		}
		s.filled += int(op.Result)
		s.next()
	}))
}
