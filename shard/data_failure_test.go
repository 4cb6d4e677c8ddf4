package shard

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/engine"
)

// TestDataCorruptPartition: damage inside a durable batch makes that one
// partition refuse to open at restart; its ops answer engine.ErrCorrupt
// (naming the file), the topic's other partition serves, and deleting the
// topic removes the refused partition's directory too.
func TestDataCorruptPartition(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		directory := t.TempDir()
		topic := PartitionKey{Stream: 3, Topic: 3}
		h := startData(t, backend, DataOptions{Directory: directory})
		h.create(topic, 2, PartitionConfig{})
		specs := []PartitionSpec{{Key: topic}, {Key: PartitionKey{Stream: 3, Topic: 3, Partition: 1}}}
		for _, spec := range specs {
			for batch := range 4 {
				if result := h.appendAt(0, spec.Key, batch*10, 10, 0); result.Err != nil {
					t.Fatal(result.Err)
				}
			}
		}
		h.stop()
		log := filepath.Join(PartitionDirectory(directory, topic), "00000000000000000000.log")
		file, err := os.OpenFile(log, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := file.WriteAt([]byte{0xde, 0xad, 0xbe, 0xef}, 256+48+8); err != nil { // first message's payload
			t.Fatal(err)
		}
		if err := file.Close(); err != nil {
			t.Fatal(err)
		}
		h = startData(t, backend, DataOptions{Directory: directory, Partitions: specs})
		for origin := range h.shardCount() {
			result := h.poll(origin, topic, engine.PollFirst, 0, 10, engine.Consumer{}, false)
			var corrupt *engine.CorruptError
			if !errors.Is(result.Err, engine.ErrCorrupt) || !errors.As(result.Err, &corrupt) || !strings.Contains(corrupt.Path, "00000000000000000000") {
				t.Fatalf("poll of the damaged partition: %v", result.Err)
			}
			if result := h.append(origin, topic, testBatch(0, 1, 8)); !errors.Is(result.Err, engine.ErrCorrupt) {
				t.Fatalf("append to the damaged partition: %v", result.Err)
			}
			expectRange(t, "the undamaged partition", h.poll(origin, specs[1].Key, engine.PollFirst, 0, 100, engine.Consumer{}, false), 0, 40)
		}
		h.topicOp(0, topic, 2, (*DataShard).Delete)
		if _, err := os.Stat(PartitionDirectory(directory, topic)); !os.IsNotExist(err) {
			t.Fatalf("the refused partition's directory after delete: %v", err)
		}
	})
}

// TestDataFatalSync: a failed fdatasync is fatal. The test swaps the
// active segment's descriptor for /dev/null behind the engine (fdatasync
// of /dev/null fails with EINVAL): the append gets an *engine.FatalError
// and the whole runtime stops with it (Runtime.Err, Data.Fatal).
func TestDataFatalSync(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		directory := t.TempDir()
		h := startData(t, backend, DataOptions{Directory: directory})
		key := keysOwnedBy(5, 5, h.shardCount()-1, h.shardCount(), 1)[0]
		h.create(key, 1, PartitionConfig{Durability: engine.DurabilityPersisted})
		if result := h.appendAt(0, key, 0, 1, 0); result.Err != nil {
			t.Fatal(result.Err)
		}
		log := filepath.Join(PartitionDirectory(directory, key), "00000000000000000000.log")
		fd := descriptorOf(t, log)
		null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(null)
		if err := unix.Dup2(null, fd); err != nil {
			t.Fatal(err)
		}
		result := h.appendAt(0, key, 1, 1, 0)
		if !engine.IsFatal(result.Err) {
			t.Fatalf("append whose fdatasync failed: %v, want a FatalError", result.Err)
		}
		select {
		case <-h.rt.Done():
		case <-time.After(30 * time.Second):
			t.Fatal("the runtime kept running after a fatal storage error")
		}
		h.stopped = true
		if !engine.IsFatal(h.rt.Err()) || !engine.IsFatal(h.data.Fatal()) {
			t.Fatalf("runtime error %v, data plane error %v: want the FatalError", h.rt.Err(), h.data.Fatal())
		}
	})
}

// descriptorOf finds this process's descriptor open on path.
func descriptorOf(t *testing.T, path string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	for _, entry := range entries {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", entry.Name()))
		if err == nil && target == path {
			fd, err := strconv.Atoi(entry.Name())
			if err != nil {
				t.Fatal(err)
			}
			return fd
		}
	}
	t.Fatalf("no descriptor open on %s", path)
	return -1
}
