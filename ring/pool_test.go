package ring

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestPoolResidentOnTouch checks that pool and buffer-ring memory is not
// populated at map time: an idle broker must not hold every buffer its
// limits allow in RAM. Method: mincore(2) reports which pages of the
// mapping are resident, before and after touching one buffer.
func TestPoolResidentOnTouch(t *testing.T) {
	const count, bufferBytes = 64, 64 << 10
	pool, err := NewPool(count, bufferBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if got := pool.ResidentBytes() / PageBytes; got != 0 {
		t.Fatalf("fresh pool: %d pages resident, want 0", got)
	}
	buf, ok := pool.Acquire()
	if !ok {
		t.Fatal("acquire from a fresh pool")
	}
	bytes := buf.Bytes()
	for i := 0; i < len(bytes); i += PageBytes {
		bytes[i] = 1
	}
	if got, want := pool.ResidentBytes()/PageBytes, bufferBytes/PageBytes; got != want {
		t.Fatalf("one buffer touched: %d pages resident, want %d", got, want)
	}
	pool.Release(buf)

	r := newTestRing(t, Options{})
	if !probeOrSkip(t).BufferRings {
		t.Skip("io_uring lacks provided-buffer rings (Linux 5.19)")
	}
	br, err := r.NewBufRing(count, bufferBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = br.Close() }()
	if got := residentPages(t, br.memory); got != 0 {
		t.Fatalf("fresh buffer ring: %d pages resident, want 0", got)
	}
}

func residentPages(t *testing.T, memory []byte) int {
	t.Helper()
	vector := make([]byte, len(memory)/PageBytes)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&memory[0])), uintptr(len(memory)),
		uintptr(unsafe.Pointer(&vector[0])))
	if errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	resident := 0
	for _, page := range vector {
		resident += int(page & 1)
	}
	return resident
}

// TestPoolTrim checks that Trim gives back the pages of free buffers and
// keeps those of a held buffer, whose bytes survive.
func TestPoolTrim(t *testing.T) {
	const count, bufferBytes = 8, 4 * PageBytes
	pool, err := NewPool(count, bufferBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var held []Buf
	for range count {
		buf, _ := pool.Acquire()
		for i := range buf.Bytes() {
			buf.Bytes()[i] = 7
		}
		held = append(held, buf)
	}
	for _, buf := range held[1:] {
		pool.Release(buf)
	}
	if got := pool.ResidentBytes() / PageBytes; got != count*bufferBytes/PageBytes {
		t.Fatalf("all touched: %d pages resident, want %d", got, count*bufferBytes/PageBytes)
	}
	if got, want := pool.Trim(), (count-1)*bufferBytes; got != want {
		t.Fatalf("Trim advised %d bytes, want %d", got, want)
	}
	if got := pool.ResidentBytes() / PageBytes; got != bufferBytes/PageBytes {
		t.Fatalf("after Trim: %d pages resident, want the held buffer's %d", got, bufferBytes/PageBytes)
	}
	if held[0].Bytes()[bufferBytes-1] != 7 {
		t.Fatal("Trim changed a held buffer")
	}
	again, _ := pool.Acquire()
	if again.Bytes()[0] != 0 {
		t.Fatal("a trimmed buffer does not read as zeros")
	}
	pool.Release(again)
	pool.Release(held[0])
}
