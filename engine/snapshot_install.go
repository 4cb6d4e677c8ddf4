package engine

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/zeebo/xxh3"

	"github.com/whippetio/whippet/internal/invariant"
)

// InstallSnapshot replaces the content of the partition directory
// options.Directory with snapshot (from ExportSnapshot), then opens the
// partition and calls done once with it: afterwards the partition serves
// the same batches at the same offsets and timestamps, continues at the
// snapshot's next offset, and holds its consumer offsets. The partition
// must not be open: Close (or Delete) it first. The caller keeps snapshot
// unmodified until done.
//
// It verifies the whole snapshot before touching the disk
// (ErrSnapshotInvalid). Then it removes the directory's segments and
// offsets, writes the snapshot's segments (split at options.SegmentBytes)
// each under a .staging name, fdatasyncs and renames it, syncing the
// directory after each step, and the offsets file likewise. A crash midway
// leaves a directory that opens: a prefix of the old segments (removal
// unfinished) or of the snapshot's (possibly none), never a mix of the
// two. The caller records that a transfer is in progress (vsr: its
// applied op) and installs again after a restart.
func InstallSnapshot(storage Storage, options PartitionOptions, snapshot []byte, done func(*Partition, error)) {
	options.EnsureDefaults()
	if err := options.Validate(); err != nil {
		done(nil, err)
		return
	}
	header, err := verifySnapshot(snapshot, options.PartitionID)
	if err != nil {
		done(nil, err)
		return
	}
	in := &installer{storage: storage, options: options, snapshot: snapshot, header: header, done: done}
	in.plan()
	in.op.Callback = in.callback
	in.set(OpMkdir, 0, options.Directory)
	in.run(in.openDirectory)
}

// verifySnapshot checks the framing, the checksum and every batch: their
// own checksums, their partition id, and offsets contiguous from
// offset_first to offset_next.
func verifySnapshot(snapshot []byte, partitionID uint32) (snapshotHeader, error) {
	invalid := func(reason string) (snapshotHeader, error) {
		return snapshotHeader{}, fmt.Errorf("%w: %s", ErrSnapshotInvalid, reason)
	}
	if len(snapshot) < snapshotHeaderBytes || len(snapshot) > SnapshotBytesMax {
		return invalid("size out of range")
	}
	le := binary.LittleEndian
	if le.Uint32(snapshot) != snapshotMagic || le.Uint32(snapshot[4:]) != snapshotVersion {
		return invalid("magic or version")
	}
	if snapshotChecksum(snapshot) != le.Uint64(snapshot[56:]) {
		return invalid("checksum mismatch")
	}
	h := snapshotHeader{
		offsetFirst: le.Uint64(snapshot[8:]), offsetNext: le.Uint64(snapshot[16:]), timestampLast: le.Uint64(snapshot[24:]),
		batchesBytes: le.Uint64(snapshot[32:]), batchCount: le.Uint32(snapshot[40:]),
		consumerCount: le.Uint32(snapshot[44:]), partitionID: le.Uint32(snapshot[48:]),
	}
	if h.partitionID != partitionID {
		return invalid("snapshot of another partition id")
	}
	if uint64(len(snapshot)) != snapshotHeaderBytes+h.batchesBytes+uint64(h.consumerCount)*snapshotConsumerBytes {
		return invalid("sections do not tile the snapshot")
	}
	batches := snapshot[snapshotHeaderBytes : snapshotHeaderBytes+h.batchesBytes]
	offset, count := h.offsetFirst, uint32(0)
	for position := 0; position < len(batches); count++ {
		if len(batches)-position < batchHeaderBytes {
			return invalid("partial batch header")
		}
		length := batchLength(batches[position:])
		if length > uint64(len(batches)-position) {
			return invalid("batch overruns the snapshot")
		}
		record := batches[position : position+int(length)]
		if reason := invalidBatch(record); reason != "" {
			return invalid("batch at offset " + fmt.Sprint(offset) + ": " + reason)
		}
		if batchBaseOffset(record) != offset {
			return invalid("batch offsets are not contiguous")
		}
		offset = batchOffsetLast(record) + 1
		position += int(length)
	}
	if offset != h.offsetNext || count != h.batchCount {
		return invalid("offset_next or batch_count does not match the batches")
	}
	return h, nil
}

// installer runs the install's ops one at a time.
type installer struct {
	storage  Storage
	options  PartitionOptions
	snapshot []byte
	header   snapshotHeader
	done     func(*Partition, error)
	op       Op
	then     func(*Op)
	// directory is the partition directory's handle; names its listing.
	directory File
	names     []string
	removals  []string
	file      File
	// segments are the snapshot's batch ranges, one per segment file.
	segments []installSegment
	next     int
	offsets  []byte
}

type installSegment struct {
	offsetStart uint64
	data        []byte
}

