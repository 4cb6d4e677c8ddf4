package engine

// writeSegment writes the next segment under its .staging name:
// create, truncate, write, fdatasync, close, rename, directory sync.
func (in *installer) writeSegment(*Op) {
	if in.next == len(in.segments) {
		in.writeOffsets()
		return
	}
	s := in.segments[in.next]
	in.next++
	name := segmentStem(s.offsetStart) + logSuffix
	in.writeFile(name, s.data, in.writeSegment)
}

func (in *installer) writeOffsets() {
	if len(in.offsets) == 0 {
		in.open()
		return
	}
	in.writeFile(offsetsFileName, in.offsets, func(*Op) { in.open() })
}

// writeFile makes data durable under name: written to name.staging,
// fdatasynced, renamed, and the directory synced.
func (in *installer) writeFile(name string, data []byte, then func(*Op)) {
	staging := in.path(name + ".staging")
	synced := func(*Op) {
		in.set(OpClose, in.file, "")
		in.file = 0
		in.run(func(*Op) {
			in.set(OpRename, 0, staging)
			in.op.Target = in.path(name)
			in.run(func(*Op) {
				in.set(OpSync, in.directory, "")
				in.op.Flags = OpenDirectory
				in.run(then)
			})
		})
	}
	written := func(*Op) {
		in.set(OpSync, in.file, "")
		in.run(synced)
	}
	in.set(OpOpen, 0, staging)
	in.op.Flags = OpenCreate
	in.run(func(op *Op) {
		in.file = File(op.Result)
		in.set(OpTruncate, in.file, "")
		in.run(func(op *Op) {
			if len(data) == 0 {
				written(op) // an empty active segment
				return
			}
			in.set(OpWrite, in.file, "")
			in.op.Buffer = data
			in.run(written)
		})
	})
}

// open closes the directory handle and opens the installed partition;
// recovery verifies every batch again and rebuilds the indexes.
func (in *installer) open() {
	in.set(OpClose, in.directory, "")
	in.directory = 0
	in.run(func(*Op) {
		OpenPartition(in.storage, in.options, in.opened)
	})
}

func (in *installer) opened(p *Partition, err error) {
	if err != nil {
		in.done(nil, err)
		return
	}
	h := in.header
	if p.OffsetFirst() != h.offsetFirst && h.batchesBytes > 0 || p.offsetVisible != h.offsetNext {
		p.logger.Error("installed snapshot does not reopen as exported",
			"offset_first", p.OffsetFirst(), "offset_next", p.offsetVisible)
		p.Close(func(error) {
			in.done(nil, &CorruptError{Path: in.options.Directory, Reason: "installed snapshot does not reopen as exported"})
		})
		return
	}
	p.timestampLast = max(p.timestampLast, h.timestampLast)
	p.logger.Info("partition snapshot installed", "offset_first", h.offsetFirst, "offset_next", h.offsetNext,
		"batches", h.batchCount, "consumers", h.consumerCount)
	in.done(p, nil)
}
