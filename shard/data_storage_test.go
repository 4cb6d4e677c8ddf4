package shard

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/engine"
)

// storageCall submits one op through the shard's Storage and waits for
// its callback (the op is owned by the test until then).
func (h *dataHarness) storageCall(shard int, op *engine.Op) *engine.Op {
	h.t.Helper()
	done := make(chan struct{})
	op.Callback = func(*engine.Op) { close(done) }
	h.inject[shard] <- func(ds *DataShard) { ds.Storage().Submit(op) }
	h.wait(done)
	return op
}

// startDataWithFile starts a data plane and opens a fresh O_DIRECT file
// of name through its first shard's storage.
func startDataWithFile(t *testing.T, backend, name string) (*dataHarness, engine.File) {
	t.Helper()
	h := startData(t, backend, DataOptions{Directory: t.TempDir()})
	path := filepath.Join(t.TempDir(), name)
	open := h.storageCall(0, &engine.Op{Code: engine.OpOpen, Path: path, Flags: engine.OpenCreate | engine.OpenDirect})
	if open.Err != nil {
		t.Fatal(open.Err)
	}
	return h, engine.File(open.Result)
}

// TestStorageLargeTransfers: a write and a read larger than the backend's
// largest pooled buffer (so io_uring moves them through shorter bounce
// buffers, in parts) come back whole, byte for byte; a read past the end
// is short only at end of file.
func TestStorageLargeTransfers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		h, file := startDataWithFile(t, backend, "large")
		size := frameBytesMax + 16<<20
		data := alignedHeap(size)
		random := rand.New(rand.NewPCG(7, 7))
		for index := range data {
			data[index] = byte(random.Uint32())
		}
		write := h.storageCall(0, &engine.Op{Code: engine.OpWrite, File: file, Buffer: data, Position: 4096})
		if write.Err != nil || write.Result != int64(size) {
			t.Fatalf("write: %d of %d bytes, %v", write.Result, size, write.Err)
		}
		if sync := h.storageCall(0, &engine.Op{Code: engine.OpSync, File: file}); sync.Err != nil {
			t.Fatal(sync.Err)
		}
		back := alignedHeap(size + 8192)
		read := h.storageCall(0, &engine.Op{Code: engine.OpRead, File: file, Buffer: back, Position: 4096})
		if read.Err != nil || read.Result != int64(size) {
			t.Fatalf("read: %d bytes (want %d, short at end of file), %v", read.Result, size, read.Err)
		}
		if !bytes.Equal(back[:size], data) {
			t.Fatal("read back differs from what was written")
		}
		if closed := h.storageCall(0, &engine.Op{Code: engine.OpClose, File: file}); closed.Err != nil {
			t.Fatal(closed.Err)
		}
		var resumed uint64
		h.on(0, func(ds *DataShard) { resumed = ds.Storage().resumed })
		if backend == BackendIOURing && resumed < 2 {
			t.Fatalf("%d partial transfers resumed; the write and the read each bounce in parts", resumed)
		}
	})
}

// TestStorageWritesInPlace: a write marked InPlace, from memory outside
// the Go heap and the pools and larger than the largest pooled buffer,
// goes through the file table to the kernel in one op on io_uring (no
// bounce, so no resumed part, and counted in InPlaceFileOps), and its
// bytes read back whole on every backend.
func TestStorageWritesInPlace(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		h, file := startDataWithFile(t, backend, "in-place")
		size := frameBytesMax + 8<<20
		mapped, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = unix.Munmap(mapped) }() // Test memory; its write completed.
		random := rand.New(rand.NewPCG(8, 8))
		for index := range mapped {
			mapped[index] = byte(random.Uint32())
		}
		var before Stats
		h.on(0, func(ds *DataShard) { before = ds.shard.Stats() })
		write := h.storageCall(0, &engine.Op{Code: engine.OpWrite, File: file, Buffer: mapped, Position: 4096, InPlace: true})
		if write.Err != nil || write.Result != int64(size) {
			t.Fatalf("write: %d of %d bytes, %v", write.Result, size, write.Err)
		}
		var after Stats
		var resumed uint64
		h.on(0, func(ds *DataShard) { after, resumed = ds.shard.Stats(), ds.Storage().resumed })
		if backend == BackendIOURing && (after.InPlaceFileOps != before.InPlaceFileOps+1 || resumed != 0) {
			t.Fatalf("%d writes in place, %d parts resumed; want one whole write", after.InPlaceFileOps-before.InPlaceFileOps, resumed)
		}
		back := alignedHeap(size)
		read := h.storageCall(0, &engine.Op{Code: engine.OpRead, File: file, Buffer: back, Position: 4096})
		if read.Err != nil || read.Result != int64(size) || !bytes.Equal(back, mapped) {
			t.Fatalf("read back %d bytes (%v), or other bytes than written", read.Result, read.Err)
		}
		if closed := h.storageCall(0, &engine.Op{Code: engine.OpClose, File: file}); closed.Err != nil {
			t.Fatal(closed.Err)
		}
	})
}

