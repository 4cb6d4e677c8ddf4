package replicalog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/whippetio/whippet/engine"
)

// TestPersistAllocations: the steady Persist path (records, superblock
// copy, fdatasync, completion) allocates nothing once its buffers grew.
func TestPersistAllocations(t *testing.T) {
	storage := directStorage{engine.NewDirectStorage()}
	var log *Log
	Open(storage, t.TempDir(), 16, func(l *Log, _ Loaded, err error) {
		if err != nil {
			t.Fatal(err)
		}
		log = l
	})
	storage.drain()
	small, large := make([]byte, 300), make([]byte, copyMessageBytesMax+1)
	hardState := make([]byte, 200)
	var failed error
	p := &Persist{HardState: hardState, App: []byte("applied"), Sync: true,
		Writes: []Write{{Slot: 0, Message: small}, {Slot: 1, Message: large}, {Slot: 2}},
		Done:   func(err error) { failed = err }}
	run := func() {
		log.Persist(p)
		storage.drain()
	}
	run()
	if allocs := testing.AllocsPerRun(50, run); allocs != 0 || failed != nil {
		t.Fatalf("a steady Persist allocates %.1f times (err %v)", allocs, failed)
	}
	log.Close(func(error) {})
	storage.drain()
}

// TestRealFiles runs open, persist, reopen and Remove on a real directory
// through DirectStorage.
func TestRealFiles(t *testing.T) {
	storage := directStorage{engine.NewDirectStorage()}
	directory := filepath.Join(t.TempDir(), "group")
	open := func() (*Log, Loaded) {
		var log *Log
		var loaded Loaded
		Open(storage, directory, 4, func(l *Log, got Loaded, err error) {
			if err != nil {
				t.Fatal(err)
			}
			log, loaded = l, got
		})
		storage.drain()
		return log, loaded
	}
	log, _ := open()
	m := newModel(4)
	p := &Persist{HardState: []byte("hs"), App: []byte("app"), Sync: true,
		Writes: []Write{{0, 1, message(0, 1, 100)}, {3, 2, message(3, 2, 200000)}}}
	p.Done = func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	log.Persist(p)
	storage.drain()
	m.apply(p)
	log.Close(func(error) {})
	storage.drain()
	log, loaded := open()
	if where := m.differs(loaded); where != "" {
		t.Fatalf("reopened real files differ in %s", where)
	}
	log.Close(func(error) {})
	storage.drain()
	var removeErr error
	Remove(storage, directory, func(err error) { removeErr = err })
	storage.drain()
	if _, err := os.Stat(directory); removeErr != nil || !os.IsNotExist(err) {
		t.Fatalf("remove: %v, directory: %v", removeErr, err)
	}
}
