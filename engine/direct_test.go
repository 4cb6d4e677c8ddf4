package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
	"golang.org/x/sys/unix"
)

// TestDirectStorageUsesODirect checks that the test directory's file
// system takes O_DIRECT, so the real-file tests exercise aligned I/O; it
// skips, naming the feature, where it does not.
func TestDirectStorageUsesODirect(t *testing.T) {
	name := filepath.Join(t.TempDir(), "probe")
	fd, err := unix.Open(name, unix.O_RDWR|unix.O_CREAT|unix.O_DIRECT, 0o644)
	if errors.Is(err, unix.EINVAL) {
		t.Skip("O_DIRECT not supported by the test directory's file system")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil || flags&unix.O_DIRECT == 0 {
		t.Fatalf("O_DIRECT not set: flags %x, %v", flags, err)
	}
}

// TestRealFilesRoundTripAndRebuild runs the round trip on real files,
// then deletes every .index and plants a torn tail with the os package:
// reopening rebuilds the indexes, truncates the tail and serves it all.
func TestRealFilesRoundTripAndRebuild(t *testing.T) {
	directory := t.TempDir()
	storage := directBackend{engine.NewDirectStorage()}
	options := engine.PartitionOptions{Directory: directory, SegmentBytes: 1 << 20, Logger: quiet}
	p, model := filled(t, storage, options, 200)
	segments := p.SegmentCount()
	checkAll(t, storage, p, model)
	closePartition(t, storage, p)
	indexes, _ := filepath.Glob(filepath.Join(directory, "*.index"))
	logs, _ := filepath.Glob(filepath.Join(directory, "*.log"))
	if len(indexes) != segments || len(logs) != segments || segments < 2 {
		t.Fatalf("%d segments, %d .index, %d .log files", segments, len(indexes), len(logs))
	}
	for _, name := range indexes {
		if err := os.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
	file, err := os.OpenFile(logs[len(logs)-1], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := file.Write(enginetest.Batch(1, enginetest.Message{Payload: []byte("never acknowledged")})[:300]); err != nil {
		t.Fatal(err)
	}
	file.Close()
	p = mustOpen(t, storage, options)
	if p.TornBytes() == 0 {
		t.Fatal("planted torn tail not reported")
	}
	checkAll(t, storage, p, model)
	for _, name := range indexes {
		info, err := os.Stat(name)
		if err != nil || info.Size() == 0 || info.Size()%24 != 0 {
			t.Fatalf("%s not rebuilt: %v", name, err)
		}
	}
	closePartition(t, storage, p)
}
