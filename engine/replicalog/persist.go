package replicalog

import (
	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
)

// persister runs one Persist at a time: the record chunks and the
// superblock copy (in the journal file's head) are written concurrently;
// once all completed, one fdatasync when Sync covers them all; then Done.
type persister struct {
	l       *Log
	current *Persist
	first   *Persist
	last    *Persist
	queued  int
	// blocked holds the queue while compaction runs.
	blocked bool
	idle    func()

	// staging holds record headers and small messages; chunks are the
	// journal writes of the current Persist, chunkNext the next to issue.
	staging   []byte
	chunks    []chunk
	chunkNext int
	chunkOps  [chunksInflightMax]engine.Op
	freeOps   []*engine.Op
	inflight  int
	endBytes  int64
	journalOp engine.Op

	superBuffer []byte
	superOp     engine.Op
	// superPending is set while the superblock copy write is in flight;
	// dirty while written bytes await an fdatasync.
	superPending bool
	dirty        bool
}

// chunk is one journal write: from staging[from:to], or external (a
// caller's message) when set.
type chunk struct {
	position int64
	from, to int
	external []byte
}

func (s *persister) init(l *Log) {
	s.l = l
	s.freeOps = make([]*engine.Op, 0, chunksInflightMax)
	for i := range s.chunkOps {
		s.chunkOps[i].Callback = s.chunkDone
		s.freeOps = append(s.freeOps, &s.chunkOps[i])
	}
	s.journalOp.Callback = s.journalSyncDone
	s.superOp.Callback = s.superDone
}

func (s *persister) enqueue(p *Persist) {
	invariant.Assert(s.queued < PersistQueueMax, "replicalog: persist queue within PersistQueueMax")
	p.next = nil
	if s.last == nil {
		s.first = p
	} else {
		s.last.next = p
	}
	s.last = p
	s.queued++
	s.kick()
}

// kick starts the next queued Persist when nothing runs.
func (s *persister) kick() {
	for s.current == nil && !s.blocked && s.first != nil {
		p := s.first
		s.first = p.next
		if s.first == nil {
			s.last = nil
		}
		s.queued--
		if s.l.fatal != nil {
			p.Done(s.l.fatal)
			continue
		}
		s.start(p)
	}
	if s.current == nil && !s.blocked && s.first == nil && s.idle != nil {
		idle := s.idle
		s.idle = nil
		idle()
	}
}

// whenIdle runs idle once no Persist runs or waits.
func (s *persister) whenIdle(idle func()) {
	invariant.Assert(s.idle == nil, "replicalog: one idle waiter")
	s.idle = idle
	s.kick()
}

func (s *persister) start(p *Persist) {
	s.current = p
	s.buildChunks(p)
	if p.HardState != nil || p.App != nil {
		s.writeSuperblock(p)
	}
	s.issueChunks()
}

// buildChunks lays the Persist's records out after the journal's end and
// updates the slot index; messages above copyMessageBytesMax are written
// from the caller's buffer.
func (s *persister) buildChunks(p *Persist) {
	l := s.l
	s.staging = s.staging[:0]
	s.chunks = s.chunks[:0]
	s.chunkNext = 0
	position := l.journalBytes
	stagedAt, from := position, 0
	for _, write := range p.Writes {
		at := len(s.staging)
		s.staging = append(s.staging, make([]byte, recordHeaderBytes)...)
		putRecordHeader(s.staging[at:at+recordHeaderBytes], write.Slot, write.Op, write.Message)
		if len(write.Message) <= copyMessageBytesMax {
			s.staging = append(s.staging, write.Message...)
		} else {
			s.chunks = append(s.chunks, chunk{position: stagedAt, from: from, to: len(s.staging)})
			stagedAt += int64(len(s.staging) - from)
			s.chunks = append(s.chunks, chunk{position: stagedAt, external: write.Message})
			stagedAt += int64(len(write.Message))
			from = len(s.staging)
		}
		l.setSlot(write.Slot, slotRecord{
			position: position, bytes: recordHeaderBytes + int64(len(write.Message)),
			op: write.Op, erased: len(write.Message) == 0,
		})
		position += recordHeaderBytes + int64(len(write.Message))
	}
	if from < len(s.staging) {
		s.chunks = append(s.chunks, chunk{position: stagedAt, from: from, to: len(s.staging)})
		stagedAt += int64(len(s.staging) - from)
	}
	invariant.Assert(stagedAt == position, "replicalog: chunks tile the Persist's records")
	s.endBytes = position
}

