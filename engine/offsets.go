package engine

import (
	"encoding/binary"
	"fmt"
	"path/filepath"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/zeebo/xxh3"
)

// ConsumerKind tells a single consumer from a consumer group.
type ConsumerKind uint8

const (
	ConsumerSingle ConsumerKind = 1
	ConsumerGroup  ConsumerKind = 2
	// purgeKind keys the slot holding the applied purge generation; it is
	// not a consumer and never a retention barrier.
	purgeKind ConsumerKind = 0xff
)

var purgeSlot = Consumer{Kind: purgeKind}

// Consumer keys a stored offset: a consumer's numeric id (or the XXH32 of
// its name, computed by the caller) or a consumer group's id.
type Consumer struct {
	Kind ConsumerKind
	ID   uint32
}

// OffsetOp stores or deletes a consumer offset. The caller owns it until
// Done runs.
type OffsetOp struct {
	Consumer Consumer
	Offset   uint64
	Done     func(*OffsetOp)
	Err      error
	queued   *OffsetOp
}

const offsetsFileName = "offsets"

// consumerOffsets keeps every stored offset of the partition in memory
// and in one file of 32-byte slots, one per consumer:
// [kind u8][reserved 3][id u32][offset u64][reserved 8][xxh3 of bytes 0..24 u64].
// A slot is rewritten in place; a torn slot fails its checksum and is
// ignored at load (the consumer may see redelivery, never a skip).
type consumerOffsets struct {
	p      *Partition
	file   File
	slots  map[Consumer]int
	values []offsetSlot
	free   []int
	dirty  []int
	// dirtyNext indexes the next slot of dirty to write.
	dirtyNext int
	op        Op
	buffer    []byte
	phase     offsetsPhase
	waiting   *OffsetOp
	syncing   *OffsetOp
	loadDone  func(error)
	// writing is the slot of the write in flight.
	writing int
	// failed is set by a failed slot write until one succeeds: dirty slots
	// then wait for the next store instead of holding Close up.
	failed bool
}

type offsetSlot struct {
	consumer Consumer
	offset   uint64
	present  bool
	dirty    bool
}

type offsetsPhase uint8

const (
	offsetsIdle offsetsPhase = iota
	offsetsOpening
	offsetsSyncingDirectory
	offsetsSizing
	offsetsReading
	offsetsWriting
	offsetsSyncing
)

func (o *consumerOffsets) init(p *Partition) {
	o.p = p
	o.slots = make(map[Consumer]int)
	o.op.Callback = o.callback
}

// load opens the offsets file and reads every slot.
func (o *consumerOffsets) load(done func(error)) {
	o.loadDone = done
	o.phase = offsetsOpening
	o.op.Code, o.op.Flags = OpOpen, OpenCreate
	o.op.Path = filepath.Join(o.p.options.Directory, offsetsFileName)
	o.p.storage.Submit(&o.op)
}

func (o *consumerOffsets) callback(op *Op) {
	switch o.phase {
	case offsetsOpening, offsetsSyncingDirectory, offsetsSizing, offsetsReading:
		o.loadStep(op)
	case offsetsWriting:
		o.writeDone(op)
	case offsetsSyncing:
		o.syncDone(op)
	default:
		invariant.Assert(false, "offsets completion in a busy phase")
	}
}

func (o *consumerOffsets) loadStep(op *Op) {
	if op.Err != nil {
		o.phase = offsetsIdle
		o.loadDone(fmt.Errorf("engine: load consumer offsets in %s: %w", o.p.options.Directory, op.Err))
		return
	}
	switch o.phase {
	case offsetsOpening:
		// The file may have just been created: its directory entry must be
		// durable before any offset stored in it is acknowledged.
		o.file = File(op.Result)
		o.phase = offsetsSyncingDirectory
		o.op.Code, o.op.File, o.op.Flags = OpSync, o.p.directory, OpenDirectory
	case offsetsSyncingDirectory:
		o.phase = offsetsSizing
		o.op.Code, o.op.File, o.op.Flags = OpSize, o.file, 0
	case offsetsSizing:
		if op.Result == 0 {
			o.phase = offsetsIdle
			o.loadDone(nil)
			return
		}
		o.phase = offsetsReading
		o.op.Code, o.op.Buffer, o.op.Position = OpRead, make([]byte, op.Result), 0
	case offsetsReading:
		o.parse(op.Buffer[:op.Result])
		o.op.Buffer = nil
		o.phase = offsetsIdle
		o.loadDone(nil)
		return
	}
	o.p.storage.Submit(&o.op)
}

