package engine_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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

// TestCleanRestartKeepsIndexes pins a recovery bug: an .index written
// with O_DIRECT ends zero-padded to a block, and recovery, which wanted
// exactly entries×24 bytes, rebuilt every index on every restart. A clean
// restart must leave every .index byte for byte as it was, and a padded
// tail that is not all zeros must still be rewritten.
func TestCleanRestartKeepsIndexes(t *testing.T) {
	directory := t.TempDir()
	storage := directBackend{engine.NewDirectStorage()}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	options := engine.PartitionOptions{Directory: directory, SegmentBytes: 1 << 20, Logger: logger}
	p, model := filled(t, storage, options, 200)
	closePartition(t, storage, p)
	indexes, _ := filepath.Glob(filepath.Join(directory, "*.index"))
	before := map[string][]byte{}
	padded := ""
	for _, name := range indexes {
		before[name] = mustRead(t, name)
		if len(before[name])%24 != 0 {
			padded = name
		}
	}
	if len(indexes) < 2 || padded == "" {
		t.Fatalf("%d indexes, none block-padded: the test does not cover the padded tail", len(indexes))
	}
	logs.Reset()
	p = mustOpen(t, storage, options)
	checkAll(t, storage, p, model)
	closePartition(t, storage, p)
	if strings.Contains(logs.String(), "rebuilding index") {
		t.Fatalf("a clean restart rebuilt an index:\n%s", logs.String())
	}
	for _, name := range indexes {
		if !bytes.Equal(mustRead(t, name), before[name]) {
			t.Fatalf("%s changed across a clean restart", name)
		}
	}
	damaged := mustRead(t, padded)
	damaged[len(damaged)-1] = 0xFF
	if err := os.WriteFile(padded, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	p = mustOpen(t, storage, options)
	checkAll(t, storage, p, model)
	closePartition(t, storage, p)
	if !strings.Contains(logs.String(), "rebuilding index") || bytes.Equal(mustRead(t, padded), damaged) {
		t.Fatalf("a non-zero byte in the padded tail was kept:\n%s", logs.String())
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
