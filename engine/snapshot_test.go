package engine_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// memReader reads a MemStorage partition's files synchronously, as
// DirectStorage does for real files; the partition must be idle.
type memReader struct{ storage *enginetest.MemStorage }

func (r memReader) ReadAt(file engine.File, buffer []byte, position int64) (int, error) {
	done := false
	op := &engine.Op{Code: engine.OpRead, File: file, Buffer: buffer, Position: position,
		Callback: func(*engine.Op) { done = true }}
	r.storage.Submit(op)
	for !done {
		r.storage.Run(1)
	}
	return int(op.Result), op.Err
}

// snapshotSource fills a partition with seeded batches (several segments,
// rising and repeated timestamps, user headers) and two consumer offsets.
func snapshotSource(t *testing.T, storage backend, options engine.PartitionOptions, seed uint64, batches int) *engine.Partition {
	return snapshotSourceSized(t, storage, options, seed, batches, 40000)
}

func snapshotSourceSized(t *testing.T, storage backend, options engine.PartitionOptions, seed uint64, batches, payloadMax int) *engine.Partition {
	t.Helper()
	p := mustOpen(t, storage, options)
	random := newRandom(seed)
	serial := uint64(0)
	timestamp := uint64(1_700_000_000_000_000)
	for range batches {
		messages := randomMessages(random, &serial, 1+random.IntN(20), payloadMax)
		if random.IntN(3) == 0 {
			messages[0].Headers = []byte("header bytes")
		}
		timestamp += uint64(random.IntN(3)) * 1000
		op := &engine.AppendOp{Batch: enginetest.Batch(timestamp-5, messages...), Timestamp: timestamp, Done: func(*engine.AppendOp) {}}
		if err := p.Append(op); err != nil {
			t.Fatal(err)
		}
		storage.drain()
		if op.Err != nil {
			t.Fatal(op.Err)
		}
	}
	for index, consumer := range []engine.Consumer{{Kind: engine.ConsumerSingle, ID: 7}, {Kind: engine.ConsumerGroup, ID: 3}} {
		op := &engine.OffsetOp{Consumer: consumer, Offset: p.CurrentOffset() - uint64(index*3), Done: func(*engine.OffsetOp) {}}
		if err := p.StoreOffset(op); err != nil {
			t.Fatal(err)
		}
		storage.drain()
	}
	return p
}

// pollAll returns the raw records of every stored message, polled from
// the first offset; polls large enough never slice a batch, so a
// partition holding a prefix of another's batches returns a byte prefix.
func pollAll(t *testing.T, storage backend, p *engine.Partition) []byte {
	t.Helper()
	var out []byte
	offset := p.OffsetFirst()
	for offset < p.OffsetNext() {
		op := &engine.PollOp{Strategy: engine.PollOffset, Value: offset, Count: 1 << 20, Out: make([]byte, 0, 64<<20)}
		poll(t, storage, p, op)
		if op.Messages == 0 {
			t.Fatalf("poll at %d returned nothing", offset)
		}
		out = append(out, op.Out...)
		offset = op.OffsetLast + 1
	}
	return out
}

func exportSnapshot(t *testing.T, p *engine.Partition, reader engine.BlockingReader) []byte {
	t.Helper()
	snapshot, err := p.ExportSnapshot(nil, engine.SnapshotBytesMax, reader)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	return snapshot
}

func installSnapshot(t *testing.T, storage backend, options engine.PartitionOptions, snapshot []byte) (*engine.Partition, error) {
	t.Helper()
	var installed *engine.Partition
	var installErr error
	called := 0
	engine.InstallSnapshot(storage, options, snapshot, func(p *engine.Partition, err error) {
		installed, installErr, called = p, err, called+1
	})
	storage.drain()
	if called != 1 {
		t.Fatalf("install callback ran %d times", called)
	}
	return installed, installErr
}

// sameContent checks target serves what source serves: identical records
// (offsets, timestamps, payloads, checksums) from the same first offset to
// the same next offset, and the same consumer offsets.
func sameContent(t *testing.T, storage backend, source, target *engine.Partition) {
	t.Helper()
	if source.OffsetFirst() != target.OffsetFirst() || source.OffsetNext() != target.OffsetNext() {
		t.Fatalf("offsets [%d, %d) installed as [%d, %d)", source.OffsetFirst(), source.OffsetNext(),
			target.OffsetFirst(), target.OffsetNext())
	}
	if !bytes.Equal(pollAll(t, storage, source), pollAll(t, storage, target)) {
		t.Fatal("installed partition serves other records")
	}
	for _, consumer := range []engine.Consumer{{Kind: engine.ConsumerSingle, ID: 7}, {Kind: engine.ConsumerGroup, ID: 3}} {
		want, wantOK := source.StoredOffset(consumer)
		got, gotOK := target.StoredOffset(consumer)
		if want != got || wantOK != gotOK {
			t.Fatalf("consumer %+v: offset %d/%v installed as %d/%v", consumer, want, wantOK, got, gotOK)
		}
	}
}

