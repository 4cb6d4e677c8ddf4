package classic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	codec "github.com/whippetio/whippet/wire/classic"
)

// Limits of the client.
const (
	// dialTimeout bounds a connection attempt when ctx has no deadline.
	dialTimeout = 10 * time.Second
	// replyBodyBytesMax is the largest reply body read; a larger length
	// means the stream is out of step, and the connection is dropped.
	replyBodyBytesMax = codec.ReplyBodyBytesMax
)

// ErrClosed: the client was closed, or its connection broke (the next
// call does not redial: a classic connection is its session).
var ErrClosed = errors.New("classic client: connection closed")

// Error is a refusal: a non-zero reply status to a command.
type Error struct {
	Code   codec.Code
	Status codec.Status
}

func (e *Error) Error() string {
	return fmt.Sprintf("classic client: %v refused: status %d (%v)", e.Code, uint32(e.Status), e.Status)
}

// StatusOf returns the status of a refusal, StatusOK for nil and
// StatusError for any other error.
func StatusOf(err error) codec.Status {
	if err == nil {
		return codec.StatusOK
	}
	var refusal *Error
	if errors.As(err, &refusal) {
		return refusal.Status
	}
	return codec.StatusError
}

// Client is one classic connection. Calls are serialised: the protocol is
// lockstep, one request and then its reply.
type Client struct {
	mu     sync.Mutex
	conn   net.Conn
	broken error
	buf    []byte
	reply  []byte
	// prologue holds the reply's status and length; a field, not a
	// local, so reading into it does not allocate per call.
	prologue [8]byte
}

// Dial connects to address. Nothing is sent until the first call.
func Dial(ctx context.Context, address string) (*Client, error) {
	dialer := net.Dialer{Timeout: dialTimeout}
	conn, err := dialer.DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, fmt.Errorf("classic client: dial %s: %w", address, err)
	}
	return &Client{conn: conn}, nil
}

// Close closes the connection (the server ends the session).
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken == nil {
		c.broken = ErrClosed
	}
	return c.conn.Close()
}

// Do sends request and returns the reply body, a view valid until the
// next call. A non-zero status is an *Error; an I/O failure breaks the
// client for good.
func (c *Client) Do(ctx context.Context, request codec.Request) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return nil, c.broken
	}
	frame, err := codec.AppendRequest(c.buf[:0], request)
	if err != nil {
		return nil, fmt.Errorf("classic client: encode %v: %w", request.Code(), err)
	}
	c.buf = frame
	return c.roundTrip(ctx, request.Code(), frame)
}

// DoRaw sends one prebuilt frame (prologue included) and returns the
// reply body; tests use it for frames no typed call would build.
func (c *Client) DoRaw(ctx context.Context, code codec.Code, frame []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return nil, c.broken
	}
	return c.roundTrip(ctx, code, frame)
}

// roundTrip writes frame and reads its reply; c.mu is held.
func (c *Client) roundTrip(ctx context.Context, code codec.Code, frame []byte) ([]byte, error) {
	deadline, _ := ctx.Deadline()    // zero, meaning none, without one
	_ = c.conn.SetDeadline(deadline) // a failed deadline surfaces as the I/O error below
	if _, err := c.conn.Write(frame); err != nil {
		return nil, c.fail(err)
	}
	prologue := c.prologue[:]
	if _, err := io.ReadFull(c.conn, prologue); err != nil {
		return nil, c.fail(err)
	}
	header, err := codec.DecodeReplyHeader(prologue)
	if err != nil || header.Length > replyBodyBytesMax {
		return nil, c.fail(fmt.Errorf("classic client: bad reply prologue %x", prologue))
	}
	if header.Status != codec.StatusOK {
		return nil, &Error{Code: code, Status: header.Status}
	}
	if cap(c.reply) < int(header.Length) {
		c.reply = make([]byte, header.Length)
	}
	body := c.reply[:header.Length]
	if _, err := io.ReadFull(c.conn, body); err != nil {
		return nil, c.fail(err)
	}
	return body, nil
}

// fail breaks the client: the stream may be out of step.
func (c *Client) fail(err error) error {
	c.broken = fmt.Errorf("%w: %w", ErrClosed, err)
	_ = c.conn.Close() // the connection is unusable whatever Close says
	return c.broken
}

// Call sends any request and decodes a non-empty reply into reply (nil:
// the body is not read); found is false for an empty body, the 0.8 "not
// found" convention of lookups.
func (c *Client) Call(ctx context.Context, request codec.Request, reply codec.DecodableReply) (bool, error) {
	body, err := c.Do(ctx, request)
	if err != nil {
		return false, err
	}
	if len(body) == 0 || reply == nil {
		return len(body) != 0, nil
	}
	if err := reply.Decode(body); err != nil {
		return false, fmt.Errorf("classic client: decode %v reply: %w", request.Code(), err)
	}
	return true, nil
}
