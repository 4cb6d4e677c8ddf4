package shard

import "github.com/whippetio/whippet/vsr"

// groupJournal is the durable state of one group: its journal slots, hard
// state and application record (engine/replicalog). Its methods run on
// the group's shard; completions too.
type groupJournal interface {
	// persist writes p (slots, then hard state and record) and calls
	// p.done once they are written (and fdatasynced when p.sync). The
	// caller keeps p and every slice it references unchanged until then.
	persist(p *groupPersist)
	// close waits for the persist under way and closes the files.
	close(done func(error))
	// remove deletes the closed journal's files and directory: the group
	// is gone for good.
	remove(done func(error))
}

// groupPersist is one batch's journal writes.
type groupPersist struct {
	hardState []byte // nil: unchanged
	app       []byte // nil: unchanged
	writes    []vsr.Write
	sync      bool
	done      func(error)
}

// groupLoaded is what a journal held when it opened.
type groupLoaded struct {
	hardState []byte // nil: a new group
	app       []byte
	slots     [][]byte // by slot; nil or zeros for a slot never written
}

// groupJournalOpener opens the journal in directory (creating it) on
// storage and calls done once, on the shard.
type groupJournalOpener func(sh *Shard, storage *Storage, directory string, slotCount int,
	done func(groupJournal, groupLoaded, error))

// empty reports whether nothing was ever persisted for the group: no hard
// state, no application record, no journal slot. A journal created now and
// one whose directory was wiped look the same.
func (l *groupLoaded) empty() bool {
	if len(l.hardState) > 0 || len(l.app) > 0 {
		return false
	}
	for _, slot := range l.slots {
		for _, b := range slot {
			if b != 0 {
				return false
			}
		}
	}
	return true
}
