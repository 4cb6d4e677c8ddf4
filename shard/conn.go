package shard

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// connState is where a connection is in its life; it only moves forward.
type connState uint8

const (
	connOpen     connState = iota // reading frames, sending replies
	connDraining                  // no more frames; closes once every reply is sent
	connClosing                   // waiting for its armed ops to end, then closes the fd
	connClosed                    // fd closed, slot free
)

// Conn is one TCP connection, owned by one shard: only that shard's thread
// reads or writes it, through the shard's backend. Its input side is a
// state machine over partial reads (a frame's head, then its body, in as
// many receives as it takes); its output side is a bounded queue of
// buffers sent in order, each resent from where a partial send stopped.
type Conn struct {
	shard    *Shard
	handler  Handler // the shard's client Handler, or its peer Handler
	peer     bool    // a peer connection (Options.PeerListen, Runtime.AdoptPeer)
	fd       int
	slot     uint32
	gen      uint32
	state    connState
	closeErr error
	attached any

	head      [frameHeadBytesMax]byte
	headLen   int
	frame     []byte // the frame being received, once its size is known
	frameLen  int
	inflight  int  // frames delivered whose reply is not yet sent
	recvArmed bool // a recv is armed (until its final completion)
	recvInto  bool // the armed recv is a RecvInto the frame, not multishot
	recvRoom  bool // the armed RecvInto fills the handler's room, not the frame (frameProgressNotifier)
	switching bool // the multishot recv is cancelled to receive into the frame
	canceling bool // a cancel of the armed recv is on its way
	paused    bool // reading stopped at the in-flight limit
	resuming  bool // queued on the shard's resume list
	large     bool // the last frame was large enough to receive straight in: read the next head with RecvOnce
	progress  bool // the handler watches the frame arrive: receive it in steps (frameProgressNotifier)
	parked    []byte

	// A move to another shard (conn_move.go): wished by the Handler,
	// started by cancelling the receive (moving), handed over by movedFrom.
	moveWanted bool
	moving     bool
	moveTarget int
	movedFrom  *Shard

	sendQueue     [sendQueueLenMax]outgoing // ring of buffers to send, in order
	sendHead      int
	repliesQueued int // replies in sendQueue
	sendLen       int
	sendOffset    int  // bytes of the buffer in flight already sent
	sendArmed     bool // a send is in flight
	// sendJoined is a buffer the queued buffers sendQueue[sendHead:+
	// sendCovers] were copied into, to go out in one send; nil when the
	// front buffer goes out alone (sendCovers 1).
	sendJoined []byte
	sendCovers int
	sendVec    [][]byte // the pieces of a vectored send in flight (startSendVec)
	evacuating bool     // the send in flight is cancelled to copy its spans out (evacuate)
}

// outgoing is one queued buffer; a reply frees an in-flight slot when sent.
type outgoing struct {
	buf   []byte
	reply bool
	spans *replySpans // records sent in place from the cache, or nil
}

// Shard returns the shard that owns the connection.
func (c *Conn) Shard() *Shard { return c.shard }

// Attach stores the handler's per-connection state.
func (c *Conn) Attach(value any) { c.attached = value }

// Attached returns what Attach stored.
func (c *Conn) Attached() any { return c.attached }

// Inflight returns the frames delivered whose reply is not yet sent.
func (c *Conn) Inflight() int { return c.inflight }

// Reply sends the answer to one delivered frame. The frame's in-flight
// slot is freed once the reply is sent, so a client that does not read
// its replies is paused like one that sends too many requests. The shard
// owns buf from now on and recycles it once it is sent. A reply to a
// closed connection is dropped (the peer is gone).
func (c *Conn) Reply(buf []byte) error { return c.replyWith(buf, nil) }

// Send queues buf for sending after everything queued before it, outside
// any request (a push). The shard owns buf from now on, except when Send
// returns ErrSendQueueFull.
func (c *Conn) Send(buf []byte) error {
	if c.state >= connClosing {
		c.shard.Release(buf)
		return ErrConnClosed
	}
	if c.sendLen-c.repliesQueued >= pushQueueLenMax {
		return ErrSendQueueFull
	}
	c.enqueue(outgoing{buf: buf})
	return nil
}