func (o *consumerOffsets) parse(raw []byte) {
	for slot := 0; (slot+1)*offsetSlotBytes <= len(raw); slot++ {
		record := raw[slot*offsetSlotBytes:]
		consumer := Consumer{Kind: ConsumerKind(record[0]), ID: binary.LittleEndian.Uint32(record[4:])}
		o.values = append(o.values, offsetSlot{})
		valid := xxh3.Hash(record[:24]) == binary.LittleEndian.Uint64(record[24:])
		if !valid || consumer.Kind == 0 {
			if !valid && !allZero(record[:offsetSlotBytes]) {
				o.p.logger.Warn("ignoring torn consumer offset slot", "slot", slot)
			}
			o.free = append(o.free, slot)
			continue
		}
		o.values[slot] = offsetSlot{consumer: consumer, offset: binary.LittleEndian.Uint64(record[8:]), present: true}
		o.slots[consumer] = slot
	}
}

func (o *consumerOffsets) get(consumer Consumer) (uint64, bool) {
	slot, ok := o.slots[consumer]
	if !ok {
		return 0, false
	}
	return o.values[slot].offset, true
}

// set updates the in-memory value and queues its slot for writing.
func (o *consumerOffsets) set(consumer Consumer, offset uint64, present bool) error {
	slot, ok := o.slots[consumer]
	if !ok {
		if !present {
			return ErrOffsetNotFound
		}
		if len(o.free) > 0 {
			slot = o.free[len(o.free)-1]
			o.free = o.free[:len(o.free)-1]
		} else {
			if len(o.values) == consumersMax {
				return ErrTooManyConsumers
			}
			slot = len(o.values)
			o.values = append(o.values, offsetSlot{})
		}
		o.slots[consumer] = slot
	}
	value := &o.values[slot]
	value.consumer, value.offset, value.present = consumer, offset, present
	if !present {
		delete(o.slots, consumer)
		o.free = append(o.free, slot)
	}
	if !value.dirty {
		value.dirty = true
		o.dirty = append(o.dirty, slot)
	}
	return nil
}

// autoCommit stores offset unless a larger one is stored (a poll's
// auto-commit never rewinds).
func (o *consumerOffsets) autoCommit(consumer Consumer, offset uint64) {
	if stored, ok := o.get(consumer); ok && stored >= offset {
		return
	}
	if err := o.set(consumer, offset, true); err != nil {
		o.p.logger.Warn("auto-commit dropped", "error", err)
		return
	}
	o.kick()
}

// barrier returns the least stored offset, which retention must not pass.
func (o *consumerOffsets) barrier() (uint64, bool) {
	least, found := uint64(0), false
	for index := range o.values {
		value := &o.values[index]
		if value.present && value.consumer.Kind != purgeKind && (!found || value.offset < least) {
			least, found = value.offset, true
		}
	}
	return least, found
}

// kick writes the next dirty slot, or syncs and acknowledges the waiters
// once every slot is written.
func (o *consumerOffsets) kick() {
	if o.phase != offsetsIdle || o.p.fatal != nil {
		return
	}
	if o.dirtyNext < len(o.dirty) {
		slot := o.dirty[o.dirtyNext]
		o.dirtyNext++
		if o.dirtyNext == len(o.dirty) {
			o.dirty, o.dirtyNext = o.dirty[:0], 0
		}
		o.values[slot].dirty = false
		if o.buffer == nil { // a partition whose offsets were never stored holds no buffer
			o.buffer = o.p.options.Allocate(blockBytes)
			invariant.Assert(aligned(o.buffer) && len(o.buffer) >= blockBytes, "allocated offsets buffer fits")
		}
		o.encode(slot)
		o.writing = slot
		o.phase = offsetsWriting
		o.op.Code, o.op.File, o.op.Buffer = OpWrite, o.file, o.buffer[:offsetSlotBytes]
		o.op.Position = int64(slot * offsetSlotBytes)
		o.p.storage.Submit(&o.op)
		return
	}
	if o.waiting == nil {
		return
	}
	o.syncing, o.waiting = o.waiting, nil
	if o.p.options.Durability != DurabilityPersisted {
		o.acknowledge(nil)
		return
	}
	o.phase = offsetsSyncing
	o.op.Code, o.op.File, o.op.Buffer = OpSync, o.file, nil
	o.p.storage.Submit(&o.op)
}

