package replicalog

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

const journalPath = testDirectory + "/" + journalName

// filled opens a log, runs three synced Persists and closes it; it
// returns the model of what it holds.
func filled(t *testing.T, storage *enginetest.MemStorage) *model {
	t.Helper()
	log, _ := mustOpen(t, storage, 4)
	m := newModel(4)
	for _, p := range []*Persist{
		{HardState: []byte("one"), Writes: []Write{{0, 1, message(0, 1, 500)}, {1, 2, message(1, 2, 500)}}, Sync: true},
		{HardState: []byte("two"), Writes: []Write{{2, 3, message(2, 3, 500)}}, Sync: true},
		{HardState: []byte("three"), App: []byte("applied"), Writes: []Write{{3, 4, message(3, 4, 500)}}, Sync: true},
	} {
		persist(t, storage, log, p)
		m.apply(p)
	}
	closeLog(t, storage, log)
	return m
}

// TestTornTailTruncated: bytes after the last record (a partial record of
// a Persist that never completed) are cut, counted, and the log keeps
// everything acknowledged.
func TestTornTailTruncated(t *testing.T) {
	for _, tail := range [][]byte{
		{1, 2, 3},          // partial header
		make([]byte, 4096), // zeros of a preallocated or torn block
		append(make([]byte, 0, 64), 0x10, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9, 0, 0, 0, 0, 1), // header promising more
	} {
		storage := enginetest.NewMemStorage(10)
		m := filled(t, storage)
		raw, _ := storage.File(journalPath)
		storage.SetFile(journalPath, append(raw, tail...))
		log, loaded := mustOpen(t, storage, 4)
		if where := m.differs(loaded); where != "" {
			t.Fatalf("torn tail %d bytes: differs in %s", len(tail), where)
		}
		if loaded.TornBytes != int64(len(tail)) {
			t.Fatalf("torn tail %d bytes: TornBytes %d", len(tail), loaded.TornBytes)
		}
		after, _ := storage.File(journalPath)
		if len(after) != len(raw) {
			t.Fatalf("journal not truncated: %d bytes, want %d", len(after), len(raw))
		}
		closeLog(t, storage, log)
	}
}

// TestCorruptionInTheMiddle: damage to a record below the durable mark
// (a later synced Persist recorded it) refuses the open with ErrCorrupt
// naming the journal and the record's position; nothing is dropped.
func TestCorruptionInTheMiddle(t *testing.T) {
	storage := enginetest.NewMemStorage(11)
	filled(t, storage)
	raw, _ := storage.File(journalPath)
	second := int64(recordsAt + recordHeaderBytes + 500)
	raw[second+recordHeaderBytes+17] ^= 0x40 // slot 1's message
	storage.SetFile(journalPath, raw)
	result := openLog(t, storage, 4)
	var corrupt *engine.CorruptError
	if !errors.Is(result.err, engine.ErrCorrupt) || !errors.As(result.err, &corrupt) {
		t.Fatalf("damaged record: %v", result.err)
	}
	if corrupt.Path != journalPath || corrupt.Position != second {
		t.Fatalf("damage reported at %s %d, want %s %d", corrupt.Path, corrupt.Position, journalPath, second)
	}
	if after, _ := storage.File(journalPath); len(after) != len(raw) {
		t.Fatal("a refused open changed the journal")
	}
}

// TestJournalShorterThanDurable: a journal cut below what was synced is
// corruption, not a torn tail.
func TestJournalShorterThanDurable(t *testing.T) {
	storage := enginetest.NewMemStorage(12)
	filled(t, storage)
	raw, _ := storage.File(journalPath)
	storage.SetFile(journalPath, raw[:recordsAt+recordHeaderBytes+100])
	if result := openLog(t, storage, 4); !errors.Is(result.err, engine.ErrCorrupt) {
		t.Fatalf("truncated journal: %v", result.err)
	}
}

