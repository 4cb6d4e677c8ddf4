package shard

import (
	"time"
	"unsafe"

	"github.com/whippetio/whippet/internal/invariant"
)

// startTimers sets the shard's partition tick and retention timers.
func (ds *DataShard) startTimers() {
	options := &ds.data.options
	if _, err := ds.shard.Every(options.TickInterval, ds.tick); err != nil {
		ds.shard.fail(err)
		return
	}
	if _, err := ds.shard.Every(options.MaintenanceInterval, func(time.Time) {
		ds.maintain(options.Now())
	}); err != nil {
		ds.shard.fail(err)
	}
}

// OnStop closes sh's partitions: it waits for the ones still recovering,
// then closes each (its writes drain and its active segment is synced, so
// a clean stop loses nothing under any durability). OnStop runs after
// every shard drained its connections, when the loop no longer turns, so
// it drives the shard's completions itself (Drive) for at most
// dataStopTimeout.
func (d *Data) OnStop(sh *Shard) {
	ds := d.shards[sh.ID()]
	if ds == nil {
		return
	}
	ds.stopping = true
	if !ds.Drive(func() bool { return ds.openingCount() == 0 }, dataStopTimeout) {
		d.logger.Error("shard: partitions still recovering at stop", "shard", sh.id)
	}
	var closing []*dataPartition
	for _, p := range ds.partitions {
		ds.unpark(p) // parked ops run before the close (it waits for them)
		if p.state != partitionOpen {
			continue
		}
		closing = append(closing, p)
		p.state = partitionClosing
		p.part.Close(func(err error) {
			p.state = partitionClosed
			if err != nil {
				d.logger.Error("shard: partition close", "partition", p.key.String(), "err", err.Error())
			}
		})
	}
	tickLast := time.Now()
	closed := func() bool {
		left := 0
		for _, p := range closing {
			if p.state == partitionClosing {
				left++
			}
		}
		if left > 0 && time.Since(tickLast) >= d.options.TickInterval {
			// A memory-durability write stalled by a full disk holds its
			// Close until a Tick writes it: those batches were acknowledged.
			tickLast = time.Now()
			for _, p := range closing {
				if p.state == partitionClosing {
					p.part.Tick()
				}
			}
		}
		return left == 0 && ds.storage.Pending() == 0
	}
	if !ds.Drive(closed, dataStopTimeout) {
		d.logger.Error("shard: partitions not closed at stop", "shard", sh.id)
		return // what is still in flight keeps its memory
	}
	// The cache and the closed partitions' buffers go back to the garbage
	// collector even while something still holds the Data (a test, a
	// process restarting its runtime).
	clear(ds.partitions)
	if ds.drainTimer != 0 {
		ds.shard.Stop(ds.drainTimer)
		ds.drainTimer = 0
	}
	if ds.cache != nil {
		ds.cache.Release() // the journals it holds go back to the shard's pools
	}
	ds.cache = nil
}

func (ds *DataShard) openingCount() int {
	count := 0
	for _, p := range ds.partitions {
		if p.state == partitionOpening {
			count++
		}
	}
	return count
}

// Drive runs the shard's completions and the storage's deliveries until
// done reports true or timeout passes, and reports whether done. It is for
// OnStop callbacks, which run when the loop no longer turns (closing a
// metadata store, flushing partitions); elsewhere the loop does this.
func (ds *DataShard) Drive(done func() bool, timeout time.Duration) bool {
	sh := ds.shard
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			return false
		}
		ds.storage.deliver()
		if done() {
			return true
		}
		wait := dataStopWait
		if ds.storage.Pending() > ds.storage.inflight {
			wait = 0 // deliveries queued: poll, do not block
		}
		count, err := sh.backend.Wait(sh.completions, wait)
		if err != nil {
			sh.fail(err)
			return false
		}
		for i := range count {
			sh.dispatch(&sh.completions[i])
			sh.completions[i] = Completion{}
		}
	}
	return true
}

// blockAligned reports whether buffer starts on a 4096-byte boundary, as
// O_DIRECT requires.
func blockAligned(buffer []byte) bool {
	return len(buffer) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(buffer)))&4095 == 0
}

// alignedHeap returns size bytes of Go memory starting on a 4096-byte
// boundary.
func alignedHeap(size int) []byte {
	invariant.Assert(size > 0 && size%4096 == 0, "aligned size is whole blocks")
	raw := make([]byte, size+4096)
	shift := (4096 - int(uintptr(unsafe.Pointer(&raw[0]))&4095)) & 4095
	return raw[shift : shift+size : shift+size]
}

// armDrain starts copying the cache's held journals at the next loop
// turns: the copy of a written batch into the cache runs after its
// acknowledgement went out, a slice per turn, never inside a request.
func (ds *DataShard) armDrain() {
	if ds.drainTimer != 0 {
		return
	}
	id, err := ds.shard.Every(dataDrainPeriod, ds.drainFn)
	if err != nil {
		ds.cache.Drain(dataDrainAllBytes) // no timer to spare: copy now
		return
	}
	ds.drainTimer = id
}

func (ds *DataShard) drain() {
	if ds.cache.Drain(dataDrainBytesPerTurn) {
		return
	}
	ds.shard.Stop(ds.drainTimer)
	ds.drainTimer = 0
}
