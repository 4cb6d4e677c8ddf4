package engine_test

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// TestFileTableEvictionCloseError: a file system may report a failed
// writeback at close (NFS flushes there) and then not again. When the
// table closes an idle file to make room and that close fails, the
// handle's next fdatasync must fail too: otherwise the sync through the
// reopened descriptor reports durable data the close said was lost.
func TestFileTableEvictionCloseError(t *testing.T) {
	mem := enginetest.NewMemStorage(testSeed(t))
	backend := newTableBackend(t, mem, 1)
	run, open := backend.run, backend.open
	offsets := open("/d/offsets")
	if op := run(&engine.Op{Code: engine.OpWrite, File: offsets, Buffer: []byte("stored offsets")}); op.Err != nil {
		t.Fatalf("write: %v", op.Err)
	}
	mem.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpClose {
			return unix.EIO
		}
		return nil
	}
	_ = open("/d/other") // the budget of 1 evicts the offsets file; its close fails
	mem.Inject = nil
	op := run(&engine.Op{Code: engine.OpSync, File: offsets})
	if !errors.Is(op.Err, unix.EIO) {
		t.Fatalf("fdatasync after the eviction's close failed: %v, want EIO", op.Err)
	}
	if op := run(&engine.Op{Code: engine.OpSync, File: offsets}); op.Err != nil {
		t.Fatalf("a second fdatasync: %v (the close error is reported once)", op.Err)
	}
}
