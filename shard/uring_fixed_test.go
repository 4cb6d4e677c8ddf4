package shard

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/engine"
)

// TestDataFixedBuffers: sixteen partitions over the shards (eight a shard
// on two, where the old 16 MiB journal class held two) append and poll
// through the io_uring backend; every partition's journals come from the
// pools (no Alloc falls back to the Go heap), the journal writes go out as
// WRITE_FIXED, and after a restart with no cache the polls read the log
// back with READ_FIXED, byte for byte.
func TestDataFixedBuffers(t *testing.T) {
	if err := uringAvailable(); err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	const partitions, rounds = 16, 4
	directory := t.TempDir()
	topic := PartitionKey{Stream: 1, Topic: 3}
	h := startData(t, BackendIOURing, DataOptions{Directory: directory})
	h.create(topic, partitions, PartitionConfig{Durability: engine.DurabilityWritten})
	for round := range rounds {
		for partition := range uint32(partitions) {
			key := PartitionKey{Stream: 1, Topic: 3, Partition: partition}
			if result := h.append(int(partition)%h.shardCount(), key, testBatch(round*10, 10, 4000)); result.Err != nil {
				t.Fatalf("append %v: %v", key, result.Err)
			}
		}
	}
	written := sumShardStats(h)
	if written.AllocsHeap != 0 {
		t.Fatalf("%d Allocs fell back to the Go heap with %d partitions", written.AllocsHeap, partitions)
	}
	if written.FixedFileOps < partitions*rounds {
		t.Fatalf("%d fixed file ops for %d written appends (plain: %d)", written.FixedFileOps, partitions*rounds, written.PlainFileOps)
	}
	h.stop()

	var specs []PartitionSpec
	for partition := range uint32(partitions) {
		specs = append(specs, PartitionSpec{Key: PartitionKey{Stream: 1, Topic: 3, Partition: partition},
			Config: PartitionConfig{Durability: engine.DurabilityWritten}})
	}
	h = startData(t, BackendIOURing, DataOptions{Directory: directory, CacheBytes: -1, Partitions: specs})
	before := sumShardStats(h)
	for partition := range uint32(partitions) {
		key := PartitionKey{Stream: 1, Topic: 3, Partition: partition}
		result := h.poll(0, key, engine.PollOffset, 0, 1000, engine.Consumer{}, false)
		if result.Err != nil {
			t.Fatalf("poll %v: %v", key, result.Err)
		}
		offsets, sequences := decodeSequences(t, result.Out)
		if len(offsets) != rounds*10 {
			t.Fatalf("poll %v: %d messages, want %d", key, len(offsets), rounds*10)
		}
		for index := range offsets {
			if offsets[index] != uint64(index) || sequences[index] != uint64(index) {
				t.Fatalf("poll %v: message %d has offset %d sequence %d", key, index, offsets[index], sequences[index])
			}
		}
	}
	if after := sumShardStats(h); after.FixedFileOps-before.FixedFileOps < partitions {
		t.Fatalf("%d fixed file ops for %d polls from disk", after.FixedFileOps-before.FixedFileOps, partitions)
	}
}

func sumShardStats(h *dataHarness) Stats {
	var sum Stats
	for _, sh := range h.rt.Shards() {
		stats := sh.Stats()
		sum.FixedFileOps += stats.FixedFileOps
		sum.PlainFileOps += stats.PlainFileOps
		sum.AllocsHeap += stats.AllocsHeap
	}
	return sum
}

