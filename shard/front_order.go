package shard

import (
	"encoding/binary"
	"time"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
)

// A connection's requests start in arrival order and their replies leave
// in that order. A request starts once every earlier one has answered,
// except within two lanes whose consecutive requests run together:
//
//   - SendMessages: appends to different partitions are independent, and
//     appends to one partition keep their order on the way to its owner
//     (one FIFO queue per pair of shards), so a pipelining producer is not
//     held to one round trip per batch;
//   - PollMessages without auto-commit: they only read.
//
// Anything else (a poll that commits, a metadata write, a read of the
// metadata) waits for every earlier request, and so sees what they did; a
// poll after sends waits for the sends.

// frameRef is a frame with its place in its connection's order.
type frameRef struct {
	buf     []byte
	seq     uint64
	started time.Time // when the request started, for the latency table
}

// order is a session's request sequencing state.
type order struct {
	queue    [][]byte // received, not started
	running  int      // started, reply not yet released
	lane     lane     // the lane of the running requests
	waiting  bool     // the head waits for the metadata to open
	seqStart uint64   // sequence of the next request to start
	seqReply uint64   // sequence of the next reply to release
	replies  [queuedFramesMax]pendingReply
}

// pendingReply is a finished request whose reply waits for earlier ones.
type pendingReply struct {
	done  bool
	frame []byte
	reply []byte      // nil: answered by silence
	spans *replySpans // a poll reply's records sent from the cache, or nil
}

// lane is a class of requests that may run together.
type lane uint8

const (
	laneAlone lane = iota // runs with nothing else
	laneSend              // SendMessages
	lanePoll              // PollMessages without auto-commit
)

// Request header offsets (§2.2) the lane is read from, before decoding.
const (
	offsetRequestOperation = 176
	offsetRequestCode      = 196
)

// laneOf classifies a frame from its operation, its code and, for a
// poll, its last body byte (auto_commit, §6.7).
func laneOf(frame []byte) lane {
	if len(frame) <= wire.HeaderBytes {
		return laneAlone
	}
	switch wire.Operation(frame[offsetRequestOperation]) {
	case wire.OperationSendMessages:
		return laneSend
	case wire.OperationNonReplicated:
		code := wire.Code(binary.LittleEndian.Uint32(frame[offsetRequestCode:]))
		if code == wire.CodePollMessages && frame[len(frame)-1] == 0 {
			return lanePoll
		}
	}
	return laneAlone
}

// runQueue starts every queued frame the order allows.
func (f *front) runQueue(s *session) {
	o := &s.order
	for len(o.queue) > 0 && !s.closed && !s.evicted && !o.waiting {
		frame := o.queue[0]
		next := laneOf(frame)
		if o.running > 0 && (next == laneAlone || next != o.lane) {
			return
		}
		copy(o.queue, o.queue[1:])
		o.queue[len(o.queue)-1] = nil
		o.queue = o.queue[:len(o.queue)-1]
		invariant.Assert(o.running < queuedFramesMax, "front: running requests fit the reply slots")
		o.running++
		o.lane = next
		seq := o.seqStart
		o.seqStart++
		f.serve(s, frameRef{buf: frame, seq: seq, started: f.shard.now()})
	}
}

// finish records frame's reply (nil: no reply, the frame is dropped),
// releases every reply now in order, and starts what may start.
func (f *front) finish(s *session, frame frameRef, reply []byte) {
	f.finishSpans(s, frame, reply, nil)
}

// finishSpans is finish for a poll reply whose records partly stay in the
// cache (spans, nil for none; see replySpans).
func (f *front) finishSpans(s *session, frame frameRef, reply []byte, spans *replySpans) {
	o := &s.order
	slot := &o.replies[frame.seq%queuedFramesMax]
	invariant.Assert(!slot.done, "front: a request finishes once")
	invariant.Assert(frame.seq >= o.seqReply && frame.seq < o.seqStart, "front: a finished request was started")
	*slot = pendingReply{done: true, frame: frame.buf, reply: reply, spans: spans}
	f.latency.observe(frame.buf, time.Since(frame.started))
	for o.running > 0 {
		head := &o.replies[o.seqReply%queuedFramesMax]
		if !head.done {
			break
		}
		f.release(s, head)
		*head = pendingReply{}
		o.seqReply++
		o.running--
	}
	if s.closed {
		return
	}
	if s.evicted {
		if o.running == 0 {
			f.dropQueue(s)
			s.conn.drain()
		}
		return
	}
	f.runQueue(s)
}

// release sends one reply (or forgets its frame) and frees the frame.
func (f *front) release(s *session, done *pendingReply) {
	if s.classic != nil {
		invariant.Assert(done.spans == nil, "front: a classic reply is rewritten, so it has its records in its buffer")
		f.classicRelease(s, done)
		return
	}
	f.shard.Release(done.frame)
	switch {
	case s.closed:
		if done.reply != nil {
			f.shard.Release(done.reply)
		}
		f.shard.releaseSpans(done.spans)
	case done.reply == nil:
		s.conn.forgetFrame()
	default:
		_ = s.conn.replyWith(done.reply, done.spans) // a closed connection drops it; OnClose cleans up
	}
}

// dropQueue forgets the frames an evicted session will never run.
func (f *front) dropQueue(s *session) {
	for _, queued := range s.order.queue {
		f.shard.Release(queued)
		s.conn.forgetFrame()
	}
	s.order.queue = s.order.queue[:0]
}

// waitReady parks a request until shard 0 has opened the metadata: it
// goes back to the head of the queue and the queue waits.
func (f *front) waitReady(s *session, frame frameRef) {
	o := &s.order
	invariant.Assert(frame.seq+1 == o.seqStart, "front: the parked request is the last started")
	o.seqStart--
	o.running--
	o.queue = append([][]byte{frame.buf}, o.queue...)
	o.waiting = true
	_, err := f.shard.After(notReadyRetryDelay, func(time.Time) {
		o.waiting = false
		if !s.closed {
			f.runQueue(s)
		}
	})
	invariant.Assert(err == nil, "front: the not-ready timer fits")
}