// TestSnapshotRoundTrip: batches appended to one partition, exported,
// installed into a fresh directory, poll back identical (offsets,
// timestamps, payloads, headers), across segments, after retention moved
// the first offset, and keep assigning the same offsets to new appends.
func TestSnapshotRoundTrip(t *testing.T) {
	storage := memBackend{enginetest.NewMemStorage(40)}
	options := engine.PartitionOptions{Directory: "/data/source", PartitionID: 3, SegmentBytes: 1 << 20, Logger: quiet}
	source := snapshotSource(t, storage, options, 40, 120)
	if source.SegmentCount() < 3 {
		t.Fatalf("source has %d segments, want several", source.SegmentCount())
	}
	for round, trimmed := range []bool{false, true} {
		if trimmed {
			op := &engine.MaintenanceOp{SegmentCount: 1, Done: func(*engine.MaintenanceOp) {}}
			if err := source.DeleteSegments(op); err != nil {
				t.Fatal(err)
			}
			storage.drain()
			if source.OffsetFirst() == 0 {
				t.Fatal("DeleteSegments left the first offset at 0")
			}
		}
		snapshot := exportSnapshot(t, source, memReader{storage.MemStorage})
		targetOptions := options
		targetOptions.Directory = filepath.Join("/data/target", string(rune('a'+round)))
		target, err := installSnapshot(t, storage, targetOptions, snapshot)
		if err != nil {
			t.Fatalf("round %d: install: %v", round, err)
		}
		sameContent(t, storage, source, target)
		if target.SegmentCount() < 2 {
			t.Fatalf("round %d: installed into %d segment(s), SegmentBytes not honoured", round, target.SegmentCount())
		}
		// Appends continue at the same offsets with non-decreasing timestamps.
		record := enginetest.Batch(1, enginetest.Message{IDLow: 1 << 40, Payload: []byte("next")})
		want, err := appendBatch(t, storage, target, append([]byte(nil), record...), 1)
		if err != nil || want.BaseOffset != source.OffsetNext() {
			t.Fatalf("append after install: offset %d, err %v", want.BaseOffset, err)
		}
		closePartition(t, storage, target)
		reopened := mustOpen(t, storage, targetOptions)
		if reopened.OffsetNext() != source.OffsetNext()+1 {
			t.Fatalf("reopened installed partition at %d", reopened.OffsetNext())
		}
		closePartition(t, storage, reopened)
	}
	closePartition(t, storage, source)
}

// TestSnapshotReplacesContent: installing over a closed partition's
// directory replaces what it held, and an empty snapshot leaves it empty.
func TestSnapshotReplacesContent(t *testing.T) {
	storage := memBackend{enginetest.NewMemStorage(41)}
	options := engine.PartitionOptions{Directory: "/data/p", PartitionID: 1, SegmentBytes: 1 << 20, Logger: quiet}
	old := snapshotSource(t, storage, options, 41, 60)
	closePartition(t, storage, old)
	emptyOptions := options
	emptyOptions.Directory = "/data/empty"
	empty := mustOpen(t, storage, emptyOptions)
	snapshot := exportSnapshot(t, empty, memReader{storage.MemStorage})
	installed, err := installSnapshot(t, storage, options, snapshot)
	if err != nil {
		t.Fatal(err)
	}
	if installed.OffsetNext() != 0 || installed.SegmentCount() != 1 || installed.SizeBytes() != 0 {
		t.Fatalf("empty snapshot installed as next %d, %d segments, %d bytes",
			installed.OffsetNext(), installed.SegmentCount(), installed.SizeBytes())
	}
	if _, ok := installed.StoredOffset(engine.Consumer{Kind: engine.ConsumerSingle, ID: 7}); ok {
		t.Fatal("an old consumer offset survived the install")
	}
	closePartition(t, storage, installed)
	closePartition(t, storage, empty)
}