func (c *Conn) enqueue(queued outgoing) {
	c.sendQueue[(c.sendHead+c.sendLen)%sendQueueLenMax] = queued
	c.sendLen++
	if !c.sendArmed {
		c.startSend()
	}
}

// frameBytesLimit is the largest frame the connection takes: a peer link
// (a cluster's replica stream) carries vsr messages somewhat larger than
// the largest client frame.
func (c *Conn) frameBytesLimit() int {
	if c.peer {
		return peerFrameBytesMax
	}
	return frameBytesMax
}

// consumed frees the in-flight slot of a delivered frame that gets no
// reply (a one-way protocol, such as a cluster's replica stream).
func (c *Conn) consumed() {
	invariant.Assert(c.inflight > c.repliesQueued, "a consumed frame was delivered")
	c.inflight--
	if c.paused && !c.resuming && c.state == connOpen {
		c.resuming = true
		c.shard.resume = append(c.shard.resume, c)
	}
}

// replySent frees the in-flight slot of a request whose reply is out.
func (c *Conn) replySent() {
	invariant.Assert(c.repliesQueued > 0, "a sent reply was queued")
	invariant.Assert(c.inflight > 0, "a sent reply answers an in-flight frame")
	c.repliesQueued--
	c.inflight--
	if c.paused && !c.resuming && c.state == connOpen {
		c.resuming = true
		c.shard.resume = append(c.shard.resume, c)
	}
}

// Close closes the connection at once, dropping unsent replies.
func (c *Conn) Close() { c.close(ErrConnClosed) }

func (c *Conn) startSend() {
	invariant.Assert(!c.sendArmed, "one send in flight per connection")
	invariant.Assert(c.sendLen > 0, "send has a queued buffer")
	if c.sendOffset == 0 && c.sendJoined == nil {
		c.join()
	}
	var err error
	if queued := &c.sendQueue[c.sendHead]; c.sendJoined == nil && queued.spans != nil {
		err = c.startSendVec(queued)
	} else {
		front := c.sending()
		invariant.Assert(c.sendOffset < len(front), "a queued buffer has bytes to send")
		err = c.shard.backend.Send(c.fd, front[c.sendOffset:], c.token(tokenSend))
	}
	if err != nil {
		c.shard.fail(err)
		return
	}
	c.sendArmed = true
}

// sending is the buffer the send in flight (or the next) goes out from:
// the joined copy, or the front of the queue.
func (c *Conn) sending() []byte {
	if c.sendJoined != nil {
		return c.sendJoined
	}
	return c.sendQueue[c.sendHead].buf
}

// sendingBytes is the length of what the send in flight goes out from:
// the joined copy, or the front buffer with its spans.
func (c *Conn) sendingBytes() int {
	if c.sendJoined != nil {
		return len(c.sendJoined)
	}
	return c.sendQueue[c.sendHead].size()
}

// join copies the small buffers at the front of the queue into one, so
// that replies queued while a send was in flight (a pipelining client's)
// go out in one send instead of one per loop turn. Large buffers (poll
// replies) are sent as they are: copying them would cost more than the
// send it saves.
func (c *Conn) join() {
	c.sendCovers = 1
	if c.sendQueue[c.sendHead].spans != nil {
		return // a reply with spans goes out from where its bytes lie
	}
	total := len(c.sendQueue[c.sendHead].buf)
	for c.sendCovers < c.sendLen {
		next := &c.sendQueue[(c.sendHead+c.sendCovers)%sendQueueLenMax]
		size := len(next.buf)
		if next.spans != nil || total+size > sendJoinBytesMax {
			break
		}
		total += size
		c.sendCovers++
	}
	if c.sendCovers == 1 {
		return
	}
	joined := c.shard.Buffer(total)
	at := 0
	for index := range c.sendCovers {
		at += copy(joined[at:], c.sendQueue[(c.sendHead+index)%sendQueueLenMax].buf)
	}
	invariant.Assert(at == total, "a joined send holds every buffer it covers")
	c.sendJoined = joined
	bump(&c.shard.stats.sendsJoined, 1)
}

