package replicalog

import (
	"errors"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// TestFreshAndReopen: a fresh log loads empty; what a Persist wrote comes
// back after a clean close and reopen, erases included.
func TestFreshAndReopen(t *testing.T) {
	storage := enginetest.NewMemStorage(1)
	log, loaded := mustOpen(t, storage, 8)
	if loaded.HardState != nil || loaded.App != nil || len(loaded.Slots) != 8 {
		t.Fatalf("fresh log loaded %+v", loaded)
	}
	for i, slot := range loaded.Slots {
		if slot != nil {
			t.Fatalf("fresh slot %d holds %d bytes", i, len(slot))
		}
	}
	m := newModel(8)
	steps := []*Persist{
		{HardState: []byte("view 1"), App: []byte{}, Writes: []Write{{0, 8, message(0, 8, 300)}, {1, 9, message(1, 9, 70000)}}, Sync: true},
		{Writes: []Write{{0, 16, message(0, 16, 10)}, {2, 10, message(2, 10, 1)}}, Sync: true},
		{HardState: []byte("view 2"), Writes: []Write{{1, 0, nil}}, Sync: true},
		{App: []byte("applied 10"), Sync: false},
	}
	for _, p := range steps {
		persist(t, storage, log, p)
		m.apply(p)
	}
	closeLog(t, storage, log)
	log, loaded = mustOpen(t, storage, 8)
	if where := m.differs(loaded); where != "" {
		t.Fatalf("reopened log differs in %s", where)
	}
	if loaded.TornBytes != 0 {
		t.Fatalf("clean reopen truncated %d bytes", loaded.TornBytes)
	}
	closeLog(t, storage, log)
}

// TestSlotCountMismatch: a journal opened with another slot count is
// refused with a clear error, not silently reshaped.
func TestSlotCountMismatch(t *testing.T) {
	storage := enginetest.NewMemStorage(2)
	log, _ := mustOpen(t, storage, 4)
	closeLog(t, storage, log)
	if result := openLog(t, storage, 5); result.err == nil {
		t.Fatal("slot count mismatch accepted")
	}
}

// TestPersistAfterClose: Persist after Close fails with ErrClosed.
func TestPersistAfterClose(t *testing.T) {
	storage := enginetest.NewMemStorage(3)
	log, _ := mustOpen(t, storage, 4)
	closeLog(t, storage, log)
	var got error
	log.Persist(&Persist{Sync: true, Done: func(err error) { got = err }})
	if !errors.Is(got, ErrClosed) {
		t.Fatalf("persist after close: %v", got)
	}
}

// TestRemove: Remove deletes the directory; a later Open starts fresh.
func TestRemove(t *testing.T) {
	storage := enginetest.NewMemStorage(4)
	log, _ := mustOpen(t, storage, 4)
	persist(t, storage, log, &Persist{HardState: []byte("x"), Writes: []Write{{1, 1, []byte("y")}}, Sync: true})
	closeLog(t, storage, log)
	var err error
	done := false
	Remove(storage, testDirectory, func(e error) { err, done = e, true })
	drain(storage)
	if !done || err != nil {
		t.Fatalf("remove: %v %v", done, err)
	}
	for _, name := range []string{journalName} {
		if _, ok := storage.File(testDirectory + "/" + name); ok {
			t.Fatalf("%s survived Remove", name)
		}
	}
	log, loaded := mustOpen(t, storage, 4)
	if loaded.HardState != nil || loaded.Slots[1] != nil {
		t.Fatal("open after Remove is not fresh")
	}
	closeLog(t, storage, log)
}

// TestWriteErrorIsFatal: a failed journal write stops the log; the
// Persist and every later one fail with a FatalError.
func TestWriteErrorIsFatal(t *testing.T) {
	storage := enginetest.NewMemStorage(5)
	log, _ := mustOpen(t, storage, 4)
	storage.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpWrite {
			return errors.New("injected EIO")
		}
		return nil
	}
	var first, second error
	log.Persist(&Persist{Writes: []Write{{0, 1, []byte("a")}}, Sync: true, Done: func(err error) { first = err }})
	drain(storage)
	log.Persist(&Persist{Writes: []Write{{0, 2, []byte("b")}}, Done: func(err error) { second = err }})
	if !engine.IsFatal(first) || !engine.IsFatal(second) {
		t.Fatalf("write error: first %v, second %v", first, second)
	}
}

// TestSyncErrorIsFatal: a failed fdatasync stops the log for good; it is
// never retried.
func TestSyncErrorIsFatal(t *testing.T) {
	storage := enginetest.NewMemStorage(6)
	log, _ := mustOpen(t, storage, 4)
	storage.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpSync && op.File == log.journalFile {
			return errors.New("injected EIO")
		}
		return nil
	}
	var first, second error
	log.Persist(&Persist{HardState: []byte("h"), Writes: []Write{{0, 1, []byte("a")}}, Sync: true, Done: func(err error) { first = err }})
	drain(storage)
	storage.Inject = nil
	log.Persist(&Persist{Writes: []Write{{0, 2, []byte("b")}}, Sync: true, Done: func(err error) { second = err }})
	drain(storage)
	if !engine.IsFatal(first) || !engine.IsFatal(second) || log.Err() == nil {
		t.Fatalf("sync error: first %v, second %v", first, second)
	}
}