// TestTornSuperblock: a torn write of the newest copy loses only itself:
// the previous copy's hard state comes back.
func TestTornSuperblock(t *testing.T) {
	storage := enginetest.NewMemStorage(13)
	m := filled(t, storage)
	log, _ := mustOpen(t, storage, 4)
	persist(t, storage, log, &Persist{HardState: []byte("four, torn"), Sync: true})
	closeLog(t, storage, log)
	raw, _ := storage.File(journalPath)
	newest := copyAt(1)
	if sequenceAt(raw, copyAt(0)) > sequenceAt(raw, copyAt(1)) {
		newest = copyAt(0)
	}
	for i := newest + copyHeaderBytes; i < newest+copyHeaderBytes+4; i++ {
		raw[i] = 0xee // the copy's payload was torn
	}
	storage.SetFile(journalPath, raw)
	log, loaded := mustOpen(t, storage, 4)
	if where := m.differs(loaded); where != "" {
		t.Fatalf("torn superblock: differs in %s (hard state %q)", where, loaded.HardState)
	}
	// The next copy goes over the torn one, never over the survivor.
	persist(t, storage, log, &Persist{HardState: []byte("five"), Sync: true})
	closeLog(t, storage, log)
	m.hardState = []byte("five")
	log, loaded = mustOpen(t, storage, 4)
	if where := m.differs(loaded); where != "" {
		t.Fatalf("after the torn copy was replaced: differs in %s", where)
	}
	closeLog(t, storage, log)
}

func sequenceAt(raw []byte, at int64) uint64 {
	c, _, reason := decodeSuperCopy(raw[at:min(int64(len(raw)), at+copyBytes)])
	if reason != "" {
		return 0
	}
	return c.sequence
}

// TestBothSuperblockCopiesDamaged: with no valid copy left, open refuses
// with ErrCorrupt instead of starting fresh (which would forget votes).
func TestBothSuperblockCopiesDamaged(t *testing.T) {
	storage := enginetest.NewMemStorage(14)
	filled(t, storage)
	raw, _ := storage.File(journalPath)
	raw[copyAt(0)+20] ^= 1
	raw[copyAt(1)+20] ^= 1
	storage.SetFile(journalPath, raw)
	result := openLog(t, storage, 4)
	if !errors.Is(result.err, engine.ErrCorrupt) {
		t.Fatalf("both copies damaged: %v", result.err)
	}
}

// TestJournalHeaderDamaged: a damaged header in a journal whose
// superblock copies were written is refused, not recreated.
func TestJournalHeaderDamaged(t *testing.T) {
	storage := enginetest.NewMemStorage(15)
	filled(t, storage)
	raw, _ := storage.File(journalPath)
	raw[30] ^= 1
	storage.SetFile(journalPath, raw)
	if result := openLog(t, storage, 4); !errors.Is(result.err, engine.ErrCorrupt) {
		t.Fatalf("damaged header: %v", result.err)
	}
}

// TestRandomDamageNeverPanics flips seeded bytes anywhere in a journal
// (head, records, tail): open must either load a state or refuse with an
// error, never panic or loop, and a loaded log must accept a Persist.
func TestRandomDamageNeverPanics(t *testing.T) {
	base := enginetest.NewMemStorage(16)
	filled(t, base)
	pristine, _ := base.File(journalPath)
	random := rand.New(rand.NewPCG(16, 2))
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	loaded, refused := 0, 0
	for round := range rounds {
		raw := append([]byte(nil), pristine...)
		for range 1 + random.IntN(4) {
			at := random.IntN(len(raw))
			if random.IntN(3) == 0 {
				at = recordsAt + random.IntN(len(raw)-recordsAt) // aim at the records
			}
			raw[at] ^= byte(1 + random.IntN(255))
		}
		if random.IntN(4) == 0 {
			raw = raw[:recordsAt+random.IntN(len(raw)-recordsAt)]
		}
		storage := enginetest.NewMemStorage(uint64(round))
		storage.SetFile(journalPath, raw)
		result := openLog(t, storage, 4)
		if result.err != nil {
			refused++
			continue
		}
		loaded++
		persist(t, storage, result.log, &Persist{HardState: []byte("x"), Writes: []Write{{1, 9, []byte("y")}}, Sync: true})
		closeLog(t, storage, result.log)
	}
	t.Logf("loaded %d, refused %d", loaded, refused)
	if loaded == 0 || refused == 0 {
		t.Fatalf("damage never reached one of the outcomes: loaded %d, refused %d", loaded, refused)
	}
}
