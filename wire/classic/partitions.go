package classic

// CreatePartitions (402): stream, topic, partitions_count u32. New partitions
// get ids count_before … count_before+n−1.
type CreatePartitions struct {
	Stream          Identifier
	Topic           Identifier
	PartitionsCount uint32
}

// DeletePartitions (403): stream, topic, partitions_count u32; the highest
// ids go.
type DeletePartitions struct {
	Stream          Identifier
	Topic           Identifier
	PartitionsCount uint32
}

func (CreatePartitions) Code() Code { return CodeCreatePartitions }
func (DeletePartitions) Code() Code { return CodeDeletePartitions }

// Decode reads the body; trailing bytes are ignored.
func (req *CreatePartitions) Decode(body []byte) (int, error) {
	return decodeTwoAndCount(body, &req.Stream, &req.Topic, &req.PartitionsCount)
}

// Decode reads the body; trailing bytes are ignored.
func (req *DeletePartitions) Decode(body []byte) (int, error) {
	return decodeTwoAndCount(body, &req.Stream, &req.Topic, &req.PartitionsCount)
}

// AppendBody writes the request body.
func (req CreatePartitions) AppendBody(dst []byte) ([]byte, error) {
	dst, err := appendIdentifiers(dst, req.Stream, req.Topic)
	if err != nil {
		return dst, err
	}
	return appendU32(dst, req.PartitionsCount), nil
}

// AppendBody writes the request body.
func (req DeletePartitions) AppendBody(dst []byte) ([]byte, error) {
	dst, err := appendIdentifiers(dst, req.Stream, req.Topic)
	if err != nil {
		return dst, err
	}
	return appendU32(dst, req.PartitionsCount), nil
}

func decodeTwoAndCount(body []byte, stream, topic *Identifier, count *uint32) (int, error) {
	r := reader{buf: body}
	*stream = r.identifier("stream_id")
	*topic = r.identifier("topic_id")
	*count = r.u32("partitions_count")
	return r.pos, r.result()
}

// DeleteSegments (503): stream, topic, partition_id u32, segments_count u32;
// the oldest sealed segments of the partition go.
type DeleteSegments struct {
	Stream        Identifier
	Topic         Identifier
	PartitionID   uint32
	SegmentsCount uint32
}

func (DeleteSegments) Code() Code { return CodeDeleteSegments }

// Decode reads the body; trailing bytes are ignored.
func (req *DeleteSegments) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.Stream = r.identifier("stream_id")
	req.Topic = r.identifier("topic_id")
	req.PartitionID = r.u32("partition_id")
	req.SegmentsCount = r.u32("segments_count")
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req DeleteSegments) AppendBody(dst []byte) ([]byte, error) {
	dst, err := appendIdentifiers(dst, req.Stream, req.Topic)
	if err != nil {
		return dst, err
	}
	return appendU32(appendU32(dst, req.PartitionID), req.SegmentsCount), nil
}
