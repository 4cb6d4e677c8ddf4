package replicalog

import (
	"github.com/whippetio/whippet/engine"
)

// decide judges the scanned journal against the superblock: damage below
// the durable mark is corruption; past it, a torn tail is truncated. Then
// it picks the newest superblock copy whose journal writes all survived.
func (o *opener) decide() {
	l := o.l
	mark := int64(o.header.baseBytes)
	for i := range o.copies {
		c := &o.copies[i]
		if !o.valid[i] {
			continue
		}
		if c.generation > o.header.generation {
			o.finish(&engine.CorruptError{Path: l.path(journalName), Position: copyAt(i),
				Reason: "superblock copy names a journal generation newer than the journal"})
			return
		}
		if c.generation == o.header.generation {
			mark = max(mark, int64(c.syncedBytes))
		}
	}
	if o.validEnd < mark {
		reason := o.badReason
		if reason == "" {
			reason = "journal shorter than its durable length"
		}
		o.finish(&engine.CorruptError{Path: l.path(journalName), Position: o.validEnd, Reason: reason})
		return
	}
	if err := o.choose(); err != nil {
		o.finish(err)
		return
	}
	l.generation = o.header.generation
	l.journalBytes = o.validEnd
	if o.validEnd < o.fileBytes {
		o.loaded.TornBytes = o.fileBytes - o.validEnd
		l.logger.Warn("truncating torn journal tail", "position", o.validEnd,
			"bytes", o.loaded.TornBytes, "reason", o.badReason)
	}
	o.set(engine.OpTruncate, l.journalFile, "", 0)
	o.c.op.Position = o.validEnd
	o.c.run(o.then(func(*engine.Op) {
		o.set(engine.OpSync, l.journalFile, "", 0)
		o.c.run(o.then(o.journalSynced))
	}))
}

// choose picks the superblock copy to trust: the newest valid one whose
// Persist's journal writes all lie in the valid prefix (or in an older
// journal generation, which compaction made durable).
func (o *opener) choose() error {
	l := o.l
	order := [2]int{0, 1}
	if o.copies[1].sequence > o.copies[0].sequence {
		order = [2]int{1, 0}
	}
	chosen, newest := -1, -1
	for _, i := range order {
		if !o.valid[i] {
			continue
		}
		if newest < 0 {
			newest = i
		}
		c := &o.copies[i]
		if c.generation < o.header.generation || int64(c.journalBytes) <= o.validEnd {
			chosen = i
			break
		}
	}
	switch {
	case newest < 0 && !o.empty[0] && !o.empty[1]:
		return &engine.CorruptError{Path: l.path(journalName), Position: copyAt(0), Reason: "both superblock copies damaged: " + o.reasons[0]}
	case newest < 0:
		if !o.fresh() {
			l.logger.Warn("ignoring a torn first superblock write")
		}
		return nil
	case chosen < 0 && o.empty[1-newest]:
		// The first copy ever written outran its journal writes: that
		// Persist never completed, so the log is as fresh as before it.
		l.sequence, o.rewrite = o.copies[newest].sequence, true
		return nil
	case chosen < 0:
		return &engine.CorruptError{Path: l.path(journalName), Position: copyAt(newest),
			Reason: "superblock copies depend on journal writes that were lost"}
	}
	c := &o.copies[chosen]
	l.sequence = o.copies[newest].sequence
	o.rewrite = chosen != newest
	if c.hardState != nil {
		o.loaded.HardState = append([]byte{}, c.hardState...)
		l.hardState, l.hardSet = append([]byte(nil), c.hardState...), true
	}
	if c.app != nil {
		o.loaded.App = append([]byte{}, c.app...)
		l.app, l.appSet = append([]byte(nil), c.app...), true
	}
	return nil
}

// journalSynced records the durable journal, then overwrites a copy that
// outran the journal (so a later journal reaching its length cannot make
// it look valid) and syncs the directory.
func (o *opener) journalSynced(*engine.Op) {
	l := o.l
	l.syncedBytes = l.journalBytes
	if !o.rewrite {
		o.syncDirectory(nil)
		return
	}
	l.logger.Warn("superblock copy outran the journal; rolled back to the previous copy", "sequence", l.sequence)
	c := l.superCopy(l.generation, l.journalBytes, l.syncedBytes)
	buffer := make([]byte, copyHeaderBytes+len(c.hardState)+len(c.app))
	o.set(engine.OpWrite, l.journalFile, "", 0)
	o.c.op.Buffer, o.c.op.Position = c.encode(buffer), copyAt(regionOf(l.sequence))
	o.c.run(o.then(func(*engine.Op) {
		o.set(engine.OpSync, l.journalFile, "", 0)
		o.c.run(o.then(o.syncDirectory))
	}))
}

func (o *opener) syncDirectory(*engine.Op) {
	o.set(engine.OpSync, o.l.directoryFile, "", engine.OpenDirectory)
	o.c.run(o.then(func(*engine.Op) {
		o.l.logger.Info("replication log open", "journal_bytes", o.l.journalBytes, "live_bytes", o.l.liveBytes)
		o.finish(nil)
	}))
}
