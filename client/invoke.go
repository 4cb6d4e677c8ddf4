package client

import (
	"context"
	"errors"
	"time"

	"github.com/whippetio/whippet/wire"
)

// invoke sends one command on the current connection (dialling first when
// needed), replays it after transient refusals, and returns the completed
// call or the server's refusal as *Error.
func (c *Client) invoke(ctx context.Context, command wire.Code, body wire.Body) (*call, error) {
	current, err := c.connection(ctx)
	if err != nil {
		return nil, err
	}
	return c.invokeOn(ctx, current, command, body)
}

// invokeOn is invoke on a given connection; login and leader checks use it
// while they hold the connecting lock.
func (c *Client) invokeOn(ctx context.Context, current *conn, command wire.Code, body wire.Body) (*call, error) {
	started := time.Now()
	pending, err := c.prepare(command, body)
	if err != nil {
		return nil, err
	}
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
		case status == wire.StatusTransientNotAccepted && c.sleepRetry(ctx, started):
			if pending, err = c.prepare(command, body); err != nil {
				return nil, err
			}
		default:
			return done, &Error{Command: command, Status: status, Evicted: done.reply.Command == wire.CommandEviction}
		}
	}
}

// prepare encodes a request under the session state and assigns its
// request id (§5.4): 0 for Register; the counter for everything else,
// which metadata writes, DeleteSegments and Logout then advance.
func (c *Client) prepare(command wire.Code, body wire.Body) (*call, error) {
	operation := command.Operation()
	if operation == wire.OperationReserved {
		return nil, &Error{Command: command, Status: wire.StatusFeatureUnavailable}
	}
	if wire.RequestBytes(body) > wire.FrameBytesMax {
		return nil, &Error{Command: command, Status: wire.StatusTooBigMessagePayload}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	header := wire.RequestHeader{Client: c.clientID, Operation: operation, Session: c.session, Request: c.counter}
	switch {
	case operation == wire.OperationRegister:
		header.Session, header.Request = 0, 0
	case operation == wire.OperationNonReplicated:
		header.Code = command
	case operation.Metadata() || operation == wire.OperationDeleteSegments || operation == wire.OperationLogout:
		c.counter++
	}
	frame := make([]byte, wire.RequestBytes(body))
	wire.EncodeRequest(frame, header, body)
	return &call{command: command, request: header.Request, frame: frame}, nil
}

func (p *call) replay() *call {
	return &call{command: p.command, request: p.request, frame: p.frame}
}

// exchange sends a prepared call and waits for its reply. A reply that
// does not arrive in time leaves the stream in an unknown state, so the
// connection is dropped (§5.6).
func (c *Client) exchange(ctx context.Context, current *conn, pending *call) (*call, error) {
	expired, stop := deadlineChannel(c.options.ReplyTimeout)
	defer stop()
	if err := current.acquire(ctx, expired); err != nil {
		return nil, err
	}
	pending.done = make(chan struct{})
	if err := current.send(pending); err != nil {
		return nil, err
	}
	select {
	case <-pending.done:
		return pending, pending.err
	case <-expired:
		current.fail(errTimeout)
		<-pending.done
		return nil, errTimeout
	case <-ctx.Done():
		current.fail(errors.Join(ErrDisconnected, ctx.Err()))
		<-pending.done
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
