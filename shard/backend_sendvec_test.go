package shard

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"
)

// TestBackendSendVec: a vectored send of spans from memory outside the Go
// heap (an mmap, as the cache's arena), an Alloc'd buffer and a heap
// slice arrives byte for byte, resumed from the right piece and offset
// after each partial send; a vectored send stuck on a full socket ends
// with ECANCELED when cancelled, having sent nothing. Both backends.
func TestBackendSendVec(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		onBackendThread(t, backend, func(b Backend) {
			arena := sendVecArena(t, 7)
			head := b.Alloc(272)
			copy(head, bytes.Repeat([]byte("h"), 272))
			spans := [][]byte{head, arena[:300<<10], []byte("between"), arena[500<<10 : 900<<10], arena[1000 : 1000+77]}
			want := bytes.Join(spans, nil)
			checkSendVecWhole(t, b, spans, want)
			checkSendVecCancel(t, b, spans)
			b.Free(head)
		})
	})
}

// sendVecArena maps 1 MiB outside the Go heap, as the cache's arena is,
// fills it with byte(index*stride) and unmaps it at the test's end.
func sendVecArena(t *testing.T, stride int) []byte {
	t.Helper()
	arena, err := unix.Mmap(-1, 0, 1<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Munmap(arena) })
	for index := range arena {
		arena[index] = byte(index * stride)
	}
	return arena
}

// sendVecPair is a socket pair with small buffers (so sends go partial),
// the sending side nonblocking as epoll's contract wants.
func sendVecPair(t *testing.T) [2]int {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	_ = unix.SetsockoptInt(pair[0], unix.SOL_SOCKET, unix.SO_SNDBUF, 16<<10)
	_ = unix.SetNonblock(pair[0], true)
	return [2]int{pair[0], pair[1]}
}

func checkSendVecWhole(t *testing.T, b Backend, spans [][]byte, want []byte) {
	pair := sendVecPair(t)
	defer unix.Close(pair[0])
	received := make(chan []byte, 1)
	go func() {
		var got []byte
		buffer := make([]byte, 64<<10)
		for len(got) < len(want) {
			n, err := unix.Read(pair[1], buffer)
			if n <= 0 || err != nil {
				break
			}
			got = append(got, buffer[:n]...)
		}
		received <- got
	}()
	defer unix.Close(pair[1])
	sent, partial := 0, 0
	for token := uint64(100); sent < len(want); token++ {
		pieces := piecesFrom(spans, sent)
		if err := b.SendVec(pair[0], pieces, token); err != nil {
			t.Fatal(err)
		}
		got := waitFor(t, b, token)
		if got.Errno != 0 || got.Result <= 0 {
			t.Fatalf("vectored send at %d: %+v", sent, got)
		}
		sent += got.Result
		if sent < len(want) {
			partial++
		}
	}
	if got := <-received; !bytes.Equal(got, want) {
		t.Fatalf("received %d bytes, not the %d sent", len(got), len(want))
	}
	if partial == 0 {
		t.Fatal("no send went partial: the resume path was not exercised")
	}
}

func checkSendVecCancel(t *testing.T, b Backend, spans [][]byte) {
	pair := sendVecPair(t)
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	filler := make([]byte, 64<<10)
	for { // fill the socket: nobody reads
		if _, err := unix.Write(pair[0], filler); err != nil {
			break
		}
	}
	if err := b.SendVec(pair[0], spans, 200); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Wait(make([]Completion, 4), 0); err != nil { // submit it; the socket stays full
		t.Fatal(err)
	}
	_ = b.Cancel(pair[0], 200)
	if got := waitFor(t, b, 200); got.Errno != unix.ECANCELED || got.Result != 0 {
		t.Fatalf("a cancelled vectored send on a full socket ended with %+v", got)
	}
}

// piecesFrom is what is left of spans from offset on, cut the way
// outgoing.vectors cuts a reply.
func piecesFrom(spans [][]byte, offset int) [][]byte {
	var pieces [][]byte
	for _, span := range spans {
		pieces = appendPiece(pieces, span, &offset)
	}
	return pieces
}

// TestBackendSendVecMaxPieces: a vectored send of sendSpansMax pieces
// (a poll reply with pollSpansMax spans and the buffer around them), from
// arena memory and pool buffers, arrives whole on both backends, resumed
// after partial sends at the right piece and offset.
func TestBackendSendVecMaxPieces(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		onBackendThread(t, backend, func(b Backend) {
			arena := sendVecArena(t, 13)
			head := b.Alloc(sendSpansMax * 100)
			for index := range head {
				head[index] = byte(index * 3)
			}
			spans := make([][]byte, 0, sendSpansMax)
			for index := range sendSpansMax {
				if index%2 == 0 {
					spans = append(spans, head[index*100:index*100+1+index])
				} else {
					spans = append(spans, arena[index*7000:index*7000+1000+index*37])
				}
			}
			checkSendVecWhole(t, b, spans, bytes.Join(spans, nil))
			b.Free(head)
		})
	})
}
