package client

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/whippetio/whippet/wire"
)

// invoke sends one command on the current connection (dialling first when
// needed), replays it after transient refusals, and returns the completed
// call or the server's refusal as *Error. After 58 TransientNotAccepted
// (nothing was applied) it re-checks the cluster leader, at most every
// LeaderRecheckInterval, and replays on whichever node that leaves it on
// (§11), as the Go SDK does.
func (c *Client) invoke(ctx context.Context, command wire.Code, body wire.Body) (*call, error) {
	return c.invokeInto(ctx, command, body, nil)
}

// invokeInto is invoke receiving the reply frame into into when it fits
// (see call.into); the caller owns into again once it returns.
func (c *Client) invokeInto(ctx context.Context, command wire.Code, body wire.Body, into []byte) (*call, error) {
	started := time.Now()
	for {
		current, err := c.connection(ctx)
		if err != nil {
			return nil, err
		}
		done, err := c.invokeOn(ctx, current, command, body, false, into)
		if StatusOf(err) != wire.StatusTransientNotAccepted || !c.sleepRetry(ctx, started) {
			return done, err
		}
		c.recheckLeader(ctx, current)
	}
}

// recheckLeader runs the leader check of a login again, unless another
// call moved the connection or checked recently.
func (c *Client) recheckLeader(ctx context.Context, seen *conn) {
	c.connecting.Lock()
	defer c.connecting.Unlock()
	current, err := c.liveConn()
	if err != nil || current != seen || !c.hasCredentials() {
		return
	}
	c.mu.Lock()
	recent := time.Since(c.leaderRechecked) < LeaderRecheckInterval
	if !recent {
		c.leaderRechecked = time.Now()
	}
	c.mu.Unlock()
	if recent {
		return
	}
	_ = c.followLeader(ctx, 0) // a failed check keeps (or breaks) the connection; the replay tells
}

// invokeOn is invoke on a given connection; login and leader checks use it
// while they hold the connecting lock. With replayNotAccepted it replays
// 58 on the same connection; without, 58 is returned to invoke.
func (c *Client) invokeOn(ctx context.Context, current *conn, command wire.Code, body wire.Body,
	replayNotAccepted bool, into []byte) (*call, error) {
	started := time.Now()
	size := wire.RequestBytes(body)
	vectored := vectoredSend(current, body, size)
	pending, err := c.prepare(command, body, size, vectored)
	if err != nil {
		return nil, err
	}
	pending.into = into
	defer func() { pending.release() }()
	for {
		done, err := c.exchange(ctx, current, pending)
		if err != nil {
			return nil, err
		}
		refusal := done.reply.Err()
		if refusal == nil {
			return done, nil
		}
		status := wire.StatusOf(refusal)
		switch {
		case status == wire.StatusTransientNotCommitted && c.sleepRetry(ctx, started):
			pending = pending.replay() // same frame, same request id (§5.2)
		case status == wire.StatusTransientNotAccepted && replayNotAccepted && c.sleepRetry(ctx, started):
			pending.release()
			if pending, err = c.prepare(command, body, size, vectored); err != nil {
				pending = &call{}
				return nil, err
			}
			pending.into = into
		case status == wire.StatusUnauthenticated && c.hasCredentials():
			current.fail(ErrNotLoggedIn) // the session is gone: the next call reconnects and logs in
			return done, &Error{Command: command, Status: status}
		default:
			return done, &Error{Command: command, Status: status, Evicted: done.reply.Command == wire.CommandEviction}
		}
	}
}

// vectoredSend reports whether body, a request of size bytes
// (wire.RequestBytes), is a SendMessages request to write from a vector
// on current: the connection writes with writev (not through TLS), the
// frame holds at least VectoredSendBytesMin and its messages average at
// least VectoredMessageBytesMin. Anything smaller is as fast or faster
// copied and written whole: the kernel's cost per iovec outweighs the
// copy of short payloads.
func vectoredSend(current *conn, body wire.Body, size int) bool {
	outgoing, ok := body.(*wire.OutgoingMessages)
	if !ok || !current.vectored || len(outgoing.Messages) == 0 {
		return false
	}
	return size >= VectoredSendBytesMin && size/len(outgoing.Messages) >= VectoredMessageBytesMin
}

// prepare encodes a request of size bytes (wire.RequestBytes of body);
// stamp fills in its session fields when it is written. With vectored
// (see vectoredSend), a SendMessages request is encoded as a vector that
// leaves the payloads where the caller has them; else, and for every
// other request, into one pooled frame.
func (c *Client) prepare(command wire.Code, body wire.Body, size int, vectored bool) (*call, error) {
	operation := command.Operation()
	if operation == wire.OperationReserved {
		return nil, &Error{Command: command, Status: wire.StatusFeatureUnavailable}
	}
	if status := validate(body); status != wire.StatusOK {
		return nil, &Error{Command: command, Status: status}
	}
	if size > wire.FrameBytesMax {
		return nil, &Error{Command: command, Status: wire.StatusTooBigMessagePayload}
	}
	header := wire.RequestHeader{Operation: operation}
	if operation == wire.OperationNonReplicated {
		header.Code = command
	}
	if outgoing, ok := body.(*wire.OutgoingMessages); ok && vectored {
		vector := vectorPool.Get().(*wire.RequestVector)
		wire.EncodeSendVector(vector, header, outgoing)
		return &call{command: command, operation: operation, vector: vector}, nil
	}
	frame := takeFrame(size)
	wire.EncodeRequest(*frame, header, body)
	return &call{command: command, operation: operation, frame: frame}, nil
}

// stamp assigns the request id and writes the session fields (§5.4):
// Register carries request 0 and session 0; everything else the counter,
// which metadata writes, DeleteSegments and Logout then advance. The
// connection calls it under its write lock, so ids leave in the order they
// are assigned.
func (c *Client) stamp(pending *call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	operation := pending.operation
	request, session := c.counter, c.session
	switch {
	case operation == wire.OperationRegister:
		request, session = 0, 0
	case operation.Metadata() || operation == wire.OperationDeleteSegments || operation == wire.OperationLogout:
		c.counter++
	}
	wire.StampRequest(pending.head(), c.clientID, request, session)
	pending.request = request
	pending.stamped = true
}

func (p *call) replay() *call {
	return &call{command: p.command, operation: p.operation, request: p.request, frame: p.frame, vector: p.vector,
		stamped: true, into: p.into}
}

// exchange sends a prepared call and waits for its reply. A reply that
// does not arrive in time leaves the stream in an unknown state, so the
// connection is dropped (§5.6).
func (c *Client) exchange(ctx context.Context, current *conn, pending *call) (*call, error) {
	// The connection's watchdog bounds the wait for the reply (and so the
	// wait for a pipeline slot, which a reply or a failure frees).
	if err := current.acquire(ctx); err != nil {
		return nil, err
	}
	pending.done = make(chan struct{})
	if err := current.send(ctx, pending, c.stamp); err != nil {
		if ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, ctx.Err() // the write was cut short for it
		}
		return nil, err
	}
	select {
	case <-pending.done:
		return pending, pending.err
	case <-ctx.Done():
		// The call stays queued: its reply will still arrive in order and
		// is dropped, so the other calls on the connection carry on.
		current.abandon(pending)
		return nil, ctx.Err()
	}
}

// decodePayload decodes a reply payload into value.
func decodePayload(done *call, value wire.Decoder) error {
	if err := wire.DecodeAll(value, done.reply.Payload); err != nil {
		return errors.Join(ErrDesynchronized, err)
	}
	return nil
}
