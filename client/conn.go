package client

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
)

// call is one request in flight. The reader goroutine fills reply or err
// and closes done.
type call struct {
	command   wire.Code
	operation wire.Operation
	stamped   bool // request id and session fields written
	request   uint64
	frame     *[]byte // pooled; see takeFrame
	// vector, instead of frame, holds a large SendMessages request as a
	// head and views of the caller's payloads (pooled; see prepare).
	vector *wire.RequestVector
	reply  wire.Reply
	buffer []byte // the reply frame; reply's slices point into it
	// into is where the reader receives the reply frame when it fits (a
	// caller reusing its buffer, PollMessagesInto); the connection's
	// receiving names the call, under its mu, once the reader writes into
	// it. A caller that gives up before that clears into instead.
	into     []byte
	err      error
	done     chan struct{}
	deadline time.Time // when the connection gives up waiting for the reply
}

// conn is one TCP connection carrying pipelined requests. The server
// answers in order (§5.6), so replies are paired with requests first in,
// first out; the request id of each reply is checked against its request.
type conn struct {
	netConn net.Conn
	slots   chan struct{} // one token per request in flight
	// vectored: the connection writes a net.Buffers with writev (plain
	// TCP or Unix sockets); through TLS it would be one record per piece.
	vectored bool

	writeMu sync.Mutex // serialises stamping and writing frames
	// pieces is the write's copy of a vector's pieces, which a vectored
	// write consumes; guarded by writeMu and cleared after each write.
	pieces  net.Buffers
	mu      sync.Mutex // guards pending and broken
	pending []*call
	// receiving is the pending call whose own buffer the reader is
	// receiving into (frameFor): its done closes only once the reader
	// is through with that buffer, even when the connection fails first.
	receiving *call
	broken    error
	done      chan struct{} // closed when the reader exits

	// The reply watchdog (deadline.go); guarded by mu.
	watchdog     *time.Timer
	replyTimeout time.Duration
	watching     bool // the watchdog is armed
}

func newConn(netConn net.Conn, depth int) *conn {
	invariant.Assert(depth > 0, "client: pipeline depth must be positive")
	c := &conn{netConn: netConn, slots: make(chan struct{}, depth), done: make(chan struct{})}
	switch netConn.(type) {
	case *net.TCPConn, *net.UnixConn:
		c.vectored = true
	}
	go c.readLoop()
	return c
}

// send stamps the frame (unless it is a replay), queues the call for its
// reply and writes the frame. The caller holds a pipeline slot; send
// releases it on failure. Writes are serialised by writeMu, not mu, so the
// reader can pair replies while a large write waits for the socket.
//
// The write runs on the calling goroutine and has returned when send
// does, so nothing reads the request (a vector's views of the caller's
// payloads included) after the call ends. When ctx ends while the write
// waits for the socket, the write is cut short and the connection fails:
// half a frame leaves the stream unusable anyway.
func (c *conn) send(ctx context.Context, pending *call, stamp func(*call)) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := ctx.Err(); err != nil {
		<-c.slots
		return err // a write that starts cancelled would only break the connection
	}
	if !pending.stamped {
		stamp(pending) // takes the client's lock: never call it under mu
	}
	c.mu.Lock()
	if c.broken != nil {
		c.mu.Unlock()
		<-c.slots
		return c.brokenErr()
	}
	c.pending = append(c.pending, pending)
	c.watchLocked(pending)
	c.mu.Unlock()
	if err := c.write(ctx, pending); err != nil {
		c.mu.Lock()
		c.breakLocked(errors.Join(ErrDisconnected, err))
		c.mu.Unlock()
		return c.brokenErr()
	}
	return nil
}

// write writes pending's request, its frame or its vector's pieces. The
// caller holds writeMu. When ctx ends during a write of at least
// writeCutBytesMin, a write deadline in the past cuts it short (send then
// fails the connection); when ctx ends just after, the deadline is
// cleared again, so a write that completed leaves the connection as it
// was. A shorter write is not worth the hook's cost on every request: it
// fits the socket's buffer unless the server stopped reading, and then
// the reply watchdog ends it.
func (c *conn) write(ctx context.Context, pending *call) error {
	if ctx.Done() != nil && (pending.vector != nil || len(*pending.frame) >= writeCutBytesMin) {
		cut := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			defer close(cut)
			_ = c.netConn.SetWriteDeadline(writeCutDeadline) // an error leaves the reply watchdog to end the write
		})
		defer func() {
			if !stop() {
				<-cut
				_ = c.netConn.SetWriteDeadline(time.Time{}) // as above
			}
		}()
	}
	if pending.vector == nil {
		_, err := c.netConn.Write(*pending.frame)
		return err
	}
	c.pieces = append(c.pieces[:0], pending.vector.Pieces...)
	written := c.pieces
	_, err := written.WriteTo(c.netConn) // consumes written, a copy of the pieces
	clear(c.pieces)                      // holds no view of the caller's payloads
	c.pieces = c.pieces[:0]
	return err
}

// acquire takes a pipeline slot, waiting while the pipe is full.
func (c *conn) acquire(ctx context.Context) error {
	select {
	case c.slots <- struct{}{}:
		return nil
	case <-c.done:
		return c.brokenErr()
	case <-ctx.Done():
		return ctx.Err()
	}
}

var errTimeout = errors.New("client: timed out waiting for the server")

