package engine_test

import (
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// fuzzSeedFiles builds a small valid partition and returns its .log and
// .index bytes.
func fuzzSeedFiles(f testing.TB) (logBytes, indexBytes []byte) {
	mem := enginetest.NewMemStorage(1)
	storage := memBackend{mem}
	options := engine.PartitionOptions{Directory: "/z/p", SegmentBytes: 1 << 20, Logger: quiet}
	var opened *engine.Partition
	engine.OpenPartition(storage, options, func(p *engine.Partition, err error) { opened = p })
	storage.drain()
	random := newRandom(3)
	serial := uint64(0)
	for batch := 0; batch < 8; batch++ {
		op := &engine.AppendOp{Batch: enginetest.Batch(1, randomMessages(random, &serial, 2, 700)...), Timestamp: uint64(1 + batch), Done: func(*engine.AppendOp) {}}
		if err := opened.Append(op); err != nil {
			f.Fatal(err)
		}
		storage.drain()
	}
	logBytes, _ = mem.File("/z/p/00000000000000000000.log")
	indexBytes, _ = mem.File("/z/p/00000000000000000000.index")
	return logBytes, indexBytes
}

// FuzzRecover feeds recovery arbitrary .log and .index bytes: it must
// never panic; when it opens the partition, everything it serves must be
// valid, contiguous records.
func FuzzRecover(f *testing.F) {
	logBytes, indexBytes := fuzzSeedFiles(f)
	f.Add(logBytes, indexBytes)
	f.Add(logBytes[:len(logBytes)/2], indexBytes)
	f.Add(logBytes, []byte{})
	f.Fuzz(checkRecoverFrom)
}

// checkRecoverFrom opens a partition on the given files and checks what
// it serves.
func checkRecoverFrom(t *testing.T, logData, indexData []byte) {
	mem := enginetest.NewMemStorage(2)
	mem.SetFile("/z/p/00000000000000000000.log", logData)
	mem.SetFile("/z/p/00000000000000000000.index", indexData)
	storage := memBackend{mem}
	options := engine.PartitionOptions{
		Directory: "/z/p", SegmentBytes: 1 << 20, Logger: quiet, JournalBytes: 8192, ReadBytes: 8192,
	}
	p, err := openPartition(t, storage, options)
	if err != nil {
		return
	}
	op := &engine.PollOp{Strategy: engine.PollFirst, Count: 1 << 20, Out: make([]byte, 0, 1<<20)}
	got := poll(t, storage, p, op)
	if uint64(len(got)) != p.OffsetNext() {
		t.Fatalf("served %d messages of %d", len(got), p.OffsetNext())
	}
	for index, message := range got {
		if message.Offset != uint64(index) {
			t.Fatalf("message %d has offset %d", index, message.Offset)
		}
	}
}

// TestRecoverMutatedFiles runs the fuzz body over seeded random byte
// flips and truncations of a valid .log and .index (a fast stand-in for
// make fuzz FUZZ=FuzzRecover).
func TestRecoverMutatedFiles(t *testing.T) {
	logBytes, indexBytes := fuzzSeedFiles(t)
	seed := testSeed(t)
	random := newRandom(seed)
	count := 1000
	if testing.Short() {
		count = 200
	}
	for input := 0; input < count; input++ {
		logData := append([]byte(nil), logBytes...)
		indexData := append([]byte(nil), indexBytes...)
		for flips := 1 + random.IntN(4); flips > 0; flips-- {
			if random.IntN(3) == 0 {
				indexData[random.IntN(len(indexData))] = byte(random.IntN(256))
			} else {
				logData[random.IntN(len(logData))] = byte(random.IntN(256))
			}
		}
		if random.IntN(3) == 0 {
			logData = logData[:random.IntN(len(logData))]
		}
		checkRecoverFrom(t, logData, indexData)
	}
}
