package engine_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// TestSnapshotInstallCrash crashes InstallSnapshot after every op
// completion (keeping a seeded share of unsynced writes and directory
// changes) over a closed partition with other content, and reopens the
// directory: it must open, and serve a prefix of the old batches or a
// prefix of the snapshot's, never a mix or an error.
func TestSnapshotInstallCrash(t *testing.T) {
	const (
		sourceDirectory = "/data/source"
		targetDirectory = "/data/target"
	)
	setup := func() (memBackend, []byte, []byte, []byte, engine.PartitionOptions) {
		storage := memBackend{enginetest.NewMemStorage(50)}
		options := engine.PartitionOptions{Directory: sourceDirectory, PartitionID: 1, SegmentBytes: 1 << 20, Logger: quiet}
		source := snapshotSourceSized(t, storage, options, 50, 60, 8000)
		snapshot := exportSnapshot(t, source, memReader{storage.MemStorage})
		newRecords := pollAll(t, storage, source)
		closePartition(t, storage, source)
		targetOptions := options
		targetOptions.Directory = targetDirectory
		old := snapshotSourceSized(t, storage, targetOptions, 51, 60, 8000)
		oldRecords := pollAll(t, storage, old)
		closePartition(t, storage, old)
		return storage, snapshot, newRecords, oldRecords, targetOptions
	}
	outcomes := map[string]int{}
	stride := 1
	if testing.Short() {
		stride = 5 // coprime to the 7 ops per written file and the 2 per removal
	}
	for step := 0; ; step += stride {
		storage, snapshot, newRecords, oldRecords, options := setup()
		finished := false
		engine.InstallSnapshot(storage, options, snapshot, func(p *engine.Partition, err error) {
			if err != nil {
				t.Fatalf("install: %v", err)
			}
			finished = true
		})
		for range step {
			storage.Run(1)
		}
		if finished || storage.Pending() == 0 {
			break
		}
		crashed := memBackend{storage.Crash(uint64(step))}
		p, err := openPartition(t, crashed, options)
		if err != nil {
			t.Fatalf("crash after %d steps: open: %v", step, err)
		}
		records := pollAll(t, crashed, p)
		switch {
		case len(records) == 0:
			outcomes["empty"]++
		case bytes.HasPrefix(oldRecords, records):
			outcomes["old prefix"]++
		case bytes.HasPrefix(newRecords, records):
			outcomes["new prefix"]++
		default:
			t.Fatalf("crash after %d steps: the partition serves neither a prefix of the old nor of the new batches", step)
		}
		closePartition(t, crashed, p)
	}
	t.Logf("outcomes %v", outcomes)
	if outcomes["old prefix"] == 0 || outcomes["new prefix"] == 0 {
		t.Fatalf("crash points missed a case: %v", outcomes)
	}
}

// TestSnapshotInstallError: a failed write makes the install report the
// error once (its handles closed); installing again afterwards succeeds.
func TestSnapshotInstallError(t *testing.T) {
	storage := memBackend{enginetest.NewMemStorage(52)}
	options := engine.PartitionOptions{Directory: "/data/source", PartitionID: 1, SegmentBytes: 1 << 20, Logger: quiet}
	source := snapshotSource(t, storage, options, 52, 20)
	snapshot := exportSnapshot(t, source, memReader{storage.MemStorage})
	target := options
	target.Directory = "/data/target"
	storage.Inject = func(op *engine.Op) error {
		if op.Code == engine.OpWrite {
			return errors.New("injected EIO")
		}
		return nil
	}
	if _, err := installSnapshot(t, storage, target, snapshot); err == nil || engine.IsFatal(err) {
		t.Fatalf("install with a failing write: %v", err)
	}
	storage.Inject = nil
	installed, err := installSnapshot(t, storage, target, snapshot)
	if err != nil {
		t.Fatalf("install after the fault cleared: %v", err)
	}
	sameContent(t, storage, source, installed)
	closePartition(t, storage, installed)
	closePartition(t, storage, source)
}
