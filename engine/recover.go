package engine

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/whippetio/whippet/internal/invariant"
)

// recovery opens a partition: it lists the directory, scans every segment
// batch by batch with full checksum verification, truncates a torn tail
// after the last durable point, refuses damage before it (ErrCorrupt),
// cuts any segment's tail of zeros (space allocated ahead) back to its
// last batch, rebuilds indexes that do not match the log, and loads
// consumer offsets.
type recovery struct {
	p     *Partition
	op    Op
	stage recoveryStage
	done  func(*Partition, error)
	names []string
	stems []uint64
	// next is the stems index of the segment being recovered.
	next    int
	current *segment
	scan    segmentScan
}

type recoveryStage uint8

const (
	recoverMkdir recoveryStage = iota + 1
	recoverOpenDirectory
	recoverList
	recoverRemoveOrphan
	recoverOpenLog
	recoverOpenIndex
	recoverSizeLog
	recoverSizeIndex
	recoverReadIndex
	recoverReadLog
	recoverReadTail
	recoverTruncateLog
	recoverSyncLog
	recoverWriteIndex
	recoverTruncateIndex
	recoverSyncIndex
	recoverCreateSegment
	recoverOffsets
)

func (r *recovery) start(p *Partition, done func(*Partition, error)) {
	r.p = p
	r.done = done
	r.op.Callback = r.stepDone
	r.names = make([]string, 0, 64)
	r.scan.init()
	r.stage = recoverMkdir
	r.step()
}

// step issues the op of the current stage.
func (r *recovery) step() {
	p := r.p
	directory := p.options.Directory
	op := &r.op
	op.Flags, op.Buffer, op.Path, op.Position = 0, nil, "", 0
	switch r.stage {
	case recoverMkdir:
		op.Code, op.Path = OpMkdir, directory
	case recoverOpenDirectory:
		op.Code, op.Path, op.Flags = OpOpen, directory, OpenDirectory
	case recoverList:
		op.Code, op.Path, op.Names = OpList, directory, r.names[:0]
	case recoverRemoveOrphan:
		op.Code, op.Path = OpRemove, filepath.Join(directory, r.names[0])
	case recoverOpenLog:
		op.Code, op.Path, op.Flags = OpOpen, r.current.logPath(directory), OpenDirect
	case recoverOpenIndex:
		op.Code, op.Path, op.Flags = OpOpen, r.current.indexPath(directory), OpenDirect|OpenCreate
	case recoverSizeLog:
		op.Code, op.File = OpSize, r.current.logFile
	case recoverSizeIndex:
		op.Code, op.File = OpSize, r.current.indexFile
	case recoverReadIndex:
		op.Code, op.File, op.Buffer = OpRead, r.current.indexFile, r.scan.indexBytes
	case recoverReadLog, recoverReadTail:
		op.Code, op.File, op.Buffer, op.Position = OpRead, r.current.logFile, r.scan.readBuffer(), r.scan.readPosition
	case recoverTruncateLog:
		op.Code, op.File, op.Position = OpTruncate, r.current.logFile, r.current.sizeBytes
	case recoverSyncLog:
		op.Code, op.File = OpSync, r.current.logFile
	case recoverWriteIndex:
		op.Code, op.File, op.Buffer = OpWrite, r.current.indexFile, r.scan.rebuilt
	case recoverTruncateIndex:
		op.Code, op.File = OpTruncate, r.current.indexFile
		op.Position = int64(len(r.current.index) * indexEntryBytes)
	case recoverSyncIndex:
		op.Code, op.File = OpSync, r.current.indexFile
	default:
		invariant.Assert(false, "recovery stage issues an op")
	}
	p.storage.Submit(op)
}

