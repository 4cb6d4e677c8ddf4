package classic

// GetConsumerOffset (120): consumer, stream, topic, optional partition.
// Reply: ConsumerOffsetReply, or empty when nothing is stored.
type GetConsumerOffset struct {
	Consumer  Consumer
	Stream    Identifier
	Topic     Identifier
	Partition OptionalPartition
}

// DeleteConsumerOffset (122): the same body as GetConsumerOffset.
type DeleteConsumerOffset struct {
	Consumer  Consumer
	Stream    Identifier
	Topic     Identifier
	Partition OptionalPartition
}

// StoreConsumerOffset (121): consumer, stream, topic, optional partition,
// offset u64 (no ack byte, unlike 0.9).
type StoreConsumerOffset struct {
	Consumer  Consumer
	Stream    Identifier
	Topic     Identifier
	Partition OptionalPartition
	Offset    uint64
}

func (GetConsumerOffset) Code() Code    { return CodeGetConsumerOffset }
func (DeleteConsumerOffset) Code() Code { return CodeDeleteConsumerOffset }
func (StoreConsumerOffset) Code() Code  { return CodeStoreConsumerOffset }

// offsetTarget is the shared head of the three offset commands.
func (r *reader) offsetTarget(c *Consumer, stream, topic *Identifier, p *OptionalPartition) {
	*c = r.consumer("consumer")
	*stream = r.identifier("stream_id")
	*topic = r.identifier("topic_id")
	*p = r.optionalPartition("partition_id")
}

func appendOffsetTarget(dst []byte, c Consumer, stream, topic Identifier, p OptionalPartition) ([]byte, error) {
	if err := firstError(c.check(), stream.check(), topic.check(), p.check()); err != nil {
		return dst, err
	}
	dst = appendConsumer(dst, c)
	dst = appendIdentifier(dst, stream)
	dst = appendIdentifier(dst, topic)
	return appendOptionalPartition(dst, p), nil
}

// Decode reads the body; trailing bytes are ignored.
func (req *GetConsumerOffset) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	r.offsetTarget(&req.Consumer, &req.Stream, &req.Topic, &req.Partition)
	return r.pos, r.result()
}

// Decode reads the body; trailing bytes are ignored.
func (req *DeleteConsumerOffset) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	r.offsetTarget(&req.Consumer, &req.Stream, &req.Topic, &req.Partition)
	return r.pos, r.result()
}

// Decode reads the body; trailing bytes are ignored.
func (req *StoreConsumerOffset) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	r.offsetTarget(&req.Consumer, &req.Stream, &req.Topic, &req.Partition)
	req.Offset = r.u64("offset")
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req GetConsumerOffset) AppendBody(dst []byte) ([]byte, error) {
	return appendOffsetTarget(dst, req.Consumer, req.Stream, req.Topic, req.Partition)
}

// AppendBody writes the request body.
func (req DeleteConsumerOffset) AppendBody(dst []byte) ([]byte, error) {
	return appendOffsetTarget(dst, req.Consumer, req.Stream, req.Topic, req.Partition)
}

// AppendBody writes the request body.
func (req StoreConsumerOffset) AppendBody(dst []byte) ([]byte, error) {
	dst, err := appendOffsetTarget(dst, req.Consumer, req.Stream, req.Topic, req.Partition)
	if err != nil {
		return dst, err
	}
	return appendU64(dst, req.Offset), nil
}

// ConsumerOffsetReply is [partition_id u32][current_offset u64]
// [stored_offset u64].
type ConsumerOffsetReply struct {
	PartitionID   uint32
	CurrentOffset uint64
	StoredOffset  uint64
}

// AppendBody writes the reply body.
func (o ConsumerOffsetReply) AppendBody(dst []byte) []byte {
	dst = appendU32(dst, o.PartitionID)
	dst = appendU64(dst, o.CurrentOffset)
	return appendU64(dst, o.StoredOffset)
}

// Decode reads the reply body. An empty body (nothing stored) is a decode
// error: check for it first.
func (o *ConsumerOffsetReply) Decode(body []byte) error {
	r := reader{buf: body}
	o.PartitionID = r.u32("partition_id")
	o.CurrentOffset = r.u64("current_offset")
	o.StoredOffset = r.u64("stored_offset")
	return r.exact("consumer offset")
}