// TestURingFixedTrimRefix: a fixed buffer written, freed, trimmed and
// handed out again carries the bytes written after the trim (the trim
// empties its fixed slot, so the kernel never writes stale pinned pages);
// with the table gone the same write is a plain WRITE.
func TestURingFixedTrimRefix(t *testing.T) {
	if err := uringAvailable(); err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	name := filepath.Join(t.TempDir(), "fixed")
	fd, err := unix.Open(name, unix.O_RDWR|unix.O_CREAT|unix.O_DIRECT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		t.Skipf("O_DIRECT: %v", err)
	}
	defer unix.Close(fd)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // the ring's owner; the goroutine ends with its thread
		b, err := newURingBackendSized(2, 4096)
		if err != nil {
			t.Error(err)
			return
		}
		defer b.Close()
		const size = 1 << 20
		for round := range 3 {
			if round == 2 {
				if err := b.ring.UnregisterBuffers(); err != nil {
					t.Error(err)
					return
				}
			}
			buf := b.Alloc(size)
			for index := range buf {
				buf[index] = byte(round*31 + index*7)
			}
			want := append([]byte(nil), buf...)
			if !writeWait(t, b, fd, buf) {
				return
			}
			b.Free(buf)
			b.Trim()
			if onDisk, err := os.ReadFile(name); err != nil || !bytes.Equal(onDisk, want) {
				t.Errorf("round %d: the file differs from the bytes written (err %v)", round, err)
			}
		}
		if fixed, plain := b.stats.fixedFileOps.Load(), b.stats.plainFileOps.Load(); fixed != 2 || plain != 1 {
			t.Errorf("%d fixed and %d plain writes, want 2 and 1", fixed, plain)
		}
	}()
	<-done
}

// writeWait writes buf at 0 and waits for it; false (reported) on failure.
func writeWait(t *testing.T, b *uringBackend, fd int, buf []byte) bool {
	const token = uint64(tokenFile)<<tokenKindShift | 1
	if err := b.Write(fd, buf, 0, token); err != nil {
		t.Error(err)
		return false
	}
	out := make([]Completion, 8)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		count, err := b.Wait(out, 100*time.Millisecond)
		if err != nil {
			t.Error(err)
			return false
		}
		for _, completion := range out[:count] {
			if completion.Token == token {
				if completion.Errno != 0 || completion.Result != len(buf) {
					t.Errorf("write: %d bytes, errno %v", completion.Result, completion.Errno)
					return false
				}
				return true
			}
		}
	}
	t.Error("write did not complete")
	return false
}

// TestURingFixedMemlockFallback: on a thread without CAP_IPC_LOCK the
// kernel charges pinned slots to RLIMIT_MEMLOCK; past it a slot cannot be
// filled and the write goes out as a plain WRITE, with the right bytes.
func TestURingFixedMemlockFallback(t *testing.T) {
	if err := uringAvailable(); err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	var limit unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &limit); err != nil || limit.Cur == unix.RLIM_INFINITY || limit.Cur > 64<<20 {
		t.Skipf("RLIMIT_MEMLOCK %d (err %v): too large to exceed here", limit.Cur, err)
	}
	name := filepath.Join(t.TempDir(), "memlock")
	fd, err := unix.Open(name, unix.O_RDWR|unix.O_CREAT|unix.O_DIRECT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		t.Skipf("O_DIRECT: %v", err)
	}
	defer unix.Close(fd)
	skip := make(chan string, 1)
	go func() {
		defer close(skip)
		runtime.LockOSThread() // capabilities are per thread; this one ends with the goroutine
		if why := dropIPCLock(); why != "" {
			skip <- why
			return
		}
		b, err := newURingBackendSized(2, 4096)
		if err != nil {
			t.Error(err)
			return
		}
		defer b.Close()
		const size = 4 << 20
		var held [][]byte
		for round := range int(limit.Cur)/size + 2 {
			buf := b.Alloc(size)
			held = append(held, buf)
			for index := range buf {
				buf[index] = byte(round + index*3)
			}
			if !writeWait(t, b, fd, buf) {
				return
			}
			if onDisk, err := os.ReadFile(name); err != nil || !bytes.Equal(onDisk, buf) {
				t.Errorf("round %d: the file differs from the bytes written (err %v)", round, err)
			}
		}
		if b.stats.plainFileOps.Load() == 0 {
			t.Errorf("%d writes of %d bytes under a %d-byte RLIMIT_MEMLOCK all went fixed", len(held), size, limit.Cur)
		}
		for _, buf := range held {
			b.Free(buf)
		}
	}()
	if why, ok := <-skip; ok {
		t.Skip(why)
	}
}

// dropIPCLock removes CAP_IPC_LOCK from the calling thread's effective
// set; it returns why it could not, or "".
func dropIPCLock() string {
	header := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&header, &data[0]); err != nil {
		return "capget: " + err.Error()
	}
	data[0].Effective &^= 1 << unix.CAP_IPC_LOCK
	if err := unix.Capset(&header, &data[0]); err != nil {
		return "capset: " + err.Error()
	}
	return ""
}
