package engine_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
	"golang.org/x/sys/unix"
)

// A crash can leave any segment ending in megabytes of zeros: space
// allocated ahead of large appends reads as zeros until written, and a
// sealed segment's cut back to its last batch may not have been durable.
// These tests plant such tails (and tails with one stray byte) behind the
// engine's back, on MemStorage and on real files through DirectStorage,
// and check that recovery calls zeros a clean end and anything else torn.

// zeroTailBytes is longer than one recovery read (1 MiB) several times
// over and ends off a block boundary, as an allocation ahead may.
const zeroTailBytes = 3<<20 + 100

// strayPosition is where a row plants one non-zero byte into the zero
// tail, counted from the tail's start: past the first recovery read.
const strayPosition = 2 << 20

// tailRig edits a closed partition's files as a crash would leave them.
type tailRig struct {
	storage   backend
	mem       *enginetest.MemStorage
	directory string
	// warnings counts log records at Warn and above.
	warnings *int
}

func newTailRigs(t *testing.T) map[string]func(t *testing.T) *tailRig {
	return map[string]func(t *testing.T) *tailRig{
		"mem": func(t *testing.T) *tailRig {
			mem := enginetest.NewMemStorage(11)
			return &tailRig{storage: memBackend{mem}, mem: mem, directory: "/d/p", warnings: new(int)}
		},
		"direct": func(t *testing.T) *tailRig {
			return &tailRig{storage: directBackend{engine.NewDirectStorage()}, directory: t.TempDir(), warnings: new(int)}
		},
	}
}

func (rig *tailRig) options(durability engine.Durability) engine.PartitionOptions {
	logger := slog.New(warnCounter{count: rig.warnings})
	return engine.PartitionOptions{Directory: rig.directory, SegmentBytes: 1 << 20, Logger: logger, Durability: durability}
}

