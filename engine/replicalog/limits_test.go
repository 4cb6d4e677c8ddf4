package replicalog

import (
	"math"
	"testing"
)

// TestLimits checks how the named limits relate, and says why each must.
func TestLimits(t *testing.T) {
	// A Prepare carries one client batch: at least 16 MiB plus headers.
	if MessageBytesMax < 17<<20 {
		t.Fatal("MessageBytesMax below 17 MiB")
	}
	// The record length is a u32.
	if MessageBytesMax > math.MaxUint32 {
		t.Fatal("MessageBytesMax does not fit the record's u32 length")
	}
	// A full copy (header, hard state, app record) fits its region, or a
	// write could run into the other copy.
	if copyHeaderBytes+HardStateBytesMax+AppBytesMax > copyBytes {
		t.Fatal("superblock copy region too small")
	}
	// vsr's hard state: 28 fixed bytes, a u32 count and 1024 client rows.
	if HardStateBytesMax < 28+4+1024*24 {
		t.Fatal("HardStateBytesMax below vsr's largest hard state")
	}
	// Slot numbers are stored as u32.
	if SlotCountMax > math.MaxUint32 {
		t.Fatal("SlotCountMax does not fit u32")
	}
	// Copying a message must stay cheaper than a second write op.
	if copyMessageBytesMax >= MessageBytesMax || copyMessageBytesMax > readChunkBytes {
		t.Fatal("copyMessageBytesMax out of proportion")
	}
	// Compaction must at least halve the file, or it could run again at once.
	if compactRatio < 2 {
		t.Fatal("compactRatio below 2")
	}
	// The header's block and the two copy regions tile the head exactly,
	// so no write of one can tear another.
	if copyAt(0) < fileHeaderBytes || copyAt(0)%4096 != 0 || copyAt(1) != copyAt(0)+copyBytes || copyAt(1)+copyBytes != recordsAt {
		t.Fatal("journal head layout")
	}
	if fileHeaderBytes < 40 || copyHeaderBytes < 64 || recordHeaderBytes != 24 {
		t.Fatal("header sizes changed")
	}
}
