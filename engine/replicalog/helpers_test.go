package replicalog

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/whippetio/whippet/engine/enginetest"
)

const testDirectory = "/data/group"

// drain completes every op in flight, the ones their callbacks submit
// included.
func drain(storage *enginetest.MemStorage) {
	for storage.Pending() > 0 {
		storage.Run(1 << 20)
	}
}

type openResult struct {
	log    *Log
	loaded Loaded
	err    error
	done   bool
}

func openLog(t *testing.T, storage *enginetest.MemStorage, slotCount int) openResult {
	t.Helper()
	var result openResult
	Open(storage, testDirectory, slotCount, func(log *Log, loaded Loaded, err error) {
		result = openResult{log: log, loaded: loaded, err: err, done: true}
	})
	drain(storage)
	if !result.done {
		t.Fatal("open did not finish")
	}
	return result
}

func mustOpen(t *testing.T, storage *enginetest.MemStorage, slotCount int) (*Log, Loaded) {
	t.Helper()
	result := openLog(t, storage, slotCount)
	if result.err != nil {
		t.Fatalf("open: %v", result.err)
	}
	return result.log, result.loaded
}

func persist(t *testing.T, storage *enginetest.MemStorage, log *Log, p *Persist) {
	t.Helper()
	var err error
	done := false
	p.Done = func(e error) { err, done = e, true }
	log.Persist(p)
	drain(storage)
	if !done || err != nil {
		t.Fatalf("persist: done %v, err %v", done, err)
	}
}

func closeLog(t *testing.T, storage *enginetest.MemStorage, log *Log) {
	t.Helper()
	var err error
	done := false
	log.Close(func(e error) { err, done = e, true })
	drain(storage)
	if !done || err != nil {
		t.Fatalf("close: done %v, err %v", done, err)
	}
}

// message returns a message whose bytes depend on slot, op and length.
func message(slot int, op uint64, length int) []byte {
	random := rand.New(rand.NewPCG(uint64(slot), op))
	out := make([]byte, length)
	for i := range out {
		out[i] = byte(random.Uint32())
	}
	return out
}

// model is what a log must hold: the acknowledged state.
type model struct {
	hardState []byte
	app       []byte
	slots     [][]byte
}

func newModel(slotCount int) *model { return &model{slots: make([][]byte, slotCount)} }

func (m *model) apply(p *Persist) {
	if p.HardState != nil {
		m.hardState = append([]byte{}, p.HardState...)
	}
	if p.App != nil {
		m.app = append([]byte{}, p.App...)
	}
	for _, write := range p.Writes {
		m.slots[write.Slot] = nil
		if len(write.Message) > 0 {
			m.slots[write.Slot] = append([]byte{}, write.Message...)
		}
	}
}

func (m *model) clone() *model {
	c := &model{hardState: m.hardState, app: m.app, slots: append([][]byte(nil), m.slots...)}
	return c
}

// equal reports where loaded differs from the model, or "".
func (m *model) differs(loaded Loaded) string {
	if (m.hardState == nil) != (loaded.HardState == nil) || !bytes.Equal(m.hardState, loaded.HardState) {
		return "hard state"
	}
	if (m.app == nil) != (loaded.App == nil) || !bytes.Equal(m.app, loaded.App) {
		return "app record"
	}
	if len(loaded.Slots) != len(m.slots) {
		return "slot count"
	}
	for i := range m.slots {
		if !bytes.Equal(m.slots[i], loaded.Slots[i]) {
			return "slot content"
		}
	}
	return ""
}
