package shard

import (
	"runtime"
	"sync"
	"testing"
)

// spscTransferCount is how many items TestQueueTransfer moves: the full
// 10M, or a tenth in -short runs under the race detector's slowdown.
func spscTransferCount() uint64 {
	if testing.Short() && raceEnabled {
		return 1_000_000
	}
	return 10_000_000
}

// testCPUs returns the CPUs the two sides of a transfer are pinned to:
// distinct ones when the process may use two.
func testCPUs(t testing.TB) (producer, consumer int) {
	t.Helper()
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	return cpus[0], cpus[len(cpus)-1]
}

// TestQueueTransfer moves a counted sequence between two pinned threads
// and checks that every item arrives once and in order, through both the
// single-item and the batch calls, with a small queue so that the producer
// often finds it full.
func TestQueueTransfer(t *testing.T) {
	for _, batch := range []bool{false, true} {
		name := map[bool]string{false: "single", true: "batch"}[batch]
		t.Run(name, func(t *testing.T) {
			count := spscTransferCount()
			if batch {
				count *= 2
			}
			queue := NewQueue[uint64](1024)
			producerCPU, consumerCPU := testCPUs(t)
			var wait sync.WaitGroup
			wait.Add(1)
			go func() {
				defer wait.Done()
				produce(t, queue, producerCPU, count, batch)
			}()
			got := consume(t, queue, consumerCPU, count, batch)
			wait.Wait()
			if got != count {
				t.Fatalf("consumed %d items, want %d", got, count)
			}
			if queue.Len() != 0 {
				t.Fatalf("queue holds %d items after the transfer", queue.Len())
			}
		})
	}
}

func produce(t testing.TB, queue *Queue[uint64], cpu int, count uint64, batch bool) {
	if err := pinThread(cpu); err != nil {
		t.Error(err)
		return
	}
	var items [64]uint64
	idle := 0
	for next := uint64(0); next < count; {
		if !batch {
			if queue.Push(next) {
				next++
			} else {
				backoff(&idle)
			}
			continue
		}
		size := min(uint64(len(items)), count-next)
		for i := range size {
			items[i] = next + i
		}
		pushed := queue.PushBatch(items[:size])
		if pushed == 0 {
			backoff(&idle)
		}
		next += uint64(pushed)
	}
}

// consume returns how many items arrived in order; it stops at the first
// item out of order.
func consume(t testing.TB, queue *Queue[uint64], cpu int, count uint64, batch bool) uint64 {
	if err := pinThread(cpu); err != nil {
		t.Fatal(err)
	}
	var items [64]uint64
	idle := 0
	next := uint64(0)
	for next < count {
		if !batch {
			item, ok := queue.Pop()
			if !ok {
				backoff(&idle)
				continue
			}
			if item != next {
				t.Errorf("popped %d, want %d", item, next)
				return next
			}
			next++
			continue
		}
		popped := queue.PopBatch(items[:])
		if popped == 0 {
			backoff(&idle)
		}
		for _, item := range items[:popped] {
			if item != next {
				t.Errorf("popped %d, want %d", item, next)
				return next
			}
			next++
		}
	}
	return next
}

// backoff retries at once a few times (the other side, on its own CPU, is
// about to move), then yields, which also keeps a single-CPU run going.
func backoff(idle *int) {
	*idle++
	if *idle%128 == 0 {
		runtime.Gosched()
	}
}

// TestQueueFullAppliesBackpressure checks that a full queue refuses items
// without overwriting any, and accepts again once the consumer frees a slot.
func TestQueueFullAppliesBackpressure(t *testing.T) {
	queue := NewQueue[int](4)
	for i := range 4 {
		if !queue.Push(i) {
			t.Fatalf("push %d refused by a queue with free slots", i)
		}
	}
	if queue.Push(99) {
		t.Fatal("push accepted by a full queue")
	}
	if n := queue.PushBatch([]int{7, 8}); n != 0 {
		t.Fatalf("batch push into a full queue appended %d", n)
	}
	if item, ok := queue.Pop(); !ok || item != 0 {
		t.Fatalf("pop = %d, %v; want 0, true", item, ok)
	}
	if n := queue.PushBatch([]int{4, 5}); n != 1 {
		t.Fatalf("batch push with one free slot appended %d, want 1", n)
	}
	out := make([]int, 8)
	n := queue.PopBatch(out)
	if want := []int{1, 2, 3, 4}; n != 4 || !equalInts(out[:n], want) {
		t.Fatalf("drained %v, want %v", out[:n], want)
	}
	if _, ok := queue.Pop(); ok {
		t.Fatal("pop from an empty queue succeeded")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// BenchmarkQueueHandoff measures items per second moved between two pinned
// threads, one item per Push and Pop, and in batches of 64.
func BenchmarkQueueHandoff(b *testing.B) {
	for _, batch := range []bool{false, true} {
		name := map[bool]string{false: "single", true: "batch64"}[batch]
		b.Run(name, func(b *testing.B) {
			queue := NewQueue[uint64](4096)
			producerCPU, consumerCPU := testCPUs(b)
			count := uint64(b.N)
			b.ReportAllocs()
			b.ResetTimer()
			var wait sync.WaitGroup
			wait.Add(1)
			go func() {
				defer wait.Done()
				produce(b, queue, producerCPU, count, batch)
			}()
			got := consume(b, queue, consumerCPU, count, batch)
			wait.Wait()
			b.StopTimer()
			if got != count {
				b.Fatalf("consumed %d, want %d", got, count)
			}
			b.ReportMetric(float64(count)/b.Elapsed().Seconds()/1e6, "Mitems/s")
		})
	}
}