// sent drops the buffers a completed send covered, freeing the in-flight
// slots of the replies among them, and returns how many of them were not
// replies (a peer link's messages): its handler hears of each one.
func (c *Conn) sent() (nonReplies int) {
	if c.sendJoined != nil {
		c.shard.Release(c.sendJoined)
		c.sendJoined = nil
	}
	for range c.sendCovers {
		front := c.sendQueue[c.sendHead]
		c.sendQueue[c.sendHead] = outgoing{}
		c.sendHead = (c.sendHead + 1) % sendQueueLenMax
		c.sendLen--
		c.shard.Release(front.buf)
		c.shard.releaseSpans(front.spans)
		if front.reply {
			c.replySent()
		} else {
			nonReplies++
		}
	}
	c.sendOffset, c.sendCovers = 0, 0
	clear(c.sendVec) // no pointers into released spans
	return nonReplies
}

func (c *Conn) onSend(completion Completion) {
	invariant.Assert(c.sendArmed, "send completion has a send in flight")
	c.sendArmed = false
	evacuating := c.evacuating && c.state < connClosing
	if evacuating && completion.Errno == unix.ECANCELED {
		completion.Errno = 0 // cancelled by evacuate: nothing went out
	}
	c.evacuating = false
	if completion.Errno != 0 {
		c.close(fmt.Errorf("shard: send: %w", completion.Errno))
		c.finishClose()
		return
	}
	c.sendOffset += completion.Result
	bump(&c.shard.stats.bytesOut, completion.Result)
	length := c.sendingBytes()
	invariant.Assert(c.sendOffset <= length, "send never exceeds its buffer")
	notify := 0
	if c.sendOffset < length {
		bump(&c.shard.stats.sendsPartial, 1)
	} else {
		notify = c.sent()
	}
	if evacuating {
		c.flattenQueued(0) // nothing is in flight now
	}
	switch {
	case c.state >= connClosing:
		c.finishClose()
	case c.sendLen > 0:
		c.startSend()
	case c.state == connDraining:
		c.finishDrain()
	}
	if notify > 0 && c.state == connOpen {
		if notifier, ok := c.handler.(connSentNotifier); ok {
			for range notify {
				notifier.onSent(c)
			}
		}
	}
	if c.moveWanted {
		c.tryMove() // the last reply is out: the connection may be quiescent
	}
}

func (c *Conn) armRecv() {
	invariant.Assert(!c.recvArmed, "one recv armed per connection")
	invariant.Assert(c.state == connOpen, "only an open connection reads")
	// After a large frame, a multishot receive would copy most of the next
	// one out of the provided buffers before a switch to RecvInto could
	// land (with deferred task work it drains the socket in one go); one
	// buffer is enough to size the frame. A frame already sized that the
	// backend cannot receive into as is comes through the multishot one.
	arm := c.shard.backend.Recv
	if c.large && c.frame == nil {
		arm = c.shard.backend.RecvOnce
	}
	if err := arm(c.fd, c.token(tokenRecv)); err != nil {
		c.shard.fail(err)
		return
	}
	c.recvArmed, c.recvInto, c.switching, c.canceling, c.moving = true, false, false, false, false
}

// rearm arms the receive the connection needs next: into the handler's
// room when it lends one for the frame being assembled, else straight
// into a large frame, however little of it is missing (no multishot
// receive is armed to cancel, and one armed now would go on to copy the
// next frame out of receive buffers); else multishot.
func (c *Conn) rearm() {
	invariant.Assert(!c.recvArmed, "one recv armed per connection")
	if c.frame == nil || !c.straightIn(c.frame) {
		c.armRecv()
		return
	}
	if c.progress {
		if room := c.handler.(frameProgressNotifier).frameRoom(c, c.frame, c.frameLen); room != nil {
			invariant.Assert(len(room) == len(c.frame)-c.frameLen, "a room holds the rest of its frame")
			c.armRoom(room[:min(len(room), progressRecvBytes)])
			return
		}
	}
	end := len(c.frame)
	if c.progress {
		end = min(end, c.frameLen+progressRecvBytes)
	}
	err := c.shard.backend.RecvInto(c.fd, c.frame[c.frameLen:end], c.token(tokenRecvInto))
	if err != nil {
		c.shard.fail(err)
		return
	}
	c.recvArmed, c.recvInto, c.switching, c.canceling, c.moving = true, true, false, false, false
	bump(&c.shard.stats.recvsInto, 1)
}

