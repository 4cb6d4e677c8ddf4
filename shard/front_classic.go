package shard

import (
	"encoding/binary"
	"time"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
	"github.com/whippetio/whippet/wire/classic"
)

// # Classic (0.8) connections on the client port
//
// The first bytes of every connection go through classic.Detect
// (PROTOCOL-0.8.md §11.2) before any frame is sized: a VSR verdict keeps
// the 0.9 front as it is; a classic verdict binds the connection to a
// session marked classic, whose frames are [length u32][code u32][body];
// a reject, or a VSR candidate that shows no valid 256-byte request header
// within classic.DetectCandidateDeadline, closes the connection without a
// reply (the framing is unknown, so any reply could be misread).
//
// A classic session runs its requests one at a time (the protocol is
// lockstep). Ping and the two logins are answered here; every other
// command is rewritten into the 0.9 request it stands for and queued on
// the session like a 0.9 frame, so it takes the same metadata and data
// paths, rights checks and ordering; its 0.9 reply is rewritten into the
// classic one when it is released (classicRelease).
//
// Classic invariants:
//
//  1. A connection's framing is decided once, on its first bytes, and
//     never changes; a classic connection is never sent a 0.9 frame (its
//     replies are rewritten, and a stale member gets status 30, not an
//     eviction frame).
//  2. Every classic frame delivered is answered by exactly one classic
//     reply, in arrival order, unless the connection closes first; at most
//     one classic request runs at a time.
//  3. A refused body is drained before the reply (the stream stays in
//     step), except one the server will not read, after whose reply the
//     connection closes.
//  4. A classic request reaches the metadata and the partitions only as
//     the 0.9 request it stands for, through the session's order queue.

// connFrameSizer is a Handler that sizes frames per connection.
type connFrameSizer interface {
	connFrameBytes(conn *Conn, head []byte) (int, error)
}

// frameBytes sizes the frame whose first bytes are head on this connection.
func (c *Conn) frameBytes(head []byte) (int, error) {
	if sizer, ok := c.handler.(connFrameSizer); ok {
		return sizer.connFrameBytes(c, head)
	}
	return c.handler.FrameBytes(head)
}

// classicDetecting marks a connection whose first bytes are a VSR
// candidate; its deadline timer closes it unless a verdict came first.
// fired records that the timer ran, after which it holds nothing of the
// connection (a connection may leave its shard only then).
type classicDetecting struct{ fired bool }

// connFrameBytes detects the framing of a new connection, then sizes its
// frames in that framing.
func (f *front) connFrameBytes(conn *Conn, head []byte) (int, error) {
	attached := conn.Attached()
	if s, ok := attached.(*session); ok {
		if s.classic != nil {
			return classicFrameBytes(head, f.server.options.FrameBytesMax), nil
		}
		return f.FrameBytes(head)
	}
	detection := classic.Detect(head)
	switch detection.Verdict {
	case classic.VSR:
		return f.FrameBytes(head)
	case classic.Classic:
		if limit := f.server.options.ConnectionsMax; limit > 0 && f.server.clients.count() >= limit {
			return 0, ErrClassicConnectionsFull // past tcp.max_connections: refusing is the answer
		}
		f.startClassic(conn)
		return classicFrameBytes(head, f.server.options.FrameBytesMax), nil
	case classic.Reject:
		return 0, ErrClassicReject
	}
	if detection.Deadline && attached == nil {
		f.armDetectDeadline(conn)
	}
	return 0, nil
}

// armDetectDeadline closes conn if its framing is still unknown once
// classic.DetectCandidateDeadline has passed.
func (f *front) armDetectDeadline(conn *Conn) {
	marker := &classicDetecting{}
	conn.Attach(marker)
	_, err := f.shard.After(classic.DetectCandidateDeadline, func(time.Time) {
		marker.fired = true
		if conn.Attached() == marker && conn.state == connOpen {
			conn.close(ErrClassicReject)
		}
	})
	invariant.Assert(err == nil, "front: the detection timer fits")
}

