package engine

import (
	"github.com/whippetio/whippet/internal/invariant"
)

// MaintenanceOp removes whole segments: retention, DeleteSegments or
// purge. The caller owns it until Done runs.
type MaintenanceOp struct {
	// NowMicros, ExpiryMicros and SizeBytesMax drive Retain: a sealed
	// segment goes when its newest batch is ExpiryMicros old (0: never),
	// and the oldest sealed segments go while the partition holds more
	// than SizeBytesMax (0: unlimited).
	NowMicros    uint64
	ExpiryMicros uint64
	SizeBytesMax int64
	// SegmentCount is how many of the oldest sealed segments
	// DeleteSegments removes.
	SegmentCount int
	// PurgeGeneration is recorded by Purge once it completed (see
	// Partition.PurgeGeneration).
	PurgeGeneration uint64
	Done            func(*MaintenanceOp)

	SegmentsDeleted int
	BytesDeleted    int64
	Err             error

	kind maintenanceKind
}

type maintenanceKind uint8

const (
	maintenanceRetain maintenanceKind = iota + 1
	maintenanceDeleteSegments
	maintenancePurge
)

// Retain applies the time and size retention to sealed segments, never
// past the least stored consumer offset and never to the active segment.
func (p *Partition) Retain(op *MaintenanceOp) error {
	return p.maintenance.request(op, maintenanceRetain)
}

// DeleteSegments removes the op.SegmentCount oldest sealed segments,
// stopping at the least stored consumer offset.
func (p *Partition) DeleteSegments(op *MaintenanceOp) error {
	return p.maintenance.request(op, maintenanceDeleteSegments)
}

// Purge deletes every segment and stored consumer offset and restarts the
// partition empty at offset 0. Appends fail with ErrBusy until Done.
func (p *Partition) Purge(op *MaintenanceOp) error {
	return p.maintenance.request(op, maintenancePurge)
}

// maintenance runs one MaintenanceOp at a time, once no disk read and no
// Sync's fdatasync is in flight (neither may meet a closed file); a purge
// also waits for the write pipeline and offsets to drain.
type maintenance struct {
	p       *Partition
	current *MaintenanceOp
	started bool
	victims []*segment
	op      Op
	step    int
	// cleared waits for a purge's offset deletions to be durable.
	cleared OffsetOp
}

func (m *maintenance) init(p *Partition) {
	m.p = p
	m.op.Callback = m.stepDone
	m.cleared.Done = m.offsetsCleared
}

func (m *maintenance) busy() bool { return m.current != nil }

// purging reports whether a purge has started: from then until its fresh
// segment is open the partition has no active segment.
func (m *maintenance) purging() bool {
	return m.current != nil && m.started && m.current.kind == maintenancePurge
}

func (m *maintenance) blocksAppends() bool {
	return m.current != nil && m.current.kind == maintenancePurge
}

func (m *maintenance) request(op *MaintenanceOp, kind maintenanceKind) error {
	p := m.p
	if p.fatal != nil {
		return p.fatal
	}
	if p.state != stateOpen {
		return ErrClosed
	}
	if m.current != nil {
		return ErrBusy
	}
	op.kind = kind
	op.SegmentsDeleted, op.BytesDeleted, op.Err = 0, 0, nil
	m.current = op
	m.started = false
	if kind == maintenancePurge {
		p.streamYield()
	}
	m.resume()
	return nil
}

func (m *maintenance) resume() {
	p := m.p
	if m.current == nil || m.started || p.read.busy() || p.syncer.busy() || p.fatal != nil {
		return
	}
	if m.current.kind == maintenancePurge && (!p.idle() || p.inflight != nil || p.offsets.busy() || p.space.busy()) {
		return
	}
	m.started = true
	m.victims = m.selectVictims(m.current)
	for _, victim := range m.victims {
		m.current.SegmentsDeleted++
		m.current.BytesDeleted += victim.sizeBytes
	}
	p.segments = p.segments[len(m.victims):]
	if m.current.kind == maintenancePurge {
		p.cache.clear()
	}
	m.step = 0
	m.next()
}