// armRoom receives the frame's next bytes into room, the handler's.
func (c *Conn) armRoom(room []byte) {
	if err := c.shard.backend.RecvIntoOwned(c.fd, room, c.token(tokenRecvInto)); err != nil {
		c.progress = c.handler.(frameProgressNotifier).frameReceived(c, c.frame, c.frameLen, 0)
		c.shard.fail(err)
		return
	}
	c.recvArmed, c.recvInto, c.recvRoom, c.switching, c.canceling, c.moving = true, true, true, false, false, false
	bump(&c.shard.stats.recvsInto, 1)
}

func (c *Conn) onRecv(completion Completion) {
	invariant.Assert(c.recvArmed, "recv completion has a recv armed")
	invariant.Assert(!c.recvInto, "a multishot completion for a multishot recv")
	if !completion.More {
		c.recvArmed = false
	}
	switch {
	case c.recvFinished(completion):
	case c.state != connOpen:
		c.finishClose() // draining or closing: the bytes are not wanted
	case c.paused:
		invariant.Assert(len(c.parked)+len(completion.Data) <= pausedInputBytesMax, "parked input fits its limit")
		c.parked = append(c.parked, completion.Data...)
	default:
		bump(&c.shard.stats.bytesIn, len(completion.Data))
		c.consume(completion.Data)
		c.afterInput()
	}
}

// afterInput arms the next receive once the armed one ended (a RecvOnce
// or RecvInto, or a multishot receive's last completion), or switches a
// multishot receive to receiving into the frame when much of it is still
// missing.
func (c *Conn) afterInput() {
	switch {
	case c.state >= connClosing:
		c.finishClose()
	case c.state != connOpen || c.paused:
	case !c.recvArmed:
		c.rearm()
	case !c.recvInto && !c.switching && c.wantsRecvInto():
		c.switching = true
		c.cancelRecv() // its final completion re-arms into the frame
	}
}

// wantsRecvInto reports whether a multishot receive should give way to
// receiving the frame being assembled directly: much of it is missing,
// and it is received straight in.
func (c *Conn) wantsRecvInto() bool {
	if c.frame == nil || len(c.frame)-c.frameLen < directRecvBytesMin {
		return false
	}
	return c.straightIn(c.frame)
}

// straightIn reports whether frame is received straight into its buffer:
// it is large, and the backend can lend the buffer to the kernel as is (a
// bounce would hold pooled memory for the whole receive and save no
// copy).
func (c *Conn) straightIn(frame []byte) bool {
	return len(frame) >= directRecvBytesMin && c.shard.backend.Direct(frame)
}

// onRecvInto handles the one completion of a receive into the frame.
func (c *Conn) onRecvInto(completion Completion) {
	invariant.Assert(c.recvArmed && c.recvInto, "a RecvInto completion has a RecvInto armed")
	c.recvArmed, c.recvInto = false, false
	if c.recvRoom {
		c.recvRoom = false
		c.onRoomRecv(completion)
		return
	}
	switch {
	case c.recvFinished(completion):
	case c.state != connOpen:
		c.onRecvEnded()
	default:
		invariant.Assert(c.frame != nil, "a RecvInto fills a frame")
		invariant.Assert(c.frameLen+completion.Result <= len(c.frame), "a RecvInto stays within its frame")
		bump(&c.shard.stats.bytesIn, completion.Result)
		bump(&c.shard.stats.bytesDirect, completion.Result)
		c.frameLen += completion.Result
		c.frameGrew()
		if c.state == connOpen && c.inflight == inflightRequestsMax {
			c.pause()
		}
		c.afterInput()
	}
}

