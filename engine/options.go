package engine

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
)

// Durability says when an append is acknowledged; a topic chooses it at
// creation (topic option key "durability").
type Durability uint8

const (
	// DurabilityPersisted acknowledges after the write and its fdatasync:
	// an acknowledged message survives a crash. The default.
	DurabilityPersisted Durability = iota
	// DurabilityWritten acknowledges once the write completed (the data is
	// in the device or page cache, not necessarily on stable media).
	DurabilityWritten
	// DurabilityMemory acknowledges once the batch is in the in-memory
	// journal; a crash loses what was not yet written.
	DurabilityMemory
)

// String returns the topic option value: persisted, written or memory.
func (d Durability) String() string {
	switch d {
	case DurabilityPersisted:
		return "persisted"
	case DurabilityWritten:
		return "written"
	case DurabilityMemory:
		return "memory"
	}
	return "unknown"
}

// ParseDurability reads a topic option value; "" means the default.
func ParseDurability(text string) (Durability, error) {
	switch text {
	case "", "persisted":
		return DurabilityPersisted, nil
	case "written":
		return DurabilityWritten, nil
	case "memory":
		return DurabilityMemory, nil
	}
	return 0, fmt.Errorf("%w: durability %q is not memory, written or persisted", ErrInvalidOptions, text)
}

// PartitionOptions configure one partition; the topic's options fill most.
type PartitionOptions struct {
	// Directory holds the partition's segments and offsets.
	Directory   string
	PartitionID uint32
	// SegmentBytes is the soft rollover size: 0 means 1 GiB; otherwise a
	// 512-byte multiple in [1 MiB, 1 GiB].
	SegmentBytes int64
	Durability   Durability
	// RetryWrites keeps a failed log write (ENOSPC, EIO) and retries it at
	// every Tick, as DurabilityMemory does, instead of failing its appends
	// and handing their offsets out again: appends wait (the buffers fill
	// and Append reports ErrJournalFull), none is dropped. Replicated
	// partitions use it: an entry the cluster committed must never be
	// skipped on one replica.
	RetryWrites bool
	// ReadChecksumsUnverified skips the checksum verification of batches
	// read from disk (system.partition.validate_checksum = false): their
	// layout is still checked, but a flipped payload bit is served as is.
	// Journal and cache reads are never verified (the bytes were verified
	// at admission and never left memory).
	ReadChecksumsUnverified bool
	// AllocateAheadOff: large appends never allocate the segment's space
	// ahead (allocate.go); their writes extend the log as they go
	// (system.partition.allocate_ahead = false).
	AllocateAheadOff bool
	// JournalBytes is the initial size of each write buffer (0: 4 MiB).
	JournalBytes int
	// ReadBytes is the size of one disk read of a poll (0: 1 MiB).
	ReadBytes int
	// DedupCount and DedupWindowMicros bound the message-id dedup window;
	// both 0 disable it. A message whose id was stored within the window is
	// dropped from its batch.
	DedupCount        int
	DedupWindowMicros uint64
	// Cache is the shard's recent-batch cache; nil reads older batches
	// from disk only.
	Cache *Cache
	// Allocate returns a buffer of at least the given bytes whose first
	// byte is 4096-aligned, for the write, index, read and offsets buffers
	// handed to Storage (shard may return registered ring buffers). The
	// partition holds them until it is closed or deleted. Nil: Go memory.
	Allocate func(bytes int) []byte
	// Release takes back a buffer Allocate returned, once no op uses it:
	// after Close or Delete, and when a buffer is replaced by a larger one.
	// Nil: nothing to do.
	Release func(buffer []byte)
	Logger  *slog.Logger
}

// EnsureDefaults fills zero fields with defaults.
func (o *PartitionOptions) EnsureDefaults() {
	if o.SegmentBytes == 0 {
		o.SegmentBytes = segmentBytesDefault
	}
	if o.JournalBytes == 0 {
		o.JournalBytes = journalBytesDefault
	}
	if o.ReadBytes == 0 {
		o.ReadBytes = readBytesDefault
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Allocate == nil {
		// Journals are allocated and freed once per write: recycle them.
		recycler := &alignedRecycler{}
		o.Allocate, o.Release = recycler.allocate, recycler.release
	}
	if o.Release == nil {
		o.Release = func([]byte) {}
	}
}

// Validate names the first field out of range.
func (o *PartitionOptions) Validate() error {
	switch {
	case o.Directory == "":
		return fmt.Errorf("%w: directory is empty", ErrInvalidOptions)
	case o.SegmentBytes < segmentBytesMin || o.SegmentBytes > segmentBytesMax || o.SegmentBytes%512 != 0:
		return fmt.Errorf("%w: segment_size %d is not a 512-byte multiple in [1 MiB, 1 GiB]", ErrInvalidOptions, o.SegmentBytes)
	case o.Durability > DurabilityMemory:
		return fmt.Errorf("%w: durability %d", ErrInvalidOptions, o.Durability)
	case o.JournalBytes < blockBytes || o.JournalBytes > journalBytesMax:
		return fmt.Errorf("%w: journal bytes %d", ErrInvalidOptions, o.JournalBytes)
	case o.ReadBytes < blockBytes || o.ReadBytes > batchBytesMax:
		return fmt.Errorf("%w: read bytes %d", ErrInvalidOptions, o.ReadBytes)
	case o.DedupCount < 0 || o.DedupCount > dedupIDsMax:
		return fmt.Errorf("%w: dedup count %d", ErrInvalidOptions, o.DedupCount)
	}
	return nil
}

// PartitionDirectory is where a partition lives under the data root, as
// in Iggy: {root}/streams/{stream}/topics/{topic}/partitions/{partition}.
func PartitionDirectory(root string, streamID, topicID, partitionID uint32) string {
	return filepath.Join(root, "streams", strconv.FormatUint(uint64(streamID), 10),
		"topics", strconv.FormatUint(uint64(topicID), 10),
		"partitions", strconv.FormatUint(uint64(partitionID), 10))
}
