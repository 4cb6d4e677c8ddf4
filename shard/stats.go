package shard

import "sync/atomic"

// Stats are a shard's counters since start. The shard's thread writes
// them; any thread may read them (Shard.Stats) for metrics and tests.
type Stats struct {
	ConnsAdopted  uint64 // connections the shard took ownership of
	ConnsClosed   uint64 // connections it closed
	ConnsMovedIn  uint64 // connections other shards moved here (their partitions are here)
	ConnsMovedOut uint64 // connections it moved to the shard owning their partitions
	FramesIn      uint64 // whole frames handed to the Handler
	BytesIn       uint64 // bytes received on connections
	BytesDirect   uint64 // of BytesIn, bytes received straight into frame buffers (no copy)
	BytesRoom     uint64 // of BytesDirect, bytes received straight into a streamed batch's journal
	BytesOut      uint64 // bytes sent on connections
	SendsPartial  uint64 // sends that wrote less than asked and were resumed
	SendsJoined   uint64 // sends that carried several queued replies copied into one buffer
	BytesInPlace  uint64 // of the poll replies queued, bytes to go out straight from the cache (no copy)
	SpansPinned   uint64 // now: cache records pinned by poll replies not yet sent (a gauge)
	RepliesCopied uint64 // poll replies whose records were copied out of the cache to unpin them (evacuate)
	RecvsInto     uint64 // receives straight into a large frame's buffer
	Pauses        uint64 // times a connection stopped reading at its in-flight limit
	MessagesIn    uint64 // cross-shard messages delivered to OnMessage
	Trims         uint64 // idle stretches in which the shard gave back free buffers' memory
	// StreamsOpened counts SendMessages batches appended while they
	// arrived; StreamsAborted those of them that ended without storing:
	// appended whole after all, answered as an invalid batch, or dropped
	// with their request (data_stream.go).
	StreamsOpened  uint64
	StreamsAborted uint64
	// The shard's cache as of its last data tick (gauges, but the
	// evictions): records alive, their bytes, the arena memory claimed
	// from the shared budget, and records evicted since the start.
	CacheRecords       uint64
	CacheBytes         uint64
	CacheCapacityBytes uint64
	CacheEvicted       uint64

	// io_uring only: file reads and writes by buffer kind, and Allocs the
	// pools could not serve.
	FixedFileOps uint64 // file reads/writes on registered buffers (READ_FIXED/WRITE_FIXED)
	PlainFileOps uint64 // file reads/writes with plain READ/WRITE (small class, or no fixed slot)
	AllocsHeap   uint64 // Allocs served from the Go heap: the size class's pool was spent
	// InPlaceFileOps counts file writes from memory outside the pools
	// (the cache's arena), handed to the kernel without a bounce copy.
	InPlaceFileOps uint64
}

// stats is Stats with atomic fields. Only the owning thread writes, so
// each increment is a load and a store, never a locked read-modify-write.
type stats struct {
	connsAdopted, connsClosed, framesIn, bytesIn atomic.Uint64
	bytesOut, sendsPartial, pauses, messagesIn   atomic.Uint64
	recvsInto, bytesDirect, trims, sendsJoined   atomic.Uint64
	fixedFileOps, plainFileOps, allocsHeap       atomic.Uint64
	inPlaceFileOps, bytesRoom                    atomic.Uint64
	connsMovedIn, connsMovedOut, bytesInPlace    atomic.Uint64
	spansPinned, repliesCopied                   atomic.Uint64
	streamsOpened, streamsAborted                atomic.Uint64
	cacheRecords, cacheBytes, cacheCapacity      atomic.Uint64
	cacheEvicted                                 atomic.Uint64
}

func bump(counter *atomic.Uint64, by int) { counter.Store(counter.Load() + uint64(by)) }

// Stats returns a snapshot of the shard's counters; any thread.
func (sh *Shard) Stats() Stats {
	s := &sh.stats
	return Stats{
		ConnsAdopted: s.connsAdopted.Load(), ConnsClosed: s.connsClosed.Load(),
		ConnsMovedIn: s.connsMovedIn.Load(), ConnsMovedOut: s.connsMovedOut.Load(),
		FramesIn: s.framesIn.Load(), BytesIn: s.bytesIn.Load(),
		BytesOut: s.bytesOut.Load(), SendsPartial: s.sendsPartial.Load(), SendsJoined: s.sendsJoined.Load(),
		Pauses: s.pauses.Load(), MessagesIn: s.messagesIn.Load(),
		RecvsInto: s.recvsInto.Load(), BytesDirect: s.bytesDirect.Load(), BytesRoom: s.bytesRoom.Load(),
		Trims: s.trims.Load(), FixedFileOps: s.fixedFileOps.Load(),
		PlainFileOps: s.plainFileOps.Load(), AllocsHeap: s.allocsHeap.Load(),
		InPlaceFileOps: s.inPlaceFileOps.Load(),
		StreamsOpened:  s.streamsOpened.Load(), StreamsAborted: s.streamsAborted.Load(),
		BytesInPlace: s.bytesInPlace.Load(), SpansPinned: s.spansPinned.Load(),
		RepliesCopied: s.repliesCopied.Load(),
		CacheRecords:  s.cacheRecords.Load(), CacheBytes: s.cacheBytes.Load(),
		CacheCapacityBytes: s.cacheCapacity.Load(), CacheEvicted: s.cacheEvicted.Load(),
	}
}