// onRoomRecv handles the completion of a receive into the handler's
// room: its bytes are the frame's, and the handler hears of them (its
// loan ends) whatever else the completion means.
func (c *Conn) onRoomRecv(completion Completion) {
	n := completion.Result
	invariant.Assert(c.frame != nil && c.frameLen+n <= len(c.frame), "a room's receive stays within its frame")
	c.frameLen += n
	c.progress = c.handler.(frameProgressNotifier).frameReceived(c, c.frame, c.frameLen, n)
	switch {
	case n == 0:
		c.recvFinished(completion)
	case c.state != connOpen:
		c.onRecvEnded()
	default:
		bump(&c.shard.stats.bytesIn, n)
		bump(&c.shard.stats.bytesDirect, n)
		bump(&c.shard.stats.bytesRoom, n)
		if c.frameLen == len(c.frame) {
			c.deliver()
		}
		if c.state == connOpen && c.inflight == inflightRequestsMax {
			c.pause()
		}
		c.afterInput()
	}
}

// recvFinished handles a receive's completion that brought no bytes (a
// cancel's, an error's or end of stream's) and reports whether it was one.
func (c *Conn) recvFinished(completion Completion) bool {
	switch {
	case completion.Errno == unix.ECANCELED:
		c.onRecvEnded()
	case completion.Errno != 0:
		c.close(fmt.Errorf("shard: recv: %w", completion.Errno))
		c.finishClose() // close returned early when already closing
	case completion.Result == 0:
		c.onPeerClosed()
	default:
		return false
	}
	return true
}

// onRecvEnded handles the final completion of a cancelled recv: a pause,
// a drain or a close asked for it.
func (c *Conn) onRecvEnded() {
	switch c.state {
	case connOpen:
		if c.moving {
			c.moving = false
			if c.moveWanted && c.quiescent() {
				c.handOver()
				return
			}
		}
		if !c.paused {
			c.rearm() // a switch into the frame, a move called off, or a pause that ended before its cancel landed
		}
	case connDraining:
		c.finishDrain()
	default:
		c.finishClose()
	}
}

// onPeerClosed handles end of stream, the final completion of a receive.
func (c *Conn) onPeerClosed() {
	switch {
	case c.state != connOpen:
		c.onRecvEnded() // already draining or closing: this was the receive's end
	case c.headLen > 0 || c.frame != nil || len(c.parked) > 0:
		c.close(ErrPeerClosedMidFrame)
	default:
		c.drain()
	}
}

// consume runs received bytes through the frame state machine; at the
// in-flight limit it parks what is left and pauses reading.
func (c *Conn) consume(data []byte) {
	for len(data) > 0 && c.state == connOpen {
		if c.inflight == inflightRequestsMax {
			c.pause()
			invariant.Assert(len(c.parked)+len(data) <= pausedInputBytesMax, "parked input fits its limit")
			c.parked = append(c.parked, data...)
			return
		}
		if c.frame == nil {
			data = c.consumeHead(data)
			continue
		}
		n := copy(c.frame[c.frameLen:], data)
		c.frameLen += n
		data = data[n:]
		c.frameGrew()
	}
}

// frameGrew delivers the frame being assembled once it is whole, else
// shows a handler that watches it what arrived (frameProgressNotifier).
func (c *Conn) frameGrew() {
	switch {
	case c.frameLen == len(c.frame):
		c.deliver()
	case c.progress:
		c.progress = c.handler.(frameProgressNotifier).onFrameProgress(c, c.frame, c.frameLen)
	}
}

// deliver hands the completed frame to the handler.
func (c *Conn) deliver() {
	frame := c.frame
	c.frame, c.frameLen = nil, 0
	c.large = c.straightIn(frame)
	c.inflight++
	bump(&c.shard.stats.framesIn, 1)
	c.handler.OnFrame(c, frame)
}

// consumeHead gathers header bytes until the handler can size the frame,
// then starts the frame with them; it returns the bytes not yet used.
func (c *Conn) consumeHead(data []byte) []byte {
	take := min(len(data), frameHeadBytesMax-c.headLen)
	copy(c.head[c.headLen:], data[:take])
	size, err := c.frameBytes(c.head[:c.headLen+take])
	switch {
	case err != nil:
		c.close(fmt.Errorf("%w: %w", ErrFrameHeader, err))
		return nil
	case size > c.frameBytesLimit():
		c.close(fmt.Errorf("%w: %d bytes", ErrFrameTooLarge, size))
		return nil
	case size == 0 && c.headLen+take == frameHeadBytesMax:
		c.close(ErrFrameHeader)
		return nil
	case size == 0:
		c.headLen += take
		return data[take:]
	}
	invariant.Assert(size > 0, "a sized frame has bytes")
	// Bytes of data already copied into head may belong to this frame or
	// the next; only those before data are taken from head.
	c.frame = c.shard.frameBuffer(size)
	c.frameLen = copy(c.frame, c.head[:c.headLen])
	notifier, watched := c.handler.(frameProgressNotifier)
	c.progress = watched && notifier.watchesFrame(c, size)
	c.headLen = 0
	return data
}

