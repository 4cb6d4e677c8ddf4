package wire

// AckLevel says whether an offset write waits for replication (§1.9).
type AckLevel uint8

// Ack levels.
const (
	AckNone   AckLevel = 0
	AckQuorum AckLevel = 1
)

func (d *decoder) ackLevel() AckLevel {
	start := d.pos
	ack := AckLevel(d.u8("ack level"))
	if d.err == nil && ack > AckQuorum {
		d.failAt(start, "ack level unknown")
	}
	return ack
}

// OffsetTarget names one consumer's offset in one partition (§6.8).
type OffsetTarget struct {
	Consumer  Consumer
	Stream    Identifier
	Topic     Identifier
	Partition OptionalPartition
}

func (t *OffsetTarget) size() int {
	return t.Consumer.EncodedSize() + t.Stream.EncodedSize() + t.Topic.EncodedSize() + optionalPartitionBytes
}

func (e *encoder) offsetTarget(t *OffsetTarget) {
	e.consumer(t.Consumer)
	e.identifier(t.Stream)
	e.identifier(t.Topic)
	e.optionalPartition(t.Partition)
}

func (d *decoder) offsetTarget() OffsetTarget {
	return OffsetTarget{
		Consumer:  d.consumer(),
		Stream:    d.identifier("stream id"),
		Topic:     d.identifier("topic id"),
		Partition: d.optionalPartition(),
	}
}

// GetConsumerOffset reads a stored offset (§6.8).
type GetConsumerOffset struct {
	OffsetTarget
}

// EncodedSize returns the body size.
func (r *GetConsumerOffset) EncodedSize() int { return r.size() }

// Encode writes the body.
func (r *GetConsumerOffset) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.offsetTarget(&r.OffsetTarget)
	return e.done(size)
}

// Decode reads the body.
func (r *GetConsumerOffset) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.OffsetTarget = d.offsetTarget()
	return d.finish()
}

// StoreConsumerOffset stores an offset (§6.8).
type StoreConsumerOffset struct {
	OffsetTarget
	Offset uint64
	Ack    AckLevel
}

// EncodedSize returns the body size.
func (r *StoreConsumerOffset) EncodedSize() int { return r.size() + 8 + 1 }

// Encode writes the body.
func (r *StoreConsumerOffset) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.offsetTarget(&r.OffsetTarget)
	e.u64(r.Offset)
	e.u8(uint8(r.Ack))
	return e.done(size)
}

// Decode reads the body.
func (r *StoreConsumerOffset) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.OffsetTarget = d.offsetTarget()
	r.Offset = d.u64("offset")
	r.Ack = d.ackLevel()
	return d.finish()
}

// DeleteConsumerOffset deletes a stored offset (§6.8).
type DeleteConsumerOffset struct {
	OffsetTarget
	Ack AckLevel
}

// EncodedSize returns the body size.
func (r *DeleteConsumerOffset) EncodedSize() int { return r.size() + 1 }

// Encode writes the body.
func (r *DeleteConsumerOffset) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.offsetTarget(&r.OffsetTarget)
	e.u8(uint8(r.Ack))
	return e.done(size)
}

// Decode reads the body.
func (r *DeleteConsumerOffset) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.OffsetTarget = d.offsetTarget()
	r.Ack = d.ackLevel()
	return d.finish()
}

// ConsumerOffsetInfo is a GetConsumerOffset reply; an empty payload means
// nothing is stored (§7.7).
type ConsumerOffsetInfo struct {
	PartitionID   uint32
	CurrentOffset uint64
	StoredOffset  uint64
}

// EncodedSize returns 20.
func (o *ConsumerOffsetInfo) EncodedSize() int { return 20 }

// Encode writes the payload.
func (o *ConsumerOffsetInfo) Encode(dst []byte) int {
	e := newEncoder(dst, 20)
	e.u32(o.PartitionID)
	e.u64(o.CurrentOffset)
	e.u64(o.StoredOffset)
	return e.done(20)
}

// Decode reads the payload.
func (o *ConsumerOffsetInfo) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	o.PartitionID = d.u32("partition id")
	o.CurrentOffset = d.u64("current offset")
	o.StoredOffset = d.u64("stored offset")
	return d.finish()
}