// writeCutDeadline is a write deadline long past: setting it ends a write
// in progress at once.
var writeCutDeadline = time.Unix(1, 0)

func (c *conn) brokenErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken == nil {
		return ErrDisconnected
	}
	return c.broken
}

// readLoop reads reply frames and hands each to the oldest pending call.
func (c *conn) readLoop() {
	defer close(c.done)
	defer c.releaseReceiving()
	reader := bufio.NewReader(c.netConn)
	for {
		frame, err := readFrame(reader, c.frameFor)
		if err != nil {
			c.fail(errors.Join(ErrDisconnected, err))
			return
		}
		reply, _, err := wire.DecodeReply(frame)
		if err != nil {
			c.fail(errors.Join(ErrDesynchronized, err))
			return
		}
		if !c.deliver(reply, frame) {
			return
		}
		if reader.Buffered() == 0 {
			// The caller just woken sits in this P's next slot. Let it run
			// (and send its next request) before this goroutine's read,
			// which would only find the socket empty and park: the reply
			// reaches its caller without another thread being woken.
			runtime.Gosched()
		}
	}
}

// deliver completes the oldest call; it returns false when the connection
// must stop (eviction, a reply nobody asked for, a request id mismatch).
func (c *conn) deliver(reply wire.Reply, frame []byte) bool {
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.mu.Unlock()
		c.fail(ErrDesynchronized)
		return false
	}
	head := c.pending[0]
	c.pending[0] = nil
	c.receiving = nil
	if len(c.pending) == 1 {
		c.pending = c.pending[:0] // keeps the array: the next send appends without allocating
	} else {
		c.pending = c.pending[1:]
	}
	c.mu.Unlock()
	<-c.slots
	head.reply, head.buffer = reply, frame
	// A failing reply breaks the connection before its caller wakes, so
	// the caller's next request cannot be queued on the dying connection.
	if reply.Command == wire.CommandEviction {
		head.err = &Error{Command: head.command, Status: reply.Eviction.Status(), Evicted: true}
		c.fail(head.err)
		close(head.done)
		return false
	}
	if reply.Header.Request != head.request || !head.command.AcceptsReplyOperation(reply.Header.Operation) &&
		reply.Header.Status == wire.StatusOK {
		head.err = ErrDesynchronized
		c.fail(ErrDesynchronized)
		close(head.done)
		return false
	}
	close(head.done)
	return true
}

// fail breaks the connection and fails every pending call with err.
func (c *conn) fail(err error) {
	c.mu.Lock()
	c.breakLocked(err)
	pending := c.pending
	c.pending = nil
	held := c.receiving
	for _, waiting := range pending {
		waiting.err = c.broken // under mu: the reader closes held's done (releaseReceiving)
	}
	c.mu.Unlock()
	for _, waiting := range pending {
		if waiting != held { // the reader may still write into held's buffer
			close(waiting.done)
		}
	}
}

// releaseReceiving ends, as the reader exits, a call whose buffer it was
// receiving into when the connection failed: the caller may now reuse it.
func (c *conn) releaseReceiving() {
	c.mu.Lock()
	held := c.receiving
	c.receiving = nil
	c.mu.Unlock()
	if held != nil {
		close(held.done)
	}
}

func (c *conn) breakLocked(err error) {
	if c.broken == nil {
		c.broken = err
		if c.watchdog != nil {
			c.watchdog.Stop()
		}
		_ = c.netConn.Close() // the connection is unusable either way
	}
}

// close breaks the connection and waits for the reader to exit.
func (c *conn) close() {
	c.fail(ErrClosed)
	<-c.done
}

// head returns the bytes that hold the request header: the frame, or the
// vector's head.
func (p *call) head() []byte {
	if p.vector != nil {
		return p.vector.Head
	}
	return *p.frame
}

func (c *conn) isBroken() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.broken != nil
}

// readFrame reads one whole frame: it peeks the header for the declared
// size, then reads header and body into one buffer. Reading through the
// buffered reader takes pipelined replies in few syscalls. frameFor
// returns the buffer for a frame of the size it is given.
func readFrame(reader *bufio.Reader, frameFor func(size int) []byte) ([]byte, error) {
	header, err := reader.Peek(wire.HeaderBytes)
	if err != nil {
		return nil, err
	}
	size, err := wire.FrameSize(header)
	if err != nil {
		return nil, err
	}
	frame := frameFor(size)
	if _, err := io.ReadFull(reader, frame); err != nil {
		return nil, err
	}
	return frame, nil
}

// frameFor returns the buffer the next reply frame, of size bytes, goes
// into: the oldest pending call's own buffer when it offered one that is
// large enough (the call is then the connection's receiving, so its
// caller no longer walks away from it), else a new one.
func (c *conn) frameFor(size int) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) > 0 {
		head := c.pending[0]
		if head.into != nil && cap(head.into) >= size {
			c.receiving = head
			return head.into[:size]
		}
	}
	return make([]byte, size)
}

// abandon is the end of a call whose caller stops waiting: unless the
// reader is already receiving into the call's buffer, the buffer is taken
// back at once; else abandon waits until the reader is done with it (the
// frame arrives, or the connection fails; the watchdog bounds both).
func (c *conn) abandon(pending *call) {
	if pending.into == nil {
		return
	}
	c.mu.Lock()
	receiving := c.receiving == pending
	if !receiving {
		pending.into = nil
	}
	c.mu.Unlock()
	if receiving {
		<-pending.done
	}
}
