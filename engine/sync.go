package engine

// Sync makes everything appended so far durable, whatever the topic's
// durability (FlushUnsavedBuffer with fsync): it waits for the write
// pipeline to drain, fdatasyncs the active segment's .log and .index, and
// calls done once. A failed fdatasync is fatal, as everywhere; a Sync
// the partition stops under gets the fatal error in done. One Sync at
// a time (Sync or Flush): a second returns ErrBusy.
func (p *Partition) Sync(done func(error)) error { return p.startSync(done, true) }

// Flush writes out what is appended and not yet written (FlushUnsavedBuffer
// without fsync): it waits for the write pipeline to drain and calls done
// once, without an fdatasync, so it makes nothing more durable than the
// topic's durability already does.
func (p *Partition) Flush(done func(error)) error { return p.startSync(done, false) }

func (p *Partition) startSync(done func(error), fsync bool) error {
	if p.fatal != nil {
		return p.fatal
	}
	if p.state != stateOpen {
		return ErrClosed
	}
	if p.syncer.done != nil {
		return ErrBusy
	}
	p.syncer.done = done
	p.syncer.fsync = fsync
	p.syncer.started = false
	p.streamYield()
	p.startFlush()
	p.syncer.resume()
	return nil
}

// syncer runs Partition.Sync once the write pipeline is idle and no purge
// is under way (a started purge leaves no segment until its fresh one is
// open). It syncs the segment that was active then, whatever rolls
// meanwhile, and while its fdatasyncs run no maintenance removes a segment
// (busy).
type syncer struct {
	p       *Partition
	op      Op
	done    func(error)
	fsync   bool
	started bool
	step    int
	segment *segment
}

func (s *syncer) init(p *Partition) {
	s.p = p
	s.op.Callback = s.stepDone
}

// busy reports whether an fdatasync of the Sync is in flight.
func (s *syncer) busy() bool { return s.done != nil && s.started }

func (s *syncer) resume() {
	p := s.p
	if s.done == nil || s.started || !p.idle() || p.maintenance.purging() {
		return
	}
	s.started = true
	if !s.fsync {
		done := s.done
		s.done = nil
		done(nil)
		return
	}
	s.step = 0
	s.segment = p.active()
	s.op.Code, s.op.File, s.op.Buffer = OpSync, s.segment.logFile, nil
	p.storage.Submit(&s.op)
}

func (s *syncer) stepDone(op *Op) {
	p := s.p
	if s.done == nil {
		return // the partition failed while the fdatasync ran; failAll ended the Sync
	}
	segment := s.segment
	if op.Err != nil {
		path := segment.logPath(p.options.Directory)
		if s.step == 1 {
			path = segment.indexPath(p.options.Directory)
		}
		p.fail(&FatalError{Op: "fdatasync", Path: path, Err: op.Err}) // fails the Sync too (failAll)
		return
	}
	if s.step == 0 {
		s.step = 1
		s.op.File = segment.indexFile
		p.storage.Submit(&s.op)
		return
	}
	done := s.done
	s.done, s.segment = nil, nil
	done(nil)
	p.resume()
}

// failAll ends an unfinished Sync with err as the partition stops.
func (s *syncer) failAll(err error) {
	if s.done == nil {
		return
	}
	done := s.done
	s.done, s.segment = nil, nil
	done(err)
}