func (r *recovery) stepDone(op *Op) {
	if op.Err != nil {
		r.finish(r.opError(op))
		return
	}
	var err error
	switch r.stage {
	case recoverMkdir:
		r.stage = recoverOpenDirectory
	case recoverOpenDirectory:
		r.p.directory = File(op.Result)
		r.stage = recoverList
	case recoverList:
		r.names = op.Names
		err = r.sortNames()
	case recoverRemoveOrphan:
		r.names = r.names[1:]
		err = r.nextOrphan()
	case recoverOpenLog, recoverOpenIndex, recoverSizeLog, recoverSizeIndex, recoverReadIndex:
		err = r.openDone(op)
	case recoverReadLog:
		err = r.readLogDone(op)
	case recoverReadTail:
		err = r.checkZeros(op.Result)
	default:
		err = r.repairDone()
	}
	if err != nil {
		r.finish(err)
		return
	}
	if r.stage == recoverCreateSegment {
		r.scan.tail = r.scan.tail[:0]
		r.p.roll.create(r.p.offsetNext, r.segmentCreated)
		return
	}
	if r.stage == recoverOffsets {
		r.p.offsets.load(r.offsetsLoaded)
		return
	}
	r.step()
}

func (r *recovery) opError(op *Op) error {
	path := op.Path
	if path == "" && r.current != nil {
		path = r.current.logPath(r.p.options.Directory)
	}
	if op.Code == OpSync {
		return &FatalError{Op: "fdatasync", Path: path, Err: op.Err}
	}
	return fmt.Errorf("engine: recover %s: %w", path, op.Err)
}

// sortNames keeps the .log stems in offset order and queues the removal
// of every .index without its .log (a crash between creating the two).
func (r *recovery) sortNames() error {
	logs := make(map[uint64]bool)
	r.stems = r.stems[:0]
	for _, name := range r.names {
		if offset, ok := parseSegmentName(name, logSuffix); ok {
			logs[offset] = true
			r.stems = append(r.stems, offset)
		}
	}
	orphans := r.names[:0]
	for _, name := range r.names {
		offset, ok := parseSegmentName(name, indexSuffix)
		if ok && !logs[offset] || strings.HasSuffix(name, ".staging") {
			orphans = append(orphans, name)
		}
	}
	r.names = orphans
	if len(r.stems) > segmentsMax {
		return fmt.Errorf("engine: %s holds %d segments, more than %d", r.p.options.Directory, len(r.stems), segmentsMax)
	}
	return r.nextOrphan()
}

func (r *recovery) nextOrphan() error {
	if len(r.names) > 0 {
		r.p.logger.Info("removing orphan file", "name", r.names[0])
		r.stage = recoverRemoveOrphan
		return nil
	}
	return r.nextSegment()
}

// nextSegment starts the next .log, or moves on once all are recovered.
func (r *recovery) nextSegment() error {
	p := r.p
	if r.next == len(r.stems) {
		r.current = nil
		r.stage = recoverOffsets
		if len(p.segments) == 0 {
			r.stage = recoverCreateSegment
		}
		return nil
	}
	offsetStart := r.stems[r.next]
	r.next++
	if len(p.segments) > 0 && offsetStart != p.active().offsetEnd {
		return &CorruptError{
			Path:   filepath.Join(p.options.Directory, segmentStem(offsetStart)+logSuffix),
			Reason: fmt.Sprintf("segment starts at offset %d, the previous one ends at %d", offsetStart, p.active().offsetEnd),
		}
	}
	r.current = &segment{offsetStart: offsetStart, offsetEnd: offsetStart}
	r.stage = recoverOpenLog
	return nil
}

func (r *recovery) segmentCreated(err error) {
	if err != nil {
		r.finish(err)
		return
	}
	r.stage = recoverOffsets
	r.p.offsets.load(r.offsetsLoaded)
}

func (r *recovery) offsetsLoaded(err error) {
	r.finish(err)
}

// finish reports the outcome once; a refused partition closes nothing
// more than what the process exit releases.
func (r *recovery) finish(err error) {
	p := r.p
	done := r.done
	if done == nil {
		return
	}
	r.done = nil
	if err != nil {
		p.state = stateFailed
		p.logger.Error("partition refused", "error", err)
		done(nil, err)
		return
	}
	active := p.active()
	p.offsetNext = active.offsetEnd
	p.offsetVisible = active.offsetEnd
	position := alignDown(active.sizeBytes)
	p.pending.reset(active, position, r.scan.tail)
	p.state = stateOpen
	r.scan.release()
	p.logger.Info("partition open", "segments", len(p.segments), "offset_next", p.offsetNext)
	done(p, nil)
}
