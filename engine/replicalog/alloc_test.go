package replicalog

import (
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
