package shard

import (
	"encoding/binary"
	"testing"

	"github.com/whippetio/whippet/vsr"
)

// offsetEntry is a committed store-offset entry of consumer 1.
func offsetEntry(offset uint64) vsr.Entry {
	body := make([]byte, partitionOffsetBodyBytes)
	body[0] = 1
	binary.LittleEndian.PutUint32(body[1:], 1)
	binary.LittleEndian.PutUint64(body[5:], offset)
	return vsr.Entry{Op: 30, Operation: partitionOpStoreOffset, Body: body}
}

// TestClusterOffsetInSkipWindow: after a restart, while the log re-applies
// entries the engine already holds, a stored offset past the end the log
// implies is refused as it was on every node the first time, although the
// engine (holding more) would take it; during a pending purge offsets are
// skipped. Neither reaches the engine (the partition here has none).
func TestClusterOffsetInSkipWindow(t *testing.T) {
	cp := &clusterPartition{offsetNext: 5, skipUntil: 10}
	entry := offsetEntry(7)
	if !cp.applyOffset(&entry) || cp.offsetBusy {
		t.Fatal("a store past the log's end was not refused in the skip window")
	}
	cp = &clusterPartition{offsetNext: 0, skipUntil: 10}
	entry = offsetEntry(0)
	if !cp.applyOffset(&entry) || cp.offsetBusy {
		t.Fatal("a store on a partition the log holds empty was not refused")
	}
	cp = &clusterPartition{offsetNext: 5, skipUntil: 10, purgePending: 3}
	entry = offsetEntry(1)
	if !cp.applyOffset(&entry) || cp.offsetBusy {
		t.Fatal("a store before a pending purge was not skipped")
	}
}

// TestClusterPurgeGenerations: a purge of a generation the log applied is
// a duplicate; after a restart with the engine purged past the mark, the
// purges up to the engine's are skipped and the last resets the offsets.
func TestClusterPurgeGenerations(t *testing.T) {
	cp := &clusterPartition{purgeGen: 4}
	if !cp.skipPurge(3) || !cp.skipPurge(4) || cp.skipPurge(5) {
		t.Fatal("duplicates: older and equal generations skip, a newer one runs")
	}
	cp = &clusterPartition{purgeGen: 1, purgePending: 3, offsetNext: 20, skipUntil: 4}
	if !cp.skipPurge(2) || cp.purgePending != 3 || cp.purgeGen != 2 {
		t.Fatalf("an older purge ended the pending state: %+v", cp.purgePending)
	}
	if !cp.skipPurge(3) || cp.purgePending != 0 || cp.offsetNext != 0 || cp.skipUntil != 4 {
		t.Fatalf("the engine's purge: pending %d next %d skip until %d", cp.purgePending, cp.offsetNext, cp.skipUntil)
	}
	if cp.skipPurge(4) {
		t.Fatal("a purge after the engine's is skipped")
	}
}

// TestClusterPartitionConfigNoDedup: a clustered partition runs without
// deduplication (restart skips count every message of an entry).
func TestClusterPartitionConfigNoDedup(t *testing.T) {
	config := clusterPartitionConfig(PartitionConfig{DedupCount: 100, DedupWindowMicros: 5, SegmentBytes: 1 << 20})
	if config.DedupCount != 0 || config.DedupWindowMicros != 0 || config.SegmentBytes != 1<<20 {
		t.Fatalf("config %+v", config)
	}
}
