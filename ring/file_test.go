package ring

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// openDirect opens a fresh file in a temporary directory with O_DIRECT, or
// skips when the filesystem refuses O_DIRECT.
func openDirect(t *testing.T) (int32, string) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "direct.dat")
	fd, err := unix.Open(name, unix.O_RDWR|unix.O_CREAT|unix.O_DIRECT|unix.O_CLOEXEC, 0o600)
	if err == unix.EINVAL {
		t.Skipf("O_DIRECT not supported by the filesystem of %s", name)
	}
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) }) // Test file; the test already checked its bytes.
	return int32(fd), name
}

func newTestPool(t *testing.T, count, bufferBytes int) *Pool {
	t.Helper()
	pool, err := NewPool(count, bufferBytes)
	if err != nil {
		t.Fatalf("NewPool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func fillSeeded(t testing.TB, data []byte, seed uint64) {
	t.Helper()
	t.Logf("fill seed %d", seed)
	random := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range data {
		data[i] = byte(random.Uint32())
	}
}

// TestODirectFixedWriteRead writes registered buffers with WRITE_FIXED to an
// O_DIRECT file, fdatasyncs it, reads the blocks back with READ_FIXED into
// buffers of a second registered pool (whose fixed indexes follow the
// first's) and compares every byte, and checks the file through the page
// cache too.
func TestODirectFixedWriteRead(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 16})
	fd, name := openDirect(t)
	const blockBytes, blocks = 64 << 10, 4
	pool := newTestPool(t, blocks, blockBytes)
	readPool := newTestPool(t, blocks, blockBytes)
	if err := r.RegisterBuffers(pool, readPool); err != nil {
		t.Fatalf("RegisterBuffers: %v", err)
	}
	t.Cleanup(func() {
		if err := r.UnregisterBuffers(); err != nil {
			t.Errorf("UnregisterBuffers: %v", err)
		}
	})
	written := make([]Buf, blocks)
	want := make([]byte, 0, blocks*blockBytes)
	for i := range written {
		written[i], _ = pool.Acquire()
		fillSeeded(t, written[i].Bytes(), uint64(i+1))
		want = append(want, written[i].Bytes()...)
		sqe := mustSQE(t, r)
		sqe.PrepWriteFixed(fd, written[i], 0, blockBytes, uint64(i*blockBytes))
		sqe.SetUserData(uint64(i))
	}
	var others []CQE
	for i, b := range written {
		cqe := waitFor(t, r, uint64(i), &others)
		if cqe.Res != blockBytes {
			t.Fatalf("WRITE_FIXED %d: res %d, want %d", i, cqe.Res, blockBytes)
		}
		pool.Reclaim(b)
	}
	sqe := mustSQE(t, r)
	sqe.PrepFsync(fd, FsyncDatasync)
	sqe.SetUserData(99)
	if cqe := waitFor(t, r, 99, &others); cqe.Res != 0 {
		t.Fatalf("fdatasync: %v", cqe.Err())
	}
	readBack := make([]Buf, blocks)
	for i := range readBack {
		readBack[i], _ = readPool.Acquire()
		if readBack[i].FixedIndex() != blocks+readBack[i].Index() {
			t.Fatalf("second pool's buffer %d has fixed index %d", readBack[i].Index(), readBack[i].FixedIndex())
		}
		sqe := mustSQE(t, r)
		sqe.PrepReadFixed(fd, readBack[i], 0, blockBytes, uint64(i*blockBytes))
		sqe.SetUserData(uint64(100 + i))
	}
	for i, b := range readBack {
		cqe := waitFor(t, r, uint64(100+i), &others)
		if cqe.Res != blockBytes {
			t.Fatalf("READ_FIXED %d: res %d", i, cqe.Res)
		}
		readPool.Reclaim(b)
		if !bytes.Equal(b.Bytes(), want[i*blockBytes:(i+1)*blockBytes]) {
			t.Fatalf("block %d read back differs from what was written", i)
		}
	}
	onDisk, err := os.ReadFile(name)
	if err != nil || !bytes.Equal(onDisk, want) {
		t.Fatalf("file through the page cache differs (err %v, %d bytes)", err, len(onDisk))
	}
	for i := range blocks {
		pool.Release(written[i])
		readPool.Release(readBack[i])
	}
}

