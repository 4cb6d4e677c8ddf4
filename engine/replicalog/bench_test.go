package replicalog

import (
	"fmt"
	"testing"

	"github.com/whippetio/whippet/engine"
)

// directStorage adapts engine.DirectStorage (blocking pwrite/fdatasync at
// Submit, completions delivered by Poll) for the benchmarks.
type directStorage struct{ *engine.DirectStorage }

func (s directStorage) drain() {
	for s.Pending() > 0 {
		s.Poll(1 << 20)
	}
}

// BenchmarkPersist1MiB persists one 1 MiB message (a Prepare of a 1 MiB
// batch) per Persist, cycling over 64 slots like a vsr journal, on real
// files (t.TempDir) through DirectStorage (blocking pwrite/fdatasync, so
// the journal and superblock syncs run one after the other); compaction
// runs when due and is part of the cost. hardstate=false leaves the
// superblock out, to show its share.
func BenchmarkPersist1MiB(b *testing.B) {
	for _, sync := range []bool{false, true} {
		for _, hardState := range []bool{true, false} {
			b.Run(fmt.Sprintf("sync=%v/hardstate=%v", sync, hardState), func(b *testing.B) {
				benchmarkPersist(b, directStorage{engine.NewDirectStorage()}, sync, hardState)
			})
		}
	}
}

type drainer interface {
	engine.Storage
	drain()
}

func benchmarkPersist(b *testing.B, storage drainer, sync, withHardState bool) {
	var log *Log
	Open(storage, b.TempDir(), 64, func(l *Log, _ Loaded, err error) {
		if err != nil {
			b.Fatal(err)
		}
		log = l
	})
	storage.drain()
	payload := message(0, 0, 1<<20)
	hardState := make([]byte, 64)
	var failed error
	p := &Persist{Writes: []Write{{Message: payload}}, Sync: sync, Done: func(err error) { failed = err }}
	if withHardState {
		p.HardState = hardState
	}
	op := uint64(0)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		op++
		p.Writes[0].Slot, p.Writes[0].Op = int(op%64), op
		hardState[0] = byte(op)
		log.Persist(p)
		storage.drain()
		if failed != nil {
			b.Fatal(failed)
		}
	}
	b.StopTimer()
	log.Close(func(error) {})
	storage.drain()
}
