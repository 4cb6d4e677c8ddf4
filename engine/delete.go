package engine

import (
	"path/filepath"

	"github.com/whippetio/whippet/internal/invariant"
)

// Delete removes the partition for good (DeleteTopic, DeletePartitions):
// it waits like Close, closes every file, removes the segments, the
// offsets file and the directory, syncs the parent directory, and calls
// done once.
func (p *Partition) Delete(done func(error)) {
	p.Close(func(err error) {
		if err != nil && !IsFatal(err) {
			done(err)
			return
		}
		p.removeFiles(done)
	})
}

// remover issues the removals of a closed partition one at a time.
type remover struct {
	p     *Partition
	op    Op
	paths []string
	step  int
	done  func(error)
}

func (p *Partition) removeFiles(done func(error)) {
	directory := p.options.Directory
	r := &remover{p: p, done: done}
	for _, s := range p.segments {
		r.paths = append(r.paths, s.logPath(directory), s.indexPath(directory))
	}
	r.paths = append(r.paths, filepath.Join(directory, offsetsFileName), directory)
	r.op.Callback = r.stepDone
	r.next()
}

func (r *remover) next() {
	if r.step < len(r.paths) {
		r.op.Code, r.op.Path = OpRemove, r.paths[r.step]
	} else {
		r.op.Code, r.op.Path, r.op.Flags = OpOpen, filepath.Dir(r.p.options.Directory), OpenDirectory
	}
	r.p.storage.Submit(&r.op)
}

func (r *remover) stepDone(op *Op) {
	if op.Err != nil {
		r.done(op.Err)
		return
	}
	r.step++
	switch {
	case r.step <= len(r.paths):
		r.next()
	case r.step == len(r.paths)+1:
		parent := File(op.Result)
		r.op.Code, r.op.File, r.op.Path, r.op.Flags = OpSync, parent, "", OpenDirectory
		r.p.storage.Submit(&r.op)
	case r.step == len(r.paths)+2:
		r.op.Code = OpClose
		r.p.storage.Submit(&r.op)
	default:
		invariant.Assert(r.step == len(r.paths)+3, "delete ends after closing the parent")
		r.p.logger.Info("partition deleted")
		r.done(nil)
	}
}