// TestLinkedWriteFsyncRead links WRITE → FSYNC(DATASYNC) → READ on a plain
// file: each starts only after the previous succeeded, so the READ must see
// the WRITE's bytes though all three were submitted at once.
func TestLinkedWriteFsyncRead(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	file, err := os.Create(filepath.Join(t.TempDir(), "linked.dat"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	fd := int32(file.Fd())
	pool := newTestPool(t, 2, PageBytes)
	source, _ := pool.Acquire()
	target, _ := pool.Acquire()
	copy(source.Bytes(), "linked operations run in order")
	const length = 30
	write := mustSQE(t, r)
	write.PrepWrite(fd, source, 0, length, 0)
	write.SetUserData(1)
	write.Link()
	sync := mustSQE(t, r)
	sync.PrepFsync(fd, FsyncDatasync)
	sync.SetUserData(2)
	sync.Link()
	read := mustSQE(t, r)
	read.PrepRead(fd, target, 0, length, 0)
	read.SetUserData(3)
	var others []CQE
	for userData, want := range []int32{1: length, 2: 0, 3: length} {
		if userData == 0 {
			continue
		}
		if cqe := waitFor(t, r, uint64(userData), &others); cqe.Res != want {
			t.Fatalf("linked op %d: res %d, want %d", userData, cqe.Res, want)
		}
	}
	pool.Reclaim(source)
	pool.Reclaim(target)
	if got := string(target.Bytes()[:length]); got != "linked operations run in order" {
		t.Fatalf("read %q", got)
	}
}

// TestOwnedWrite writes memory no pool owns (an anonymous mapping, as
// the engine's cache arena is) to an O_DIRECT file with PrepWriteOwned,
// at an offset, and reads every byte back through the page cache.
func TestOwnedWrite(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	fd, name := openDirect(t)
	const length, position = 3 * 64 << 10, 64 << 10
	mapped, err := unix.Mmap(-1, 0, length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	t.Cleanup(func() { _ = unix.Munmap(mapped) }) // Test memory; the write completed before.
	fillSeeded(t, mapped, 41)
	sqe := mustSQE(t, r)
	sqe.PrepWriteOwned(fd, mapped, position)
	sqe.SetUserData(7)
	var others []CQE
	if cqe := waitFor(t, r, 7, &others); cqe.Res != length {
		t.Fatalf("owned write: res %d, want %d", cqe.Res, length)
	}
	written, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != position+length || !bytes.Equal(written[position:], mapped) {
		t.Fatalf("the file holds %d bytes, or other bytes than the mapping", len(written))
	}
}

// TestFallocate allocates a file's space through the ring: the file grows
// to the allocated end, the range reads as zeros and written bytes stay.
func TestFallocate(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	fd, name := openDirect(t)
	if err := os.WriteFile(name, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	const size = 3 << 20
	sqe := mustSQE(t, r)
	sqe.PrepFallocate(fd, 0, 0, size)
	sqe.SetUserData(9)
	var others []CQE
	cqe := waitFor(t, r, 9, &others)
	if cqe.Err() == unix.EOPNOTSUPP {
		t.Skip("the test directory's file system has no fallocate (EOPNOTSUPP)")
	}
	if cqe.Res != 0 {
		t.Fatalf("fallocate: res %d (%v)", cqe.Res, cqe.Err())
	}
	allocated, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(allocated) != size || string(allocated[:4]) != "kept" || !bytes.Equal(allocated[4:], make([]byte, size-4)) {
		t.Fatalf("the file holds %d bytes starting %q, want %d: the written bytes, then zeros", len(allocated), allocated[:4], size)
	}
}

// TestLinkBreaksOnFailure checks the negative space of links: when the
// first op fails, the linked one is cancelled with ECANCELED, not run.
func TestLinkBreaksOnFailure(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	pool := newTestPool(t, 1, PageBytes)
	b, _ := pool.Acquire()
	failing := mustSQE(t, r)
	failing.PrepRead(-1, b, 0, 16, 0)
	failing.SetUserData(1)
	failing.Link()
	skipped := mustSQE(t, r)
	skipped.PrepNop()
	skipped.SetUserData(2)
	var others []CQE
	if cqe := waitFor(t, r, 1, &others); cqe.Err() != unix.EBADF {
		t.Fatalf("read of fd -1: %v, want EBADF", cqe.Err())
	}
	pool.Reclaim(b)
	if cqe := waitFor(t, r, 2, &others); cqe.Err() != unix.ECANCELED {
		t.Fatalf("linked NOP after a failure: %v, want ECANCELED", cqe.Err())
	}
}

// TestOpenatWritevReadvClose opens a file through the ring, writes two
// spans with WRITEV, reads them back with READV into swapped buffers, and
// closes the fd through the ring.
func TestOpenatWritevReadvClose(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	name := filepath.Join(t.TempDir(), "vector.dat")
	path, err := NewPath(name)
	if err != nil {
		t.Fatal(err)
	}
	sqe := mustSQE(t, r)
	r.PrepOpenat(sqe, unix.AT_FDCWD, path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o600)
	sqe.SetUserData(1)
	var others []CQE
	cqe := waitFor(t, r, 1, &others)
	if cqe.Res < 0 {
		t.Fatalf("openat: %v", cqe.Err())
	}
	fd := cqe.Res
	pool := newTestPool(t, 4, PageBytes)
	first, _ := pool.Acquire()
	second, _ := pool.Acquire()
	copy(first.Bytes(), "head-")
	copy(second.Bytes(), "tail")
	vec := NewVec(2)
	vec.Add(first, 0, 5)
	vec.Add(second, 0, 4)
	sqe = mustSQE(t, r)
	sqe.PrepWritev(fd, vec, 0)
	sqe.SetUserData(2)
	if cqe := waitFor(t, r, 2, &others); cqe.Res != 9 {
		t.Fatalf("writev: res %d", cqe.Res)
	}
	vec.Reclaim()
	vec.Reset()
	third, _ := pool.Acquire()
	fourth, _ := pool.Acquire()
	vec.Add(third, 0, 4)
	vec.Add(fourth, 0, 5)
	sqe = mustSQE(t, r)
	sqe.PrepReadv(fd, vec, 0)
	sqe.SetUserData(3)
	if cqe := waitFor(t, r, 3, &others); cqe.Res != 9 {
		t.Fatalf("readv: res %d", cqe.Res)
	}
	vec.Reclaim()
	if got := string(third.Bytes()[:4]) + "|" + string(fourth.Bytes()[:5]); got != "head|-tail" {
		t.Fatalf("readv spans %q, want %q", got, "head|-tail")
	}
	sqe = mustSQE(t, r)
	sqe.PrepClose(fd)
	sqe.SetUserData(4)
	if cqe := waitFor(t, r, 4, &others); cqe.Res != 0 {
		t.Fatalf("close: %v", cqe.Err())
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF {
		t.Fatalf("fd %d still open after CLOSE (fcntl: %v)", fd, err)
	}
}

// TestRegisteredFiles writes through a fixed-file slot, then swaps the slot
// to another file with UpdateFiles and writes again: each write must land in
// the file the slot held at the time.
func TestRegisteredFiles(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	dir := t.TempDir()
	files := make([]*os.File, 2)
	for i := range files {
		file, err := os.Create(filepath.Join(dir, []string{"a", "b"}[i]))
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		files[i] = file
	}
	if err := r.RegisterFiles([]int32{-1, int32(files[0].Fd())}); err != nil {
		t.Fatalf("RegisterFiles: %v", err)
	}
	pool := newTestPool(t, 1, PageBytes)
	b, _ := pool.Acquire()
	var others []CQE
	for i, text := range []string{"first", "second"} {
		if i == 1 {
			if err := r.UpdateFiles(1, []int32{int32(files[1].Fd())}); err != nil {
				t.Fatalf("UpdateFiles: %v", err)
			}
		}
		copy(b.Bytes(), text)
		sqe := mustSQE(t, r)
		sqe.PrepWrite(1, b, 0, len(text), 0)
		sqe.SetFlags(FlagFixedFile)
		sqe.SetUserData(uint64(i))
		if cqe := waitFor(t, r, uint64(i), &others); cqe.Res != int32(len(text)) {
			t.Fatalf("write via slot 1: %v (res %d)", cqe.Err(), cqe.Res)
		}
		pool.Reclaim(b)
	}
	for i, want := range []string{"first", "second"} {
		got, err := os.ReadFile(files[i].Name())
		if err != nil || string(got) != want {
			t.Errorf("file %d holds %q (err %v), want %q", i, got, err, want)
		}
	}
	if err := r.UpdateFiles(2, []int32{-1}); err == nil {
		t.Error("UpdateFiles past the table succeeded")
	}
	if err := r.UnregisterFiles(); err != nil {
		t.Fatalf("UnregisterFiles: %v", err)
	}
}

// TestPoolFind maps slices back to their buffers: inside one buffer it must
// find the buffer and offset; across a boundary, outside the pool or empty,
// it must refuse.
func TestPoolFind(t *testing.T) {
	pool := newTestPool(t, 3, PageBytes)
	first, _ := pool.Acquire()
	second, _ := pool.Acquire()
	found, start, ok := pool.Find(second.Bytes()[100:200])
	if !ok || found != second || start != 100 {
		t.Fatalf("Find(second[100:200]) = %v, %d, %v", found.Index(), start, ok)
	}
	if found, start, ok := pool.Find(first.Bytes()); !ok || found != first || start != 0 {
		t.Fatalf("Find(first) = %v, %d, %v", found.Index(), start, ok)
	}
	whole := pool.memory[:2*PageBytes]
	rejects := map[string][]byte{
		"across a boundary": whole[PageBytes-1 : PageBytes+1],
		"outside the pool":  make([]byte, 8),
		"empty":             first.Bytes()[:0],
	}
	for name, data := range rejects {
		if _, _, ok := pool.Find(data); ok {
			t.Errorf("Find accepted a slice %s", name)
		}
	}
}

// TestSparseFixedTrimRefix registers a sparse table, fills one slot,
// writes it with WRITE_FIXED, trims the freed buffer (which must empty its
// slot: the pinned pages would otherwise no longer be the mapping's) and
// fills it again; the second write must carry the bytes written through
// the mapping after the trim, not the pages pinned before it.
func TestSparseFixedTrimRefix(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	fd, name := openDirect(t)
	const blockBytes = 64 << 10
	pool := newTestPool(t, 4, blockBytes)
	if err := r.RegisterBuffersSparse(pool); err != nil {
		t.Fatalf("RegisterBuffersSparse: %v", err)
	}
	t.Cleanup(func() {
		if err := r.UnregisterBuffers(); err != nil {
			t.Errorf("UnregisterBuffers: %v", err)
		}
	})
	var others []CQE
	var want []byte
	for round := range 2 {
		buf, _ := pool.Acquire()
		if buf.Fixed() {
			t.Fatalf("round %d: buffer %d in the table before Fix", round, buf.Index())
		}
		if err := buf.Fix(); err != nil {
			t.Fatalf("Fix: %v", err)
		}
		if !buf.Fixed() || buf.FixedIndex() != buf.Index() {
			t.Fatalf("round %d: fixed %v, index %d", round, buf.Fixed(), buf.FixedIndex())
		}
		fillSeeded(t, buf.Bytes(), uint64(round+7))
		want = append(want[:0], buf.Bytes()...)
		sqe := mustSQE(t, r)
		sqe.PrepWriteFixed(fd, buf, 0, blockBytes, 0)
		sqe.SetUserData(uint64(round))
		if cqe := waitFor(t, r, uint64(round), &others); cqe.Res != blockBytes {
			t.Fatalf("round %d: WRITE_FIXED res %d", round, cqe.Res)
		}
		pool.Reclaim(buf)
		pool.Release(buf)
		if trimmed := pool.Trim(); trimmed != 4*blockBytes {
			t.Fatalf("round %d: trimmed %d bytes, want %d", round, trimmed, 4*blockBytes)
		}
	}
	onDisk, err := os.ReadFile(name)
	if err != nil || !bytes.Equal(onDisk, want) {
		t.Fatalf("file differs from the second round's bytes (err %v, %d bytes)", err, len(onDisk))
	}
}
