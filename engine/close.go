package engine

// closer syncs and closes a partition's files one op at a time.
type closer struct {
	p     *Partition
	op    Op
	files []File
	// syncs is how many of files are synced before the closes start.
	syncs int
	step  int
	// cut is set while the active log is first cut back to its batches
	// (space allocated ahead, allocate.go).
	cut bool
}

// Close waits for the writes, reads, maintenance and allocation in
// flight, cuts space allocated ahead off the active log, syncs the active
// segment (so a clean shutdown loses nothing under any durability),
// closes every file and calls done once. Under
// DurabilityMemory a write stalled by a full disk holds Close until a Tick
// writes it: those batches were acknowledged.
func (p *Partition) Close(done func(error)) {
	if p.state == stateClosing || p.state == stateClosed {
		done(ErrClosed)
		return
	}
	if p.fatal != nil {
		done(p.fatal)
		return
	}
	p.streamYield()
	p.state = stateClosing
	p.closeDone = done
	p.resume()
}

func (p *Partition) finishClose() {
	c := &p.closer
	c.p = p
	c.op.Callback = c.stepDone
	active := p.active()
	c.files = append(c.files[:0], active.logFile, active.indexFile, p.offsets.file)
	c.syncs = len(c.files)
	for _, s := range p.segments {
		c.files = append(c.files, s.logFile, s.indexFile)
	}
	c.files = append(c.files, p.offsets.file, p.directory)
	c.step = 0
	c.cut = active.spaceAhead
	c.next()
}

// releaseBuffers hands the long-lived buffers back to the allocator; no
// op is in flight once every file is closed.
func (p *Partition) releaseBuffers() {
	for index := range p.buffers {
		if p.buffers[index].data != nil {
			p.buffers[index].giveBack()
		}
	}
	for _, buffer := range [][]byte{p.index.buffer, p.read.buffer, p.offsets.buffer, p.read.ahead.buffer} {
		if buffer != nil { // allocated on first use
			p.options.Release(buffer)
		}
	}
	p.index.buffer, p.read.buffer, p.offsets.buffer = nil, nil, nil
	p.read.ahead.buffer = nil
}

func (c *closer) next() {
	if c.cut {
		active := c.p.active()
		c.op.Code, c.op.File, c.op.Position = OpTruncate, active.logFile, active.sizeBytes
		c.p.storage.Submit(&c.op)
		return
	}
	c.op.Code = OpClose
	if c.step < c.syncs {
		c.op.Code = OpSync
	}
	c.op.File = c.files[c.step]
	c.p.storage.Submit(&c.op)
}

func (c *closer) stepDone(op *Op) {
	p := c.p
	if c.cut {
		c.cut = false
		p.cutDone(op, "close")
		c.next()
		return
	}
	if op.Err != nil && op.Code == OpSync {
		p.fail(&FatalError{Op: "fdatasync at close", Path: p.options.Directory, Err: op.Err})
		return
	}
	c.step++
	if c.step < len(c.files) {
		c.next()
		return
	}
	p.state = stateClosed
	p.releaseBuffers() // first: a lent region given back dies before the tail passes the dead
	p.cache.clear()    // nothing polls a closed partition: its records are dead
	done := p.closeDone
	p.closeDone = nil
	done(nil)
}