// plan splits the batches into segments of about SegmentBytes, sealed
// after the batch that crosses it (as a roll would), and encodes the
// consumer offsets as offsets-file slots.
func (in *installer) plan() {
	h := in.header
	batches := in.snapshot[snapshotHeaderBytes : snapshotHeaderBytes+h.batchesBytes]
	current := installSegment{offsetStart: h.offsetFirst, data: batches[:0]}
	start := 0
	for position := 0; position < len(batches); {
		length := int(batchLength(batches[position:]))
		position += length
		current.data = batches[start:position]
		if int64(len(current.data)) >= in.options.SegmentBytes && position < len(batches) {
			in.segments = append(in.segments, current)
			current = installSegment{offsetStart: batchBaseOffset(batches[position:]), data: batches[position:position]}
			start = position
		}
	}
	if len(batches) == 0 {
		current.offsetStart = h.offsetNext
	}
	in.segments = append(in.segments, current)
	consumers := in.snapshot[snapshotHeaderBytes+h.batchesBytes:]
	for at := 0; at < len(consumers); at += snapshotConsumerBytes {
		slot := make([]byte, offsetSlotBytes)
		slot[0] = consumers[at]
		copy(slot[4:8], consumers[at+4:at+8])
		copy(slot[8:16], consumers[at+8:at+16])
		binary.LittleEndian.PutUint64(slot[24:], xxh3.Hash(slot[:24]))
		in.offsets = append(in.offsets, slot...)
	}
	invariant.Assert(len(in.segments) > 0, "an installed partition has a segment")
}

func (in *installer) set(code OpCode, file File, path string) {
	in.op.Code, in.op.File, in.op.Path, in.op.Target = code, file, path, ""
	in.op.Flags, in.op.Buffer, in.op.Position = 0, nil, 0
}

func (in *installer) run(then func(*Op)) {
	in.then = then
	in.storage.Submit(&in.op)
}

func (in *installer) callback(op *Op) {
	if op.Err != nil {
		err := fmt.Errorf("engine: install snapshot into %s: %w", in.options.Directory, op.Err)
		if op.Code == OpSync {
			err = &FatalError{Op: "install snapshot fdatasync", Path: in.options.Directory, Err: op.Err}
		}
		in.fail(err)
		return
	}
	in.then(op)
}

// fail closes the handles the install holds (a staging file, the
// directory), then reports err.
func (in *installer) fail(err error) {
	handles := make([]File, 0, 2)
	for _, file := range [2]File{in.file, in.directory} {
		if file != 0 {
			handles = append(handles, file)
		}
	}
	in.file, in.directory = 0, 0
	var closeNext func(*Op)
	closeNext = func(*Op) {
		if len(handles) == 0 {
			in.done(nil, err)
			return
		}
		in.set(OpClose, handles[0], "")
		handles = handles[1:]
		in.then = closeNext
		in.op.Callback = func(op *Op) { in.then(op) }
		in.storage.Submit(&in.op)
	}
	closeNext(nil)
}

func (in *installer) path(name string) string { return filepath.Join(in.options.Directory, name) }

func (in *installer) openDirectory(*Op) {
	in.set(OpOpen, 0, in.options.Directory)
	in.op.Flags = OpenDirectory
	in.run(func(op *Op) {
		in.directory = File(op.Result)
		in.set(OpList, 0, in.options.Directory)
		in.op.Names = make([]string, 0, 64)
		in.run(func(op *Op) {
			in.names = op.Names
			in.removeOld(nil)
		})
	})
}

// removeOld removes the old content: segment logs newest first, each
// removal made durable before the next, so a crash midway leaves a
// contiguous prefix of the old segments (which still opens); then the
// indexes, offsets and staging leftovers, and a directory sync, so no old
// file can mix with the new ones.
func (in *installer) removeOld(*Op) {
	if in.removals == nil {
		in.planRemovals()
	}
	if len(in.removals) == 0 {
		in.set(OpSync, in.directory, "")
		in.op.Flags = OpenDirectory
		in.run(in.writeSegment)
		return
	}
	name := in.removals[0]
	in.removals = in.removals[1:]
	in.set(OpRemove, 0, in.path(name))
	if _, isLog := parseSegmentName(name, logSuffix); !isLog {
		in.run(in.removeOld)
		return
	}
	in.run(func(*Op) {
		in.set(OpSync, in.directory, "")
		in.op.Flags = OpenDirectory
		in.run(in.removeOld)
	})
}

// planRemovals lists the old files in removal order: logs by descending
// offset, then the rest.
func (in *installer) planRemovals() {
	in.removals = make([]string, 0, len(in.names)+1)
	for index := len(in.names) - 1; index >= 0; index-- {
		if _, isLog := parseSegmentName(in.names[index], logSuffix); isLog {
			in.removals = append(in.removals, in.names[index])
		}
	}
	for _, name := range in.names {
		_, isIndex := parseSegmentName(name, indexSuffix)
		if isIndex || name == offsetsFileName || strings.HasSuffix(name, ".staging") {
			in.removals = append(in.removals, name)
		}
	}
}