// setSlot points slot at its new record and keeps liveBytes.
func (l *Log) setSlot(slot int, record slotRecord) {
	old := l.slots[slot]
	if old.bytes > 0 && !old.erased {
		l.liveBytes -= old.bytes
	}
	if !record.erased {
		l.liveBytes += record.bytes
	}
	l.slots[slot] = record
	invariant.Assert(l.liveBytes >= recordsAt, "replicalog: live bytes include the file's head")
}

func (s *persister) writeSuperblock(p *Persist) {
	l := s.l
	if p.HardState != nil {
		l.hardState, l.hardSet = append(l.hardState[:0], p.HardState...), true
	}
	if p.App != nil {
		l.app, l.appSet = append(l.app[:0], p.App...), true
	}
	l.sequence++
	c := l.superCopy(l.generation, s.endBytes, l.syncedBytes)
	if need := copyHeaderBytes + len(c.hardState) + len(c.app); cap(s.superBuffer) < need {
		s.superBuffer = make([]byte, (need+4095)&^4095)
	}
	s.superOp.Code, s.superOp.File = engine.OpWrite, l.journalFile
	s.superOp.Buffer = c.encode(s.superBuffer[:cap(s.superBuffer)])
	s.superOp.Position = copyAt(regionOf(l.sequence))
	s.superPending = true
	l.storage.Submit(&s.superOp)
}

func (s *persister) superDone(op *engine.Op) {
	l := s.l
	s.superPending = false
	if op.Err != nil {
		l.fail(op, "superblock write", l.path(journalName))
	}
	s.dirty = true
	s.written()
}

func (s *persister) issueChunks() {
	l := s.l
	for s.inflight < chunksInflightMax && s.chunkNext < len(s.chunks) {
		c := &s.chunks[s.chunkNext]
		op := s.freeOps[len(s.freeOps)-1]
		s.freeOps = s.freeOps[:len(s.freeOps)-1]
		op.Code, op.File, op.Position = engine.OpWrite, l.journalFile, c.position
		op.Buffer = c.external
		if c.external == nil {
			op.Buffer = s.staging[c.from:c.to]
		}
		s.chunkNext++
		s.inflight++
		l.storage.Submit(op)
	}
	s.written()
}

func (s *persister) chunkDone(op *engine.Op) {
	l := s.l
	s.inflight--
	if op.Err != nil {
		l.fail(op, "journal write", l.path(journalName))
		s.chunkNext = len(s.chunks)
	}
	op.Buffer = nil
	s.freeOps = append(s.freeOps, op)
	s.issueChunks()
}

// written runs once every write of the Persist completed: it syncs when
// asked, then finishes.
func (s *persister) written() {
	l := s.l
	if s.superPending || s.inflight > 0 || s.chunkNext < len(s.chunks) {
		return
	}
	if l.fatal == nil {
		if l.journalBytes < s.endBytes {
			s.dirty = true
		}
		l.journalBytes = s.endBytes
	}
	if l.fatal == nil && s.current.Sync && s.dirty {
		s.journalOp.Code, s.journalOp.File, s.journalOp.Buffer = engine.OpSync, l.journalFile, nil
		l.storage.Submit(&s.journalOp)
		return
	}
	s.finish()
}

func (s *persister) journalSyncDone(op *engine.Op) {
	l := s.l
	if op.Err != nil {
		l.fail(op, "journal fdatasync", l.path(journalName))
	} else {
		l.syncedBytes = l.journalBytes
		s.dirty = false
	}
	s.finish()
}

func (s *persister) finish() {
	p := s.current
	invariant.Assert(p != nil, "replicalog: a Persist finishes once")
	s.current = nil
	err := s.l.fatal
	if err == nil && s.l.shouldCompact() {
		s.blocked = true
		p.Done(nil)
		s.l.compact()
		return
	}
	p.Done(err)
	s.kick()
}

// compacted resumes the queue after a compaction.
func (s *persister) compacted() {
	s.blocked = false
	s.kick()
}

// superCopy is the superblock copy of the current state, depending on the
// journal of generation up to journalBytes, syncedBytes of it durable.
func (l *Log) superCopy(generation uint64, journalBytes, syncedBytes int64) superCopy {
	c := superCopy{
		sequence: l.sequence, generation: generation, journalBytes: uint64(journalBytes),
		syncedBytes: uint64(syncedBytes), hardState: l.hardState, app: l.app,
	}
	if l.hardSet && c.hardState == nil {
		c.hardState = []byte{}
	}
	if l.appSet && c.app == nil {
		c.app = []byte{}
	}
	return c
}