// TestSnapshotLimitsAndDamage: an export past its byte limit fails with
// ErrSnapshotTooLarge; a damaged or foreign snapshot is refused with
// ErrSnapshotInvalid before the directory is touched.
func TestSnapshotLimitsAndDamage(t *testing.T) {
	storage := memBackend{enginetest.NewMemStorage(42)}
	options := engine.PartitionOptions{Directory: "/data/p", PartitionID: 1, SegmentBytes: 1 << 20, Logger: quiet}
	source := snapshotSource(t, storage, options, 42, 30)
	if _, err := source.ExportSnapshot(nil, int(source.SizeBytes()/2), memReader{storage.MemStorage}); !errors.Is(err, engine.ErrSnapshotTooLarge) {
		t.Fatalf("export over the limit: %v", err)
	}
	snapshot := exportSnapshot(t, source, memReader{storage.MemStorage})
	random := rand.New(rand.NewPCG(42, 1))
	for range 20 {
		damaged := append([]byte(nil), snapshot...)
		damaged[random.IntN(len(damaged))] ^= byte(1 + random.IntN(255))
		targetOptions := options
		targetOptions.Directory = "/data/damaged"
		if _, err := installSnapshot(t, storage, targetOptions, damaged); !errors.Is(err, engine.ErrSnapshotInvalid) {
			t.Fatalf("damaged snapshot: %v", err)
		}
		if _, ok := storage.File("/data/damaged/00000000000000000000.log"); ok {
			t.Fatal("a refused install wrote a segment")
		}
	}
	foreign := options
	foreign.Directory, foreign.PartitionID = "/data/foreign", 2
	if _, err := installSnapshot(t, storage, foreign, snapshot); !errors.Is(err, engine.ErrSnapshotInvalid) {
		t.Fatalf("snapshot of another partition: %v", err)
	}
	closePartition(t, storage, source)
}

// TestSnapshotMemoryDurability: batches acknowledged but still in the
// write buffers (memory durability) are exported too.
func TestSnapshotMemoryDurability(t *testing.T) {
	storage := memBackend{enginetest.NewMemStorage(43)}
	options := engine.PartitionOptions{Directory: "/data/m", PartitionID: 1, Durability: engine.DurabilityMemory, Logger: quiet}
	p := mustOpen(t, storage, options)
	for index := range 5 {
		op := &engine.AppendOp{Batch: enginetest.Batch(1, enginetest.Message{IDLow: uint64(index + 1), Payload: []byte("in memory")}),
			Timestamp: uint64(100 + index), Done: func(*engine.AppendOp) {}}
		if err := p.Append(op); err != nil {
			t.Fatal(err)
		}
	}
	if storage.Pending() == 0 {
		t.Fatal("nothing in flight: the test would not cover memory records")
	}
	snapshot, err := p.ExportSnapshot(nil, engine.SnapshotBytesMax, noReads{t})
	if err != nil {
		t.Fatal(err)
	}
	storage.drain()
	targetOptions := options
	targetOptions.Directory = "/data/m2"
	target, err := installSnapshot(t, storage, targetOptions, snapshot)
	if err != nil {
		t.Fatal(err)
	}
	sameContent(t, storage, p, target)
}

// noReads fails a test that expected an export served from memory.
type noReads struct{ t *testing.T }

func (r noReads) ReadAt(engine.File, []byte, int64) (int, error) {
	r.t.Helper()
	r.t.Log("export read the disk")
	return 0, errors.New("unexpected read")
}

// TestSnapshotDirectStorage runs the round trip on real files with
// O_DIRECT segment reads through DirectStorage.ReadAt.
func TestSnapshotDirectStorage(t *testing.T) {
	storage := directBackend{engine.NewDirectStorage()}
	root := t.TempDir()
	options := engine.PartitionOptions{Directory: filepath.Join(root, "source"), PartitionID: 9, SegmentBytes: 1 << 20, Logger: quiet}
	source := snapshotSource(t, storage, options, 44, 80)
	snapshot := exportSnapshot(t, source, storage.DirectStorage)
	targetOptions := options
	targetOptions.Directory = filepath.Join(root, "target")
	target, err := installSnapshot(t, storage, targetOptions, snapshot)
	if err != nil {
		t.Fatal(err)
	}
	sameContent(t, storage, source, target)
	closePartition(t, storage, target)
	closePartition(t, storage, source)
}

// flippingReader damages one byte of every read at flip, as a disk
// returning bad data would.
type flippingReader struct {
	inner engine.BlockingReader
	flip  int
}

func (r flippingReader) ReadAt(file engine.File, buffer []byte, position int64) (int, error) {
	count, err := r.inner.ReadAt(file, buffer, position)
	if r.flip < count {
		buffer[r.flip] ^= 0x20
	}
	return count, err
}

// TestSnapshotExportDetectsDamage: a batch that fails its checks on the
// way out is reported as corruption naming the segment file, never
// exported.
func TestSnapshotExportDetectsDamage(t *testing.T) {
	storage := memBackend{enginetest.NewMemStorage(45)}
	options := engine.PartitionOptions{Directory: "/data/d", PartitionID: 1, SegmentBytes: 1 << 20, Logger: quiet}
	source := snapshotSource(t, storage, options, 45, 20)
	for _, flip := range []int{40, 300, 5000} {
		_, err := source.ExportSnapshot(nil, engine.SnapshotBytesMax, flippingReader{memReader{storage.MemStorage}, flip})
		var corrupt *engine.CorruptError
		if !errors.As(err, &corrupt) || !errors.Is(err, engine.ErrCorrupt) || filepath.Ext(corrupt.Path) != ".log" {
			t.Fatalf("flip at %d: %v", flip, err)
		}
	}
	closePartition(t, storage, source)
}
