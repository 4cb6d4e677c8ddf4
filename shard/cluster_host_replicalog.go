package shard

import (
	"github.com/whippetio/whippet/engine/replicalog"
)

// replicaLog adapts a replicalog.Log to a group's journal.
type replicaLog struct {
	log    *replicalog.Log
	batch  replicalog.Persist
	writes []replicalog.Write
	done   func(error)
	// storage and directory are where the log lies, for remove.
	storage   *Storage
	directory string
}

// openReplicaLog is the production groupJournalOpener.
func openReplicaLog(_ *Shard, storage *Storage, directory string, slotCount int,
	done func(groupJournal, groupLoaded, error)) {
	replicalog.Open(storage, directory, slotCount, func(log *replicalog.Log, loaded replicalog.Loaded, err error) {
		if err != nil {
			done(nil, groupLoaded{}, err)
			return
		}
		journal := &replicaLog{log: log, writes: make([]replicalog.Write, 0, 64), storage: storage, directory: directory}
		journal.batch.Done = journal.persisted
		done(journal, groupLoaded{hardState: loaded.HardState, app: loaded.App, slots: loaded.Slots}, nil)
	})
}

func (j *replicaLog) persisted(err error) {
	done := j.done
	j.done = nil
	clear(j.writes)
	done(err)
}

func (j *replicaLog) persist(p *groupPersist) {
	j.writes = j.writes[:0]
	for _, write := range p.writes {
		j.writes = append(j.writes, replicalog.Write{Slot: write.Slot, Op: write.Op, Message: write.Message})
	}
	j.done = p.done
	j.batch.HardState, j.batch.App, j.batch.Writes, j.batch.Sync = p.hardState, p.app, j.writes, p.sync
	j.log.Persist(&j.batch)
}

func (j *replicaLog) close(done func(error)) { j.log.Close(done) }

func (j *replicaLog) remove(done func(error)) { replicalog.Remove(j.storage, j.directory, done) }
