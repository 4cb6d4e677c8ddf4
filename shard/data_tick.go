package shard

import "time"

// tick runs the Tick of partitions that appended since they settled,
// ticks clustered partitions, retries parked ops and starts pending
// purges. It visits only the partitions on the tick list, not every
// partition of the shard: a shard holding thousands of idle partitions
// spends nothing on them every tick.
//
// A partition joins the list (tickMark) whenever something may give the
// tick work on it: an append, a parked op, a queued purge, opening,
// joining a group, deleting. The tick drops it once nothing is left.
func (ds *DataShard) tick(time.Time) {
	if ds.cache != nil {
		if blocked := ds.cache.PinBlocked(); blocked != ds.pinBlocked {
			// Replies sent in place pin what the cache must evict: copy
			// their records out so it can.
			ds.pinBlocked = blocked
			ds.shard.evacuateSpans()
		}
		if blocked := ds.cache.LoanBlocked(); blocked != ds.loanBlocked {
			// A stream's client is slow and the region it is received
			// into is the oldest record: the stream yields it (its request
			// is then appended whole once it arrived).
			ds.loanBlocked = blocked
			ds.cache.YieldBlockingLoan()
		}
		ds.cache.Trim() // another shard may wait for the memory this one holds
		ds.publishCache()
	}
	count := len(ds.tickList)
	kept := 0
	for index := 0; index < count; index++ {
		p := ds.tickList[index]
		if ds.tickPartition(p) {
			ds.tickList[kept] = p
			kept++
			continue
		}
		p.tickListed = false
	}
	// Partitions marked during the walk were appended past count.
	kept += copy(ds.tickList[kept:], ds.tickList[count:])
	clear(ds.tickList[kept:])
	ds.tickList = ds.tickList[:kept]
}

// tickPartition does one partition's tick work and reports whether it
// stays on the list.
func (ds *DataShard) tickPartition(p *dataPartition) bool {
	if ds.partitions[p.key] != p {
		return false // deleted and gone, or replaced by a new one
	}
	if p.state == partitionDeleting && p.cluster != nil {
		p.cluster.tick() // its group's last batch may wait for the engine
		return true
	}
	if p.state != partitionOpen {
		return p.state == partitionOpening // it has work once open
	}
	if p.ticking && p.part.Settled() {
		p.ticking = false // nothing to retry until the next append
	}
	if p.ticking {
		p.part.Tick()
	}
	if p.cluster != nil {
		p.cluster.tick()
	}
	ds.schedule(p)
	if len(p.purges) > 0 && !p.purging {
		ds.startPurge(p)
	}
	return p.ticking || p.cluster != nil || p.parkedCount() > 0 || len(p.purges) > 0
}

// tickMark puts p on the tick list.
func (ds *DataShard) tickMark(p *dataPartition) {
	if p.tickListed {
		return
	}
	p.tickListed = true
	ds.tickList = append(ds.tickList, p)
}

// publishCache copies the cache's state into the shard's stats, which
// other threads read (Shard.Stats, /metrics); the cache itself belongs
// to the shard's thread.
func (ds *DataShard) publishCache() {
	cache, stats := ds.cache.Stats(), &ds.shard.stats
	stats.cacheRecords.Store(cache.Records)
	stats.cacheBytes.Store(uint64(cache.Bytes))
	stats.cacheCapacity.Store(uint64(cache.CapacityBytes))
	stats.cacheEvicted.Store(cache.EvictedCount)
}
