package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
	"golang.org/x/sys/unix"
)

// TestRealENOSPC fills a 3 MiB tmpfs through DirectStorage: the append
// that does not fit fails with ENOSPC (not fatal), everything acknowledged
// before stays readable, and the partition keeps serving. It needs
// permission to mount tmpfs and skips, naming it, without.
func TestRealENOSPC(t *testing.T) {
	directory := t.TempDir()
	if err := unix.Mount("tmpfs", directory, "tmpfs", 0, "size=3m"); err != nil {
		t.Skipf("mounting a size-limited tmpfs needs CAP_SYS_ADMIN: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(directory, 0) }) // the test is over; a busy mount is harmless
	storage := directBackend{engine.NewDirectStorage()}
	options := engine.PartitionOptions{Directory: filepath.Join(directory, "p"), SegmentBytes: 1 << 20, Logger: quiet}
	p := mustOpen(t, storage, options)
	random := newRandom(5)
	serial := uint64(0)
	var model []enginetest.Message
	var failure error
	for batch := 0; batch < 1000 && failure == nil; batch++ {
		messages := randomMessages(random, &serial, 2, 30000)
		if _, err := appendBatch(t, storage, p, enginetest.Batch(1, messages...), uint64(1+batch)); err != nil {
			failure = err
			break
		}
		model = append(model, messages...)
	}
	if !errors.Is(failure, syscall.ENOSPC) || engine.IsFatal(failure) {
		t.Fatalf("filling the disk ended with %v, want a non-fatal ENOSPC", failure)
	}
	if len(model) == 0 {
		t.Fatal("nothing fit on the disk")
	}
	checkAll(t, storage, p, model)
	if _, err := os.Stat(options.Directory); err != nil {
		t.Fatal(err)
	}
	closePartition(t, storage, p)
	p = mustOpen(t, storage, options)
	checkAll(t, storage, p, model)
	closePartition(t, storage, p)
}