// selectVictims picks a prefix of the segments: retention and
// DeleteSegments take sealed ones up to the consumer barrier; purge takes
// all.
func (m *maintenance) selectVictims(op *MaintenanceOp) []*segment {
	p := m.p
	if op.kind == maintenancePurge {
		return append([]*segment(nil), p.segments...)
	}
	barrier, barred := p.offsets.barrier()
	total := p.SizeBytes()
	count := 0
	for _, s := range p.segments[:len(p.segments)-1] {
		invariant.Assert(s.sealed, "only the last segment is active")
		if barred && s.offsetEnd-1 > barrier {
			break
		}
		expired := op.ExpiryMicros > 0 && s.timestampMax+op.ExpiryMicros <= op.NowMicros
		oversize := op.SizeBytesMax > 0 && total > op.SizeBytesMax
		wanted := count < op.SegmentCount
		if op.kind == maintenanceRetain && !expired && !oversize ||
			op.kind == maintenanceDeleteSegments && !wanted {
			break
		}
		total -= s.sizeBytes
		count++
	}
	return p.segments[:count]
}

// next closes and removes each victim's files (four ops a segment), then
// syncs the directory.
func (m *maintenance) next() {
	p := m.p
	victim := m.step / 4
	op := &m.op
	op.Flags, op.Buffer = 0, nil
	if victim == len(m.victims) {
		op.Code, op.File, op.Flags = OpSync, p.directory, OpenDirectory
		m.step = -1
		p.storage.Submit(op)
		return
	}
	target := m.victims[victim]
	switch m.step % 4 {
	case 0:
		op.Code, op.File = OpClose, target.logFile
	case 1:
		op.Code, op.File = OpClose, target.indexFile
	case 2:
		op.Code, op.Path = OpRemove, target.logPath(p.options.Directory)
	case 3:
		op.Code, op.Path = OpRemove, target.indexPath(p.options.Directory)
	}
	p.storage.Submit(op)
}

func (m *maintenance) stepDone(op *Op) {
	p := m.p
	if op.Err != nil && op.Code == OpSync {
		p.fail(&FatalError{Op: "fsync directory", Path: p.options.Directory, Err: op.Err})
		return
	}
	if op.Err != nil {
		p.logger.Warn("segment removal failed", "error", op.Err, "path", op.Path)
	}
	if m.step >= 0 {
		m.step++
		m.next()
		return
	}
	if m.current.kind == maintenancePurge {
		p.roll.create(0, m.purged)
		return
	}
	m.finish(nil)
}

func (m *maintenance) purged(err error) {
	p := m.p
	if err != nil {
		p.fail(err)
		return
	}
	p.offsetNext, p.offsetVisible = 0, 0
	p.pending.reset(p.active(), 0, nil)
	p.dedup.reset()
	p.offsets.clear()
	if err := p.offsets.set(purgeSlot, m.current.PurgeGeneration, true); err != nil {
		m.finish(err)
		return
	}
	p.offsets.enqueue(&m.cleared)
	p.offsets.kick()
}

// offsetsCleared finishes a purge once the cleared offsets are stored, so
// a crash after the acknowledgement cannot bring them back.
func (m *maintenance) offsetsCleared(op *OffsetOp) {
	m.finish(op.Err)
}

func (m *maintenance) finish(err error) {
	p := m.p
	op := m.current
	m.current = nil
	m.victims = nil
	if op.SegmentsDeleted > 0 {
		p.logger.Info("segments deleted", "count", op.SegmentsDeleted, "bytes", op.BytesDeleted)
	}
	op.Err = err
	op.Done(op)
	p.resume()
}

func (m *maintenance) failAll(err error) {
	if m.current != nil && !m.started {
		op := m.current
		m.current = nil
		op.Err = err
		op.Done(op)
	}
}