// classicFrameBytes sizes a classic request: the 8-byte prologue alone
// when its body is refused unread (above the command's cap or the
// server's frame limit; serveClassic answers 3 and closes), else prologue
// and body.
func classicFrameBytes(head []byte, frameBytesMax int) int {
	if len(head) < classic.RequestPrologueBytes {
		return 0
	}
	admission := classic.Admit(head[:classic.RequestPrologueBytes], true)
	if admission.Action == classic.RefuseAndClose {
		return classic.RequestPrologueBytes
	}
	length := binary.LittleEndian.Uint32(head[0:4])
	size := 4 + int(max(length, classic.RequestCodeBytes))
	if size > frameBytesMax {
		return classic.RequestPrologueBytes
	}
	return size
}

// startClassic binds a new classic connection to its session.
func (f *front) startClassic(conn *Conn) {
	s := f.newSession(conn)
	s.classic = &classicConn{}
	conn.Attach(s)
}

// classicConn is the classic state of a session.
type classicConn struct {
	// queue holds classic frames received and not started; at most one
	// runs at a time (running).
	queue   [][]byte
	running bool
	// code is the classic command of the running request.
	code classic.Code
	// request numbers the 0.9 requests the session's commands become.
	request uint64
	// prelude holds 0.9 requests to run before the one a classic request
	// was translated into: a sync for a group member (classicPoll), the
	// leading parts of a split send (classicSend). pending counts the 0.9
	// requests of the running classic request not yet released: while
	// more than one is, the released one is a prelude, whose refusal
	// (swallowed) answers the classic request in place of its last reply.
	// answered: the classic request was answered before all of them were
	// released (an eviction).
	prelude   []classicPrelude
	pending   int
	swallowed classic.Status
	answered  bool
	// closing: the reply being sent is the last one (a refused oversize
	// body, a stale client); the connection drains after it.
	closing bool
	// stale: the heartbeat check removed the session from its groups; its
	// next request is answered 30 StaleClient.
	stale bool
	// cursor is the round-robin position of server-picked group polls,
	// per group.
	cursor map[classicGroupKey]uint32
}

type classicGroupKey struct{ stream, topic, group uint32 }

// classicPrelude is one 0.9 request queued before a translated one.
type classicPrelude struct {
	code wire.Code
	body wire.Body
}

// onClassicFrame queues a classic frame and runs the queue.
func (f *front) onClassicFrame(s *session, frame []byte) {
	if s.evicted || s.classic.closing {
		f.shard.Release(frame)
		s.conn.forgetFrame()
		return
	}
	s.lastSeen = time.Now()
	s.classic.queue = append(s.classic.queue, frame)
	f.runClassic(s)
}

// runClassic starts the next classic frame once the previous one answered.
func (f *front) runClassic(s *session) {
	cc := s.classic
	for !cc.running && len(cc.queue) > 0 && !s.closed && !cc.closing {
		frame := cc.queue[0]
		copy(cc.queue, cc.queue[1:])
		cc.queue[len(cc.queue)-1] = nil
		cc.queue = cc.queue[:len(cc.queue)-1]
		cc.running = true
		f.serveClassic(s, frame)
	}
}

// classicAnswer sends a classic reply for the running request and starts
// the next one.
func (f *front) classicAnswer(s *session, reply []byte) {
	cc := s.classic
	invariant.Assert(cc.running, "front: a classic answer has a running request")
	cc.running = false
	_ = s.conn.Reply(reply) // a closed connection drops it; OnClose cleans up
	if cc.closing {
		s.conn.drain()
		return
	}
	f.runClassic(s)
}

// classicStatus answers the running request with an empty error reply.
func (f *front) classicStatus(s *session, status classic.Status) {
	f.classicAnswer(s, f.classicBuffer(classic.AppendErrorReply(nil, status)))
}

// classicBuffer copies an encoded reply into a buffer of the shard's pool.
func (f *front) classicBuffer(encoded []byte) []byte {
	buf := f.shard.Buffer(len(encoded))
	copy(buf, encoded)
	return buf
}