// TestStorageManyInFlight: more reads at once than a shard has file-op
// slots; the excess waits for slots and every read completes with its
// own block.
func TestStorageManyInFlight(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		h := startData(t, backend, DataOptions{Directory: t.TempDir()})
		const blocks = 64
		path := filepath.Join(t.TempDir(), "blocks")
		content := make([]byte, blocks*4096)
		for block := range blocks {
			for index := range 4096 {
				content[block*4096+index] = byte(block)
			}
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		open := h.storageCall(1%h.shardCount(), &engine.Op{Code: engine.OpOpen, Path: path})
		if open.Err != nil {
			t.Fatal(open.Err)
		}
		count := 3 * fileOpsInFlightMax
		ops := make([]engine.Op, count)
		done := make(chan struct{})
		h.inject[1%h.shardCount()] <- func(ds *DataShard) {
			left := count
			for index := range ops {
				op := &ops[index]
				*op = engine.Op{Code: engine.OpRead, File: engine.File(open.Result), Buffer: make([]byte, 4096),
					Position: int64(index%blocks) * 4096, Callback: func(*engine.Op) {
						if left--; left == 0 {
							close(done)
						}
					}}
				ds.Storage().Submit(op)
			}
			if ds.Storage().Pending() < count {
				panic("submitted reads completed inside Submit")
			}
		}
		h.wait(done)
		for index := range ops {
			op := &ops[index]
			if op.Err != nil || op.Result != 4096 || op.Buffer[0] != byte(index%blocks) || op.Buffer[4095] != byte(index%blocks) {
				t.Fatalf("read %d: %d bytes, first byte %d, %v", index, op.Result, op.Buffer[0], op.Err)
			}
		}
		missing := h.storageCall(0, &engine.Op{Code: engine.OpOpen, Path: filepath.Join(t.TempDir(), "absent")})
		if !errors.Is(missing.Err, os.ErrNotExist) {
			t.Fatalf("open of a missing file without OpenCreate: %v", missing.Err)
		}
	})
}

// TestStorageKick: on io_uring, Kick hands a queued write to the kernel
// within the turn (nothing stays in the submission queue), which is what
// lets a partition write the first piece of a large batch while it copies
// the rest; the write completes as usual. epoll runs file ops inside
// Submit, so it does not claim to kick.
func TestStorageKick(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		h := startData(t, backend, DataOptions{Directory: t.TempDir()})
		path := filepath.Join(t.TempDir(), "kicked")
		open := h.storageCall(0, &engine.Op{Code: engine.OpOpen, Path: path, Flags: engine.OpenCreate | engine.OpenDirect})
		if open.Err != nil {
			t.Fatal(open.Err)
		}
		data := alignedHeap(256 << 10)
		for index := range data {
			data[index] = byte(index % 251)
		}
		done := make(chan struct{})
		write := &engine.Op{Code: engine.OpWrite, File: engine.File(open.Result), Buffer: data,
			Callback: func(*engine.Op) { close(done) }}
		var kicks bool
		queued, left := uint32(0), uint32(0)
		h.inject[0] <- func(ds *DataShard) {
			storage := ds.Storage()
			kicks = storage.Kicks()
			storage.Submit(write)
			if uring, ok := storage.shard.backend.(*uringBackend); ok {
				queued = uring.ring.SQPending()
				storage.Kick()
				left = uring.ring.SQPending()
			}
		}
		h.wait(done)
		if kicks != (backend == BackendIOURing) {
			t.Fatalf("backend %s: Kicks() = %v", backend, kicks)
		}
		if backend == BackendIOURing && (queued == 0 || left != 0) {
			t.Fatalf("submission queue held %d before Kick and %d after", queued, left)
		}
		if write.Err != nil || write.Result != int64(len(data)) {
			t.Fatalf("kicked write: %d bytes, %v", write.Result, write.Err)
		}
		back, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("file after the kicked write: %d bytes, %v", len(back), err)
		}
	})
}
