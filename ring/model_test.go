package ring

import (
	"bytes"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var modelSeed = flag.Uint64("ring.seed", 0, "seed for TestRandomFileOpsAgainstModel (0: derive from the clock)")

// TestRandomFileOpsAgainstModel drives a small ring (8 SQEs, 16 CQEs, so
// both wrap hundreds of times) with seeded random rounds of writes to
// distinct blocks, reads of random blocks and fdatasyncs, reaping in random
// slice sizes, and checks every read against a byte model of the file and
// every buffer's ownership at the end. The seed is logged; -ring.seed
// replays it.
func TestRandomFileOpsAgainstModel(t *testing.T) {
	seed := *modelSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -ring.seed=%d)", seed, seed)
	random := rand.New(rand.NewPCG(seed, 0x5eed))
	rounds := 300
	if !testing.Short() {
		rounds = 30_000
	}
	r := newTestRing(t, Options{SQEntries: 8, CQEntries: 16})
	file, err := os.Create(filepath.Join(t.TempDir(), "model.dat"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	harness := modelHarness{t: t, ring: r, fd: int32(file.Fd()), random: random,
		pool: newTestPool(t, 12, PageBytes), model: make([]byte, modelBlocks*PageBytes)}
	for range rounds {
		harness.writeRound()
		harness.readRound()
	}
	if lent := harness.pool.LentCount(); lent != 0 {
		t.Fatalf("%d buffers lent after every round completed", lent)
	}
}

const modelBlocks = 64

type modelHarness struct {
	t      *testing.T
	ring   *Ring
	fd     int32
	random *rand.Rand
	pool   *Pool
	model  []byte
	tags   [16]Buf // in-flight op tag → its buffer
	blocks [16]int // in-flight op tag → its block
	batch  [CompletionsPerReapMax]CQE
}

// writeRound writes random bytes to up to 12 distinct random blocks, in one
// of four rounds with an fdatasync alongside, and waits for all.
func (h *modelHarness) writeRound() {
	count := 1 + h.random.IntN(h.pool.Len())
	order := h.random.Perm(modelBlocks)[:count]
	for tag, block := range order {
		buffer, ok := h.pool.Acquire()
		if !ok {
			h.t.Fatal("pool empty at the start of a round")
		}
		for i := range buffer.Bytes() {
			buffer.Bytes()[i] = byte(h.random.Uint32())
		}
		copy(h.model[block*PageBytes:], buffer.Bytes())
		h.tags[tag], h.blocks[tag] = buffer, block
		sqe := h.sqe()
		sqe.PrepWrite(h.fd, buffer, 0, PageBytes, uint64(block*PageBytes))
		sqe.SetUserData(uint64(tag))
	}
	if h.random.IntN(4) == 0 {
		sqe := h.sqe()
		sqe.PrepFsync(h.fd, FsyncDatasync)
		sqe.SetUserData(uint64(len(h.tags) - 1))
		count++
	}
	h.await(count, func(cqe CQE) {
		if cqe.UserData == uint64(len(h.tags)-1) {
			if cqe.Res != 0 {
				h.t.Fatalf("fdatasync: %v", cqe.Err())
			}
			return
		}
		if cqe.Res != PageBytes {
			h.t.Fatalf("write of block %d: res %d", h.blocks[cqe.UserData], cqe.Res)
		}
		h.pool.Reclaim(h.tags[cqe.UserData])
		h.pool.Release(h.tags[cqe.UserData])
	})
}

// readRound reads up to 12 random blocks and compares each with the model.
func (h *modelHarness) readRound() {
	count := 1 + h.random.IntN(h.pool.Len())
	for tag := range count {
		buffer, _ := h.pool.Acquire()
		block := h.random.IntN(modelBlocks)
		h.tags[tag], h.blocks[tag] = buffer, block
		sqe := h.sqe()
		sqe.PrepRead(h.fd, buffer, 0, PageBytes, uint64(block*PageBytes))
		sqe.SetUserData(uint64(tag))
	}
	h.await(count, func(cqe CQE) {
		buffer, block := h.tags[cqe.UserData], h.blocks[cqe.UserData]
		h.pool.Reclaim(buffer)
		want := h.model[block*PageBytes : (block+1)*PageBytes]
		if int(cqe.Res) > len(want) || cqe.Res < 0 {
			h.t.Fatalf("read of block %d: res %d", block, cqe.Res)
		}
		// Blocks never written read short (end of file) or as zeros.
		if !bytes.Equal(buffer.Bytes()[:cqe.Res], want[:cqe.Res]) || (cqe.Res < PageBytes && !zero(want[cqe.Res:])) {
			h.t.Fatalf("block %d read back differs from the model", block)
		}
		h.pool.Release(buffer)
	})
}

// sqe returns an SQE, submitting first when the SQ is full.
func (h *modelHarness) sqe() *SQE {
	if sqe, ok := h.ring.SQE(); ok {
		return sqe
	}
	if _, err := h.ring.Submit(); err != nil {
		h.t.Fatalf("Submit: %v", err)
	}
	sqe, ok := h.ring.SQE()
	if !ok {
		h.t.Fatal("SQ still full after a submit")
	}
	return sqe
}

// await submits and reaps, in random slice sizes, until count CQEs arrived.
func (h *modelHarness) await(count int, handle func(CQE)) {
	for count > 0 {
		if _, err := h.ring.SubmitAndWait(1, waitTimeout); err != nil {
			h.t.Fatalf("SubmitAndWait with %d outstanding: %v", count, err)
		}
		reaped := h.ring.ReapInto(h.batch[:1+h.random.IntN(4)])
		for _, cqe := range h.batch[:reaped] {
			handle(cqe)
		}
		count -= reaped
	}
	if count < 0 {
		h.t.Fatalf("%d more CQEs than operations", -count)
	}
}

func zero(data []byte) bool {
	for _, value := range data {
		if value != 0 {
			return false
		}
	}
	return true
}