// serveClassic admits one classic frame (PROTOCOL-0.8.md §1, §3) and runs
// it: here for Ping and the logins, through the 0.9 paths otherwise.
func (f *front) serveClassic(s *session, frame []byte) {
	cc := s.classic
	defer f.shard.Release(frame)
	if cc.stale { // PROTOCOL-0.8.md §9 step 7: status 30, then close
		cc.closing = true
		f.classicStatus(s, classic.StatusStaleClient)
		return
	}
	admission := classic.Admit(frame[:classic.RequestPrologueBytes], s.session != 0)
	unread := len(frame) < 4+max(int(admission.Header.Length), classic.RequestCodeBytes)
	switch {
	case admission.Action == classic.RefuseAndClose || unread:
		cc.closing = true
		f.classicStatus(s, classic.StatusInvalidCommand)
		return
	case admission.Action == classic.Refuse:
		f.classicStatus(s, admission.Status)
		return
	}
	code := admission.Header.Code
	body := frame[classic.RequestPrologueBytes:]
	request, _, err := classic.DecodeRequest(code, body)
	if err != nil {
		f.classicStatus(s, classic.StatusOf(err))
		return
	}
	cc.code = code
	switch code {
	case classic.CodePing:
		f.classicAnswer(s, f.classicBuffer(classic.AppendReply(nil, classic.EmptyReply{})))
	case classic.CodeLoginUser, classic.CodeLoginWithPersonalAccessToken:
		f.classicLogin(s, request)
	case classic.CodeLogoutUser:
		f.endSession(s)
		f.classicAnswer(s, f.classicBuffer(classic.AppendReply(nil, classic.EmptyReply{})))
	default:
		f.classicForward(s, request)
	}
}

// classicForward rewrites request into its 0.9 form and queues it on the
// session; classicRelease answers it.
func (f *front) classicForward(s *session, request classic.DecodableRequest) {
	view := f.server.view.Load()
	code, body, status := f.classicTranslate(s, view, request)
	switch {
	case status != classic.StatusOK:
		s.classic.prelude = s.classic.prelude[:0]
		f.classicAnswer(s, f.classicBuffer(classicError(s.classic.code, status)))
		return
	case body == nil: // a group poll with no partition assigned
		s.classic.prelude = s.classic.prelude[:0]
		empty := classic.PollReply{}
		f.classicAnswer(s, f.classicBuffer(classic.AppendReply(nil, &empty)))
		return
	}
	cc := s.classic
	cc.pending = len(cc.prelude) + 1
	for i, prelude := range cc.prelude {
		f.classicEnqueue(s, prelude.code, prelude.body)
		cc.prelude[i] = classicPrelude{}
	}
	cc.prelude = cc.prelude[:0]
	f.classicEnqueue(s, code, body)
	f.runQueue(s)
}

// classicEnqueue queues the 0.9 request a classic command stands for.
func (f *front) classicEnqueue(s *session, code wire.Code, body wire.Body) {
	s.classic.request++
	header := wire.RequestHeader{Client: s.client, Session: s.session, Request: s.classic.request,
		Operation: code.Operation(), UserID: s.userID}
	if header.Operation == wire.OperationNonReplicated {
		header.Code = code
	}
	frame := f.shard.Buffer(wire.RequestBytes(body))
	wire.EncodeRequest(frame, header, body)
	s.order.queue = append(s.order.queue, frame)
}

// classicStale ends a silent group member's session the 0.8 way: it
// leaves its groups now, and its next request gets 30 StaleClient and
// closes the connection (a 0.9 eviction frame would not parse).
func (f *front) classicStale(s *session) {
	s.classic.stale = true
	f.endSession(s)
}

// classicClosed returns the frames a closed classic session will never
// run to the shard's pool.
func (f *front) classicClosed(s *session) {
	for i, frame := range s.classic.queue {
		f.shard.Release(frame)
		s.classic.queue[i] = nil
	}
	s.classic.queue = s.classic.queue[:0]
}
