package shard

import (
	"testing"
	"time"
)

// TestIdleTrim checks that a shard gives back the pages of its free
// buffers once it idles: after 1 MiB echoes fault in a 2 MiB buffer class
// (io_uring), an idle stretch brings a trim (Stats.Trims) and leaves none
// of that class's pages resident (mincore, through Pool.ResidentBytes,
// read only after the trim counter, which the shard bumps after trimming).
func TestIdleTrim(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		server := startEcho(t, Options{Backend: backend, CPUs: firstCPU(t)}, 0)
		sh := server.runtime.Shards()[0]
		conn := server.dial(t)
		frame := makeFrame(echoFrameBytes, 5)
		buf := make([]byte, len(frame))
		before := sh.Stats().Trims
		for range 4 {
			if err := echoOnce(conn, frame, buf); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for sh.Stats().Trims == before {
			if time.Now().After(deadline) {
				t.Fatal("an idle shard did not trim")
			}
			time.Sleep(idleTrimDelay / 4) // the trim runs on the shard's own clock
		}
		uring, ok := sh.backend.(*uringBackend)
		if !ok {
			return
		}
		class := &uring.memory.classes[uringClassOf(len(frame))]
		if class.pool == nil {
			t.Fatal("1 MiB echoes left their buffer class unmapped")
		}
		resident := class.pool.ResidentBytes()
		if resident != 0 {
			t.Fatalf("after an idle trim %d bytes of the frame class stay resident, want 0", resident)
		}
	})
}
