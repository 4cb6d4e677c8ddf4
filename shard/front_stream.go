package shard

import (
	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
)

// # Streamed sends
//
// A large SendMessages request arrives over several receives (~200 µs
// for 1 MB on loopback) before its batch can be validated and written
// (~800 µs on the disk measured). The front therefore looks at the frame
// while it arrives (onFrameProgress, after each receive into it) and,
// when it may, has the partition append the batch while it arrives
// (DataShard.StreamOpen, engine stream.go): the arrived bytes are copied,
// validated and written in pieces, and the request, once whole, only
// finishes the append. Only 0.9 (VSR-framed) requests stream: a 0.8
// classic request is small-framed and lockstep, and its session stays on
// its shard, usually not its partition's.
//
// A frame streams when: it is at least streamFrameBytesMin; the session
// is logged in and its header is a well-formed SendMessages of this
// session with no request_checksum (a replay cache covers metadata
// writes only, so a send is never a replay); nothing of the session
// waits to start before it (it runs the moment it is whole); the view
// has its stream and topic and the user may send there; the partition
// (chosen once, here: a Balanced cursor moves only when the stream opens,
// and the request is delivered to the same partition) is owned by this
// shard; and the data plane and engine accept (DataShard.StreamOpen).
// Anything else, and any stream that ends without storing, goes the whole
// way unchanged. A frame whose batch fails validation mid-stream is
// answered, when whole, with the status admission gives. A stream whose
// request does not reach its append (connection closed, session evicted,
// the topic gone or the user's rights changed meanwhile) is dropped.
//
// Once the stream is open, the connection receives the batch's next bytes
// straight into the partition's journal when the data plane lends its
// room (frameRoom, frameReceived; DataShard.StreamRoom), so they are not
// copied out of the frame; the frame lacks them. A stream dropped for its
// request to append whole hands them back to the frame first (engine
// StreamDrop); one the front drops (streamEnd) never needs them back.

// sendStream is a session's streamed send: the frame being received.
type sendStream struct {
	frame     *byte // the frame's first byte, naming it; nil: none
	open      bool  // the engine stream is open (id)
	declined  bool  // looked at: the frame goes the whole way
	id        uint64
	key       PartitionKey
	batchAt   int   // the batch's position in the frame
	err       error // the batch failed validation: the request's answer
	body      wire.SendMessages
	requested wire.RequestHeader
}

// of returns the stream of frame, or nil.
func (st *sendStream) of(frame []byte) *sendStream {
	if st.frame == nil || len(frame) == 0 || st.frame != &frame[0] || st.declined {
		return nil
	}
	return st
}

// watchesFrame reports whether a frame of size bytes on conn may stream.
func (f *front) watchesFrame(conn *Conn, size int) bool {
	s, _ := conn.Attached().(*session)
	return s != nil && s.classic == nil && size >= streamFrameBytesMin && !f.server.options.SendStreamingOff
}

func (f *front) onFrameProgress(conn *Conn, frame []byte, arrived int) bool {
	if !f.watchesFrame(conn, len(frame)) {
		return false
	}
	s := conn.Attached().(*session)
	st := &s.stream
	if st.frame != &frame[0] {
		f.streamEnd(s)
		st.frame = &frame[0]
	}
	switch {
	case st.declined:
		return false
	case st.open:
		f.streamFeed(s, frame, arrived)
		return st.open
	case arrived < wire.HeaderBytes+streamHeadBytesMin:
		return true
	case !f.streamOpen(s, frame, arrived):
		st.declined = true
		return false
	}
	f.streamFeed(s, frame, arrived)
	return st.open
}