func (c *Conn) pause() {
	invariant.Assert(c.state == connOpen, "only an open connection pauses")
	if c.paused {
		return
	}
	c.paused = true
	bump(&c.shard.stats.pauses, 1)
	if c.recvArmed {
		c.cancelRecv()
	}
}

// resume runs parked input after replies freed in-flight slots, and
// reads again when all of it was consumed.
func (c *Conn) resume() {
	c.resuming = false
	if c.state != connOpen || !c.paused {
		return
	}
	c.paused = false
	parked := c.parked
	c.parked = c.parked[:0]
	c.consume(parked) // re-parks into the same array behind what it reads
	if !c.paused && !c.recvArmed && c.state == connOpen {
		c.rearm()
	}
}

func (c *Conn) cancelRecv() {
	if c.canceling {
		return // one cancel per armed recv: its final completion will come
	}
	c.canceling = true
	kind := tokenRecv
	if c.recvInto {
		kind = tokenRecvInto
	}
	if err := c.shard.backend.Cancel(c.fd, c.token(kind)); err != nil {
		c.shard.fail(err)
	}
}

// drain stops reading; the connection closes once every in-flight frame
// is answered and sent.
func (c *Conn) drain() {
	if c.state != connOpen {
		return
	}
	c.state = connDraining
	if c.recvArmed {
		c.cancelRecv()
	}
	c.finishDrain()
}

func (c *Conn) finishDrain() {
	invariant.Assert(c.state == connDraining, "finishing a drain needs a draining connection")
	if c.inflight == 0 && c.sendLen == 0 {
		c.close(nil)
	}
}

// close starts closing: it cancels the armed ops, and finishClose ends it
// now or on their final completions. It may run the handler's OnClose.
func (c *Conn) close(err error) {
	if c.state >= connClosing {
		return
	}
	c.state = connClosing
	c.closeErr = err
	if c.recvArmed {
		c.cancelRecv()
	}
	if c.sendArmed {
		if cancelErr := c.shard.backend.Cancel(c.fd, c.token(tokenSend)); cancelErr != nil {
			c.shard.fail(cancelErr)
		}
	}
	c.finishClose()
}

// finishClose releases the fd once no op of the connection is in flight:
// closing it earlier could let a new connection reuse the number while the
// kernel still completes ops for the old one.
func (c *Conn) finishClose() {
	if c.state != connClosing || c.recvArmed || c.sendArmed {
		return
	}
	c.closeSocket()
	if c.sendJoined != nil {
		c.shard.Release(c.sendJoined)
		c.sendJoined, c.sendCovers = nil, 0
	}
	for c.sendLen > 0 {
		c.shard.Release(c.sendQueue[c.sendHead].buf)
		c.shard.releaseSpans(c.sendQueue[c.sendHead].spans) // no send is in flight: the kernel is done with them
		c.sendQueue[c.sendHead] = outgoing{}
		c.sendHead = (c.sendHead + 1) % sendQueueLenMax
		c.sendLen--
	}
	c.inflight -= c.repliesQueued
	c.repliesQueued = 0
	if c.frame != nil {
		c.shard.Release(c.frame)
		c.frame = nil
	}
	c.parked = nil
	c.shard.freeConn(c)
	c.handler.OnClose(c, c.closeErr)
}

// closeSocket marks the connection closed and closes its fd; no op of it
// is in flight on any shard.
func (c *Conn) closeSocket() {
	c.state = connClosed
	if err := unix.Close(c.fd); err != nil {
		c.shard.logger.Warn("shard: close connection", "fd", c.fd, "err", err.Error())
	}
}

func (c *Conn) token(kind tokenKind) uint64 {
	return makeToken(kind, c.gen, c.slot)
}
