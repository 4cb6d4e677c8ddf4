package ring

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkNOP measures submit + reap of NOPs in batches: one iteration is
// one batch (prepare, SubmitAndWait for all, reap all). ops/s counts NOPs.
func BenchmarkNOP(b *testing.B) {
	for _, batch := range []int{1, 32, 256} {
		b.Run("batch="+strconv.Itoa(batch), func(b *testing.B) {
			r := newTestRing(b, Options{SQEntries: 256})
			var completions [CompletionsPerReapMax]CQE
			b.ReportAllocs()
			cpuStart := threadCPU(b)
			for b.Loop() {
				for range batch {
					sqe, _ := r.SQE()
					sqe.PrepNop()
				}
				if _, err := r.SubmitAndWait(uint32(batch), 0); err != nil {
					b.Fatal(err)
				}
				if got := r.ReapInto(completions[:]); got != batch {
					b.Fatalf("reaped %d of %d", got, batch)
				}
			}
			cpu := threadCPU(b) - cpuStart
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "ops/s")
			if cpu > 0 {
				// On a shared machine wall time includes waiting for a CPU;
				// ops per CPU-second of the ring's thread is the per-core rate.
				b.ReportMetric(float64(b.N*batch)/cpu.Seconds(), "ops/cpu-s")
			}
		})
	}
}

// BenchmarkODirectWrite1MiB writes 1 MiB blocks sequentially to an
// O_DIRECT file with WRITE_FIXED, 8 in flight (fio --bs=1M --iodepth=8
// --direct=1 --rw=write). One iteration is one completed 1 MiB write. The
// file wraps at 2 GiB, like fio --size=2G. "preallocated" fallocates the
// file first, as fio lays out its file by default; "fresh" allocates blocks
// as it writes (fio --fallocate=none).
func BenchmarkODirectWrite1MiB(b *testing.B) {
	for _, preallocate := range []bool{true, false} {
		name := map[bool]string{true: "preallocated", false: "fresh"}[preallocate]
		b.Run(name, func(b *testing.B) { benchmarkODirectWrite(b, preallocate) })
	}
}

func benchmarkODirectWrite(b *testing.B, preallocate bool) {
	const blockBytes, depth, fileBytes = 1 << 20, 8, 2 << 30
	r := newTestRing(b, Options{SQEntries: 16})
	name := filepath.Join(b.TempDir(), "odirect.dat")
	fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_DIRECT|unix.O_CLOEXEC, 0o600)
	if err == unix.EINVAL {
		b.Skipf("O_DIRECT not supported under %s", name)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(fd)
	if preallocate {
		if err := unix.Fallocate(fd, 0, 0, fileBytes); err != nil {
			b.Skipf("fallocate: %v", err)
		}
	}
	pool, err := NewPool(depth, blockBytes)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if err := r.RegisterBuffers(pool); err != nil {
		b.Fatal(err)
	}
	defer r.UnregisterBuffers()
	buffers := make([]Buf, depth)
	for i := range buffers {
		buffers[i], _ = pool.Acquire()
		for j := range buffers[i].Bytes() {
			buffers[i].Bytes()[j] = byte(i + j)
		}
	}
	writer := directWriter{ring: r, fd: int32(fd), buffers: buffers, wrapBytes: fileBytes}
	b.SetBytes(blockBytes)
	for b.Loop() {
		writer.completeOne(b)
	}
	writer.drain(b)
}

// directWriter keeps depth WRITE_FIXED in flight; the tag of each is its
// buffer index.
type directWriter struct {
	ring      *Ring
	fd        int32
	buffers   []Buf
	inFlight  int
	started   bool
	position  uint64
	wrapBytes uint64
}

func (w *directWriter) start(b *testing.B, buffer Buf) {
	sqe, ok := w.ring.SQE()
	if !ok {
		b.Fatal("SQ full")
	}
	sqe.PrepWriteFixed(w.fd, buffer, 0, buffer.pool.BufferBytes(), w.position)
	sqe.SetUserData(uint64(buffer.Index()))
	w.position = (w.position + uint64(buffer.pool.BufferBytes())) % w.wrapBytes
	w.inFlight++
}

// completeOne waits for one write, checks it, and starts the next in its
// buffer.
func (w *directWriter) completeOne(b *testing.B) {
	if !w.started {
		for _, buffer := range w.buffers {
			w.start(b, buffer)
		}
		w.started = true
	}
	// Refills go to the kernel before the next completion is taken, so the
	// queue depth stays at its target; with CQEs still unreaped the wait
	// returns at once.
	var completion [1]CQE
	if w.ring.SQPending() > 0 || w.ring.CQReady() == 0 {
		if _, err := w.ring.SubmitAndWait(1, 10*time.Second); err != nil {
			b.Fatal(err)
		}
	}
	for w.ring.ReapInto(completion[:]) == 0 {
		if _, err := w.ring.SubmitAndWait(1, 10*time.Second); err != nil {
			b.Fatal(err)
		}
	}
	w.inFlight--
	buffer := w.buffers[completion[0].UserData]
	if completion[0].Res != int32(buffer.pool.BufferBytes()) {
		b.Fatalf("write: res %d (%v)", completion[0].Res, completion[0].Err())
	}
	buffer.pool.Reclaim(buffer)
	w.start(b, buffer)
}

// drain waits for the writes still in flight.
func (w *directWriter) drain(b *testing.B) {
	var completions [8]CQE
	for w.inFlight > 0 {
		if _, err := w.ring.SubmitAndWait(1, 10*time.Second); err != nil {
			b.Fatal(err)
		}
		count := w.ring.ReapInto(completions[:])
		for _, cqe := range completions[:count] {
			buffer := w.buffers[cqe.UserData]
			buffer.pool.Reclaim(buffer)
		}
		w.inFlight -= count
	}
}

// threadCPU is the user plus system time of the calling thread (the test
// ring locks the benchmark goroutine to it).
func threadCPU(b *testing.B) time.Duration {
	var usage unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &usage); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}