// streamOpen opens the stream of frame when it may (see above).
func (f *front) streamOpen(s *session, frame []byte, arrived int) bool {
	st, o := &s.stream, &s.order
	if s.session == 0 || s.evicted || s.closed || o.waiting || len(o.queue) > 0 ||
		(o.running > 0 && o.lane != laneSend) {
		return false
	}
	header := &st.requested
	if _, err := header.Decode(frame[:wire.HeaderBytes]); err != nil || header.Invalid() != "" ||
		header.Operation != wire.OperationSendMessages || header.Session != s.session ||
		!header.RequestChecksum.IsZero() || int(header.Size) != len(frame) {
		return false
	}
	view := f.server.view.Load()
	if view == nil {
		return false
	}
	bodyBytes := len(frame) - wire.HeaderBytes
	batchAt, err := st.body.DecodePrefix(frame[wire.HeaderBytes:arrived], bodyBytes)
	if err != nil {
		return false
	}
	stream := view.streamOf(st.body.Stream)
	topic := topicOf(stream, st.body.Topic)
	if topic == nil || len(topic.Partitions) == 0 || !view.access(s.userID).sendMessages(stream.ID, topic.ID) {
		return false
	}
	partition, ok := f.peekPartition(stream.ID, topic, st.body.Partitioning)
	if !ok {
		return false
	}
	key := PartitionKey{Stream: stream.ID, Topic: topic.ID, Partition: partition}
	batchAt += wire.HeaderBytes
	id, ok := f.server.data.Local(f.shard).StreamOpen(key, frame[batchAt:arrived], len(frame)-batchAt)
	if !ok {
		return false
	}
	f.chosePartition(stream.ID, topic, st.body.Partitioning) // the choice is made
	st.open, st.id, st.key, st.batchAt, st.err = true, id, key, batchAt, nil
	return true
}

// streamFeed hands the stream what arrived; a stream that fails ends.
func (f *front) streamFeed(s *session, frame []byte, arrived int) {
	st := &s.stream
	err := f.server.data.Local(f.shard).StreamFeed(st.key, st.id, frame[st.batchAt:arrived])
	if err == nil {
		return
	}
	f.streamFailed(st, err)
}

// streamFailed notes that the stream ended: the request is appended
// whole, or answered with the batch's fault.
func (f *front) streamFailed(st *sendStream, err error) {
	st.open = false
	if isInvalidBatch(err) {
		st.err = err
	}
}

// frameRoom lends the connection the open stream's journal room for the
// frame's next bytes (frameProgressNotifier): the stream took every byte
// so far, fed after each receive into the frame.
func (f *front) frameRoom(conn *Conn, frame []byte, _ int) []byte {
	s, _ := conn.Attached().(*session)
	if s == nil {
		return nil
	}
	st := s.stream.of(frame)
	if st == nil || !st.open {
		return nil
	}
	if s.cancelRoom == nil {
		s.cancelRoom = conn.cancelRecv // the session's connection never changes
	}
	return f.server.data.Local(f.shard).StreamRoom(st.key, st.id, frame[st.batchAt:], s.cancelRoom)
}

// frameReceived hands the stream the n bytes received into its room
// (frameProgressNotifier).
func (f *front) frameReceived(conn *Conn, frame []byte, _, n int) bool {
	s := conn.Attached().(*session)
	st := s.stream.of(frame)
	invariant.Assert(st != nil && st.open, "a room's bytes return to its open stream")
	if err := f.server.data.Local(f.shard).StreamReceived(st.key, st.id, n); err != nil {
		f.streamFailed(st, err)
	}
	return st.open
}

// streamEnd drops the session's stream: its frame was answered, or will
// not be (the connection closed, the session was evicted).
func (f *front) streamEnd(s *session) {
	st := &s.stream
	if st.open {
		f.server.data.Local(f.shard).StreamAbort(st.key, st.id)
	}
	st.frame, st.open, st.declined, st.id, st.err = nil, false, false, 0, nil
}

// streamSend runs a send whose frame was streamed, on the partition the
// stream chose: it finishes the stream (DataOp.Stream), answers the
// validation failure found meanwhile, or, when the stream ended without
// storing, appends the batch whole.
func (f *front) streamSend(c *call, st *sendStream, stream *metadata.Stream, topic *metadata.Topic,
	request *wire.SendMessages) {
	if st.key.Stream != stream.ID || st.key.Topic != topic.ID || int(st.key.Partition) >= len(topic.Partitions) {
		c.status = wire.StatusResourceNotFound // the topic changed meanwhile
		f.streamEnd(c.session)                 // its engine stream, if open, must not hold the partition
		f.complete(c)
		return
	}
	c.target = dataTarget{stream: stream, topic: topic, partition: st.key.Partition}
	id, err := uint64(0), st.err
	if st.open {
		id, st.open = st.id, false // the op finishes it
	}
	f.streamEnd(c.session)
	if err != nil {
		c.status = decodeStatus(err)
		f.complete(c)
		return
	}
	// Without id the stream ended without storing: the batch is checked
	// and appended whole, as any other.
	f.appendBatch(c, request.Batch, id)
}