func (o *consumerOffsets) encode(slot int) {
	record := o.buffer[:offsetSlotBytes]
	clear(record)
	value := &o.values[slot]
	if value.present {
		record[0] = byte(value.consumer.Kind)
		binary.LittleEndian.PutUint32(record[4:], value.consumer.ID)
		binary.LittleEndian.PutUint64(record[8:], value.offset)
		binary.LittleEndian.PutUint64(record[24:], xxh3.Hash(record[:24]))
	}
}

func (o *consumerOffsets) writeDone(op *Op) {
	o.phase = offsetsIdle
	o.failed = op.Err != nil
	if op.Err != nil {
		o.p.logger.Warn("consumer offset write failed", "error", op.Err)
		if !o.values[o.writing].dirty {
			o.values[o.writing].dirty = true
			o.dirty = append(o.dirty, o.writing)
		}
		o.syncing, o.waiting = o.waiting, nil
		o.acknowledge(op.Err)
		return
	}
	o.kick()
}

func (o *consumerOffsets) syncDone(op *Op) {
	o.phase = offsetsIdle
	if op.Err != nil {
		o.p.fail(&FatalError{Op: "fdatasync", Path: filepath.Join(o.p.options.Directory, offsetsFileName), Err: op.Err})
		return
	}
	o.acknowledge(nil)
	o.kick()
}

func (o *consumerOffsets) acknowledge(err error) {
	for o.syncing != nil {
		op := o.syncing
		o.syncing = op.queued
		op.queued = nil
		op.Err = err
		op.Done(op)
	}
	o.p.resume()
}

func (o *consumerOffsets) enqueue(op *OffsetOp) {
	op.queued = o.waiting
	o.waiting = op
}

func (o *consumerOffsets) busy() bool {
	return o.phase != offsetsIdle || o.waiting != nil || o.dirtyNext < len(o.dirty) && !o.failed
}

func (o *consumerOffsets) failAll(err error) {
	o.syncing = o.waiting
	o.waiting = nil
	for o.syncing != nil {
		op := o.syncing
		o.syncing = op.queued
		op.Err = err
		op.Done(op)
	}
}

// clear deletes every stored offset (purge).
func (o *consumerOffsets) clear() {
	for index := range o.values {
		if o.values[index].present && o.values[index].consumer.Kind != purgeKind {
			_ = o.set(o.values[index].consumer, 0, false) // a present slot always deletes
		}
	}
	o.kick()
}

// PurgeGeneration is the purge generation the last completed Purge
// recorded (0 before any): shard re-runs a purge the metadata holds with
// a higher generation, e.g. after a crash in the middle of one.
func (p *Partition) PurgeGeneration() uint64 {
	generation, _ := p.offsets.get(purgeSlot)
	return generation
}

// StoreOffset stores op.Offset for op.Consumer. On nil, op.Done runs once
// the slot is written (and synced under DurabilityPersisted). It fails with
// ErrInvalidOffset when the partition is empty or the offset is past
// CurrentOffset.
func (p *Partition) StoreOffset(op *OffsetOp) error {
	if p.fatal != nil {
		return p.fatal
	}
	if op.Consumer.Kind == purgeKind || p.offsetVisible == 0 || op.Offset > p.CurrentOffset() {
		return ErrInvalidOffset
	}
	if err := p.offsets.set(op.Consumer, op.Offset, true); err != nil {
		return err
	}
	p.offsets.enqueue(op)
	p.offsets.kick()
	return nil
}

// DeleteOffset deletes op.Consumer's offset; ErrOffsetNotFound when none.
func (p *Partition) DeleteOffset(op *OffsetOp) error {
	if p.fatal != nil {
		return p.fatal
	}
	if err := p.offsets.set(op.Consumer, 0, false); err != nil {
		return err
	}
	p.offsets.enqueue(op)
	p.offsets.kick()
	return nil
}

// StoredOffset returns the consumer's stored offset.
func (p *Partition) StoredOffset(consumer Consumer) (uint64, bool) {
	return p.offsets.get(consumer)
}
