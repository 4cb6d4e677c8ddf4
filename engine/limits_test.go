package engine

import (
	"testing"
	"unsafe"
)

// TestLimits asserts the relationships between the named limits, each
// with the reason it must hold.
func TestLimits(t *testing.T) {
	check := func(ok bool, why string) {
		t.Helper()
		if !ok {
			t.Error(why)
		}
	}
	check(blockBytes&(blockBytes-1) == 0, "blockBytes is a power of two: alignDown/alignUp mask with it")
	check(blockBytes%512 == 0, "blockBytes is a multiple of every device's logical sector (512)")
	check(batchHeaderBytes == 256, "the batch header is pinned at 256 bytes by the wire format")
	check(frameHeaderBytes == 48, "the frame header is pinned at 48 bytes by the wire format")
	check(indexEntryBytes == 24, "index entries are pinned at 24 bytes by the .index format")
	check(batchHeaderBytes < blockBytes, "a batch header fits in the first read block, so a walk can size the record")
	check(journalBytesMax >= batchBytesMax+blockBytes, "a write buffer can hold one largest batch after a partial tail block")
	check(journalBytesDefault >= blockBytes && journalBytesDefault <= journalBytesMax, "the default write buffer is within bounds")
	check(segmentBytesMin%512 == 0 && segmentBytesMax%512 == 0, "segment sizes are 512-byte multiples (Iggy's rule)")
	check(segmentBytesMin <= segmentBytesDefault && segmentBytesDefault <= segmentBytesMax, "the default segment size is valid")
	check(segmentBytesMax+int64(batchBytesMax) < 1<<31, "a segment's size, soft limit plus one batch, fits any int on 64-bit")
	check(indexIntervalBytes >= blockBytes, "a sparse index entry per block at most: the index stays < 1% of the log")
	check(indexBufferBytes%blockBytes == 0 && indexBufferBytes >= 2*blockBytes,
		"an index write holds a partial block plus at least one whole one")
	check((indexBufferBytes-blockBytes)/indexEntryBytes > 0, "each index write makes progress")
	check(readBytesDefault%blockBytes == 0 && readBytesDefault >= 2*blockBytes,
		"a disk read covers a batch header starting anywhere in its first block")
	check(recoverReadBytes%blockBytes == 0 && recoverReadBytes >= 2*blockBytes, "the recovery scan reads whole blocks")
	check(batchMessagesMax*(frameHeaderBytes+1) <= batchBytesMax, "message_count is bounded by the batch size")
	check(pollMessagesMax <= 1<<31, "a poll's message count fits the u32 messages_count of the reply")
	check(offsetSlotBytes*consumersMax <= 1<<21, "the offsets file stays small enough to read whole at open")
	check(offsetSlotBytes <= blockBytes && blockBytes%offsetSlotBytes == 0, "an offset slot never straddles a block")
	check(cacheEntriesMax > 0 && cacheBytesDefault > 0, "the cache has room")
	check(streamPieceBytesMin%blockBytes == 0 && streamPieceBytesMin <= piecesRecordBytesMin,
		"a streamed batch's data pieces are whole blocks, and a streamed batch has room for one")
	check(streamPiecesMax >= 1 && streamPiecesMax <= 8, "a stream's piece ops are the bits of its uint8 piecesBusy")
	check(journalBatchesMax <= cacheEntriesMax, "the batches of one written journal fit the entry ring together")
	check(cacheChunkBytes%blockBytes == 0 && cacheBytesDefault%cacheChunkBytes == 0, "the cache grows by whole blocks and its default is whole chunks")
	check(cacheBytesDefault/4 >= journalBytesDefault, "the default cache takes a full default journal's batch")
	check(unsafe.Sizeof(indexEntry{}) == indexEntryBytes, "the in-memory index entry has the on-disk size")
	check(dedupCountDefault <= dedupIDsMax, "the default dedup window is within the maximum")
	check(listNamesMax >= 2*segmentsMax, "a directory listing holds every segment's two files")
	check(pieceBytes >= batchHeaderBytes+blockBytes,
		"the first piece holds the stamped header and at least one whole block beyond it, so it writes something final")
	check(piecesRecordBytesMin > pieceBytes, "a pieced record has a rest to copy while its first piece is written")
	check(piecesRecordBytesMin <= journalBytesDefault, "a pieced record fits the default write buffer")
	check(walkAheadFrames > 0 && walkAheadFrames*(frameHeaderBytes+1) < piecesRecordBytesMin,
		"the walk's look-ahead stays within a pieced record of small frames")
}
