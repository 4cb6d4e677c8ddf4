package engine_test

import (
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// TestFileTableNoStarvation: with the budget full, an op waiting for a
// descriptor gets one even while another file never goes idle (two ops
// on it overlap forever, as a partition's write and a poll's read do):
// the busy file's new ops queue behind the waiting one, so the busy file
// drains, is closed and reopened after it.
func TestFileTableNoStarvation(t *testing.T) {
	mem := enginetest.NewMemStorage(testSeed(t))
	backend := newTableBackend(t, mem, 1)
	busy, other := backend.open("/d/busy"), backend.open("/d/other")
	busyDone := 0
	resubmit := func(op *engine.Op) {
		if op.Err != nil {
			t.Fatalf("busy file op: %v", op.Err)
		}
		busyDone++
		backend.Submit(op)
	}
	for range 2 {
		backend.Submit(&engine.Op{Code: engine.OpSize, File: busy, Callback: resubmit})
	}
	otherDone := false
	backend.Submit(&engine.Op{Code: engine.OpSize, File: other, Callback: func(op *engine.Op) {
		if op.Err != nil {
			t.Fatalf("waiting file op: %v", op.Err)
		}
		otherDone = true
	}})
	for step := 0; !otherDone; step++ {
		if step == 1000 {
			t.Fatalf("an op waited for a descriptor through %d ops of a busy file (stats %+v)",
				busyDone, backend.table.Stats())
		}
		mem.Run(1)
		backend.table.Poll(1 << 20)
	}
	if busyDone > 100 {
		t.Fatalf("the waiting op ran only after %d ops of the busy file", busyDone)
	}
}