func (rig *tailRig) files(t *testing.T, suffix string) []string {
	if rig.mem != nil {
		return listFiles(rig.mem, rig.directory, suffix)
	}
	names, err := filepath.Glob(filepath.Join(rig.directory, "*"+suffix))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func (rig *tailRig) read(t *testing.T, name string) []byte {
	t.Helper()
	if rig.mem != nil {
		data, ok := rig.mem.File(name)
		if !ok {
			t.Fatalf("%s missing", name)
		}
		return append([]byte(nil), data...)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// plant cuts name at cut, then extends it with zeroCount zero bytes
// (allocated with fallocate on real files), and writes one 0x5a byte at
// cut+stray when stray is not negative.
func (rig *tailRig) plant(t *testing.T, name string, cut, zeroCount, stray int64) {
	t.Helper()
	if rig.mem != nil {
		data := append(rig.read(t, name)[:cut], make([]byte, zeroCount)...)
		if stray >= 0 {
			data[cut+stray] = 0x5a
		}
		rig.mem.SetFile(name, data)
		return
	}
	file, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if err := file.Truncate(cut); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fallocate(int(file.Fd()), 0, cut, zeroCount); errors.Is(err, unix.EOPNOTSUPP) {
		t.Skip("fallocate not supported by the test directory's file system")
	} else if err != nil {
		t.Fatal(err)
	}
	if stray >= 0 {
		if _, err := file.WriteAt([]byte{0x5a}, cut+stray); err != nil {
			t.Fatal(err)
		}
	}
}

// batchesEnd walks the batch_length fields of a cleanly written .log and
// returns where its last batch ends.
func batchesEnd(data []byte) int64 {
	at := 0
	for at+256 <= len(data) {
		length := int(binary.LittleEndian.Uint64(data[at+32:]))
		if length == 0 || at+length > len(data) {
			break
		}
		at += length
	}
	return int64(at)
}

// lastIndexPosition returns the .log position of an .index's last entry,
// the batch recovery must find under DurabilityPersisted.
func lastIndexPosition(data []byte) int64 {
	last := int64(-1)
	for at := 0; at+24 <= len(data); at += 24 {
		position := int64(binary.LittleEndian.Uint64(data[at+16:]))
		if at > 0 && position <= last {
			break
		}
		last = position
	}
	return last
}

type warnCounter struct{ count *int }

func (h warnCounter) Enabled(context.Context, slog.Level) bool { return true }

func (h warnCounter) Handle(_ context.Context, record slog.Record) error {
	if record.Level >= slog.LevelWarn {
		*h.count++
	}
	return nil
}

func (h warnCounter) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h warnCounter) WithGroup(string) slog.Handler { return h }

// TestZeroTailLastSegment plants a tail past the last segment's batches:
// zeros only are a clean end (every batch kept, nothing counted torn, no
// warning, the file cut back to its batches, appends go on and survive a
// reopen); one stray byte anywhere in it, even past the first recovery
// read, makes the whole tail torn, counted and cut.
func TestZeroTailLastSegment(t *testing.T) {
	rows := []struct {
		name  string
		stray int64
	}{
		{"zeros", -1},
		{"stray byte past the first read", strayPosition},
		{"stray last byte", zeroTailBytes - 1},
	}
	rigs := newTailRigs(t)
	for _, backendName := range []string{"mem", "direct"} {
		for _, row := range rows {
			t.Run(backendName+"/"+row.name, func(t *testing.T) {
				checkLastSegmentTail(t, rigs[backendName](t), row.stray)
			})
		}
	}
}

// filledClosed fills a partition with batchCount batches, checks that
// they took segments in [least, most], closes it and returns the model,
// the segment count and the first .log's name.
func (r *tailRig) filledClosed(t *testing.T, options engine.PartitionOptions, batchCount, least, most int) (
	[]enginetest.Message, int, string) {
	t.Helper()
	p, model := filled(t, r.storage, options, batchCount)
	segments := p.SegmentCount()
	if segments < least || segments > most {
		t.Fatalf("%d segments, want %d to %d", segments, least, most)
	}
	closePartition(t, r.storage, p)
	return model, segments, r.files(t, ".log")[0]
}

func checkLastSegmentTail(t *testing.T, rig *tailRig, stray int64) {
	options := rig.options(engine.DurabilityPersisted)
	model, _, logName := rig.filledClosed(t, options, 10, 1, 1)
	end := batchesEnd(rig.read(t, logName))
	rig.plant(t, logName, end, zeroTailBytes, stray)
	*rig.warnings = 0
	p := mustOpen(t, rig.storage, options)
	wantTorn, wantWarnings := int64(0), 0
	if stray >= 0 {
		wantTorn, wantWarnings = zeroTailBytes, 1
	}
	if p.TornBytes() != wantTorn || *rig.warnings != wantWarnings {
		t.Fatalf("torn bytes %d, warnings %d; want %d, %d", p.TornBytes(), *rig.warnings, wantTorn, wantWarnings)
	}
	if size := int64(len(rig.read(t, logName))); size != end {
		t.Fatalf("log is %d bytes after recovery, its batches end at %d", size, end)
	}
	checkAll(t, rig.storage, p, model)
	more := enginetest.Message{IDLow: 900, Payload: []byte("after the zero tail")}
	op, err := appendBatch(t, rig.storage, p, enginetest.Batch(1, more), 999)
	if err != nil || op.BaseOffset != uint64(len(model)) {
		t.Fatalf("append after recovery: offset %d, error %v", op.BaseOffset, err)
	}
	closePartition(t, rig.storage, p)
	p = mustOpen(t, rig.storage, options)
	if p.TornBytes() != 0 {
		t.Fatalf("second open: torn bytes %d", p.TornBytes())
	}
	checkAll(t, rig.storage, p, append(model, more))
	closePartition(t, rig.storage, p)
}

// TestZeroTailSealedSegment plants a tail past a sealed segment's
// batches (a crash before its roll's cut was durable): zeros only open,
// cut the file back and serve every message; one stray byte past the
// first recovery read is damage in a sealed segment, ErrCorrupt naming
// the file and where its batches end.
func TestZeroTailSealedSegment(t *testing.T) {
	rigs := newTailRigs(t)
	for _, backendName := range []string{"mem", "direct"} {
		for _, stray := range []int64{-1, strayPosition} {
			name := backendName + "/zeros"
			if stray >= 0 {
				name = backendName + "/stray byte past the first read"
			}
			t.Run(name, func(t *testing.T) {
				checkSealedSegmentTail(t, rigs[backendName](t), stray)
			})
		}
	}
}

func checkSealedSegmentTail(t *testing.T, rig *tailRig, stray int64) {
	options := rig.options(engine.DurabilityPersisted)
	model, segments, logName := rig.filledClosed(t, options, 120, 2, math.MaxInt)
	end := batchesEnd(rig.read(t, logName))
	rig.plant(t, logName, end, zeroTailBytes, stray)
	*rig.warnings = 0
	p, err := openPartition(t, rig.storage, options)
	if stray >= 0 {
		var corrupt *engine.CorruptError
		if !errors.Is(err, engine.ErrCorrupt) || !errors.As(err, &corrupt) {
			t.Fatalf("open error %v, want ErrCorrupt", err)
		}
		if corrupt.Path != logName || corrupt.Position != end {
			t.Fatalf("corruption reported in %s at %d, want %s at %d", corrupt.Path, corrupt.Position, logName, end)
		}
		return
	}
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if p.SegmentCount() != segments || p.TornBytes() != 0 || *rig.warnings != 0 {
		t.Fatalf("segments %d (want %d), torn bytes %d, warnings %d", p.SegmentCount(), segments, p.TornBytes(), *rig.warnings)
	}
	if size := int64(len(rig.read(t, logName))); size != end {
		t.Fatalf("sealed log is %d bytes after recovery, its batches end at %d", size, end)
	}
	checkAll(t, rig.storage, p, model)
	closePartition(t, rig.storage, p)
}

// TestZeroTailBeforeDurableWitness cuts the last segment at its .index's
// last entry and fills the rest with zeros, short (inside one block, like
// O_DIRECT padding) or long: under DurabilityPersisted that entry proves
// its batch was durable, so its absence is ErrCorrupt whatever the tail
// holds; under DurabilityWritten the index proves nothing and the zeros
// are a clean end at that batch.
func TestZeroTailBeforeDurableWitness(t *testing.T) {
	rigs := newTailRigs(t)
	for _, backendName := range []string{"mem", "direct"} {
		for _, zeroCount := range []int64{1000, zeroTailBytes} {
			t.Run(fmt.Sprintf("%s/%d zeros", backendName, zeroCount), func(t *testing.T) {
				checkZeroTailBeforeWitness(t, rigs[backendName](t), zeroCount)
			})
		}
	}
}

func checkZeroTailBeforeWitness(t *testing.T, rig *tailRig, zeroCount int64) {
	persisted := rig.options(engine.DurabilityPersisted)
	model, _, logName := rig.filledClosed(t, persisted, 20, 1, 1)
	indexName := rig.files(t, ".index")[0]
	witness := lastIndexPosition(rig.read(t, indexName))
	if witness <= 0 {
		t.Fatalf("the index's last entry is at %d; the test needs one past the first batch", witness)
	}
	rig.plant(t, logName, witness, zeroCount, -1)
	_, err := openPartition(t, rig.storage, persisted)
	var corrupt *engine.CorruptError
	if !errors.Is(err, engine.ErrCorrupt) || !errors.As(err, &corrupt) {
		t.Fatalf("persisted open error %v, want ErrCorrupt", err)
	}
	if corrupt.Path != logName || corrupt.Position != witness {
		t.Fatalf("corruption reported in %s at %d, want %s at %d", corrupt.Path, corrupt.Position, logName, witness)
	}
	p := mustOpen(t, rig.storage, rig.options(engine.DurabilityWritten))
	kept := p.OffsetNext()
	if p.TornBytes() != 0 || kept == 0 || kept >= uint64(len(model)) {
		t.Fatalf("written open: torn bytes %d, offset next %d of %d", p.TornBytes(), kept, len(model))
	}
	if size := int64(len(rig.read(t, logName))); size != witness {
		t.Fatalf("log is %d bytes after recovery, want %d", size, witness)
	}
	checkAll(t, rig.storage, p, model[:kept])
	closePartition(t, rig.storage, p)
}
