package shard

import (
	"errors"
	"strings"
	"time"

	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
)

// call is one request on its way: decoded on the connection's shard,
// maybe run on shard 0 or on a partition's shard, and answered back on
// the connection's shard (done). Whoever holds the call owns it; the
// message that carries it between shards hands it over.
type call struct {
	origin  *front
	session *session
	frame   frameRef
	header  wire.RequestHeader
	code    wire.Code
	body    wire.Decoder
	userID  uint32
	client  metadata.ClientID
	// secret is a password hash or a raw token, prepared on the origin so
	// that shard 0 spends no time on it.
	secret string

	// The outcome: a pre-commit status, a committed rejection, or the
	// success payload (nil for none).
	status  wire.Status
	result  wire.Status
	payload wire.Body
	// joined records that the session became a group member.
	joined bool
	// send is this call's own copy of a SendMessages body: consecutive
	// sends of one connection run together, so they cannot share the
	// session's decode scratch.
	send wire.SendMessages
	// ranges are the partitions a metadata change makes the data plane
	// create, delete or purge, captured before the change.
	ranges []topicRange

	// A partition command's state between its start and its data op's
	// completion (next runs then, on the origin).
	target        dataTarget
	dataStarted   time.Time // when an append went to the data plane
	kind          DataKind
	missing       wire.Status
	buf           []byte
	spans         *replySpans // a poll's records left in the cache (startPoll)
	next          func(c *call, op *DataOp)
	confirmations wire.SendConfirmations
	confirmation  [1]wire.SendConfirmation
}

// newCall returns a cleared call from the shard's free list.
func (f *front) newCall() *call {
	if last := len(f.calls) - 1; last >= 0 {
		c := f.calls[last]
		f.calls[last] = nil
		f.calls = f.calls[:last]
		return c
	}
	return &call{}
}

// done answers c with reply and recycles it: nothing refers to a call
// once its origin answered it.
func (f *front) done(c *call, reply []byte) { f.doneSpans(c, reply, nil) }

// doneSpans is done for a poll reply whose records partly stay in the
// cache (spans, nil for none).
func (f *front) doneSpans(c *call, reply []byte, spans *replySpans) {
	s, frame := c.session, c.frame
	*c = call{}
	if len(f.calls) < callsFreeMax {
		f.calls = append(f.calls, c)
	}
	f.finishSpans(s, frame, reply, spans)
}

// dispatch runs a classified request: reads of the view here, metadata
// writes on shard 0, partition commands on their owning shard.
func (f *front) dispatch(s *session, frame frameRef, request *wire.Request, code wire.Code) {
	view := f.server.view.Load()
	if view == nil {
		f.waitReady(s, frame)
		return
	}
	if request.Header.Operation.Metadata() && s.writtenValid && request.Header.Request == s.writtenID {
		reply := f.shard.Buffer(len(s.written))
		copy(reply, s.written)
		f.finish(s, frame, reply) // a replay: the write applied once already
		return
	}
	body, known, err := s.requests.Decode(code, request.Body)
	if !known {
		f.finish(s, frame, f.statusReply(&request.Header, code, wire.StatusInvalidCommand))
		return
	}
	if err != nil {
		f.finish(s, frame, f.statusReply(&request.Header, code, bodyStatus(code, err)))
		return
	}
	c := f.newCall()
	c.origin, c.session, c.frame, c.header, c.code, c.body = f, s, frame, request.Header, code, body
	c.userID, c.client = s.userID, clientKey(s.client)
	if send, ok := body.(*wire.SendMessages); ok {
		c.send = *send
		c.body = &c.send
	}
	if read := localReads[code]; read != nil {
		if statsReads[code] {
			f.readWithStats(c, view, read)
			return
		}
		read(f, c, view)
		f.complete(c)
		return
	}
	if f.dispatchData(c, view) {
		return
	}
	if !f.prepareMeta(c) {
		f.complete(c)
		return
	}
	f.post(0, Message{Kind: kindMetaCall, Data: c})
}

// bodyStatus is the status of a request body that does not decode: an
// empty name gets its resource's invalid-name code and a malformed
// identifier InvalidIdentifier (§15 #3); anything else is decodeStatus.
func bodyStatus(code wire.Code, err error) wire.Status {
	var decodeErr *wire.DecodeError
	if errors.As(err, &decodeErr) {
		switch {
		case strings.Contains(decodeErr.What, "identifier"):
			return wire.StatusInvalidIdentifier
		case strings.HasSuffix(decodeErr.What, ": empty name"):
			if status := invalidNameStatus(code); status != wire.StatusInvalidCommand {
				return status
			}
		}
	}
	return decodeStatus(err)
}

// decodeStatus is the status of a body that does not decode: the code
// the error carries (an option error), else InvalidCommand (§4.1).
func decodeStatus(err error) wire.Status {
	status := wire.StatusOf(err)
	if status == wire.StatusError {
		return wire.StatusInvalidCommand
	}
	return status
}

// complete answers a call on its origin shard.
func (f *front) complete(c *call) {
	invariant.Assert(c.origin == f, "front: a call completes on its origin")
	if c.joined {
		f.joined(c)
	}
	var reply []byte
	switch {
	case c.status != wire.StatusOK:
		reply = f.statusReply(&c.header, c.code, c.status)
	case c.result != wire.StatusOK && c.code.ReplyOperation().ResultFramed():
		reply = f.shard.Buffer(wire.ResultReplyBytes)
		wire.EncodeResultReply(reply, wire.ReplyTo(&c.header, c.code.ReplyOperation()), c.result)
	case c.result != wire.StatusOK:
		reply = f.statusReply(&c.header, c.code, c.result)
	default:
		reply = f.encodeReply(&c.header, c.code.ReplyOperation(), c.payload)
	}
	if c.header.Operation.Metadata() && c.status == wire.StatusOK {
		c.session.written = append(c.session.written[:0], reply...)
		c.session.writtenID, c.session.writtenValid = c.header.Request, true
	}
	f.done(c, reply)
}

// joined records a Join on its session; if the session ended (or logged
// in again under a new client id) while the Join was on shard 0, the
// membership it made is ended at once, or it would hold partitions for
// a client that is gone.
func (f *front) joined(c *call) {
	s := c.session
	if s.closed || s.session == 0 || clientKey(s.client) != c.client {
		f.post(0, Message{Kind: kindClientGone, Data: &clientGone{client: c.client, sessionID: s.id}})
		return
	}
	s.inGroups = true
}

// callDone is the kindCallDone handler: the call came back.
func (f *front) callDone(c *call) { f.complete(c) }
