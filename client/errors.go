package client

import (
	"errors"
	"strconv"

	"github.com/whippetio/whippet/wire"
)

// Sentinel errors of the client.
var (
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("client: closed")
	// ErrDisconnected fails requests whose connection broke before their
	// reply arrived: they may or may not have been applied.
	ErrDisconnected = errors.New("client: disconnected")
	// ErrDesynchronized means a reply did not answer the request it was
	// paired with; the connection is dropped.
	ErrDesynchronized = errors.New("client: reply does not match the request")
	// ErrNotLoggedIn is returned by calls that need a session.
	ErrNotLoggedIn = errors.New("client: not logged in")
)

// Error is a refusal by the server: the command and the protocol status
// it answered with, on any of the three channels (§4.1).
type Error struct {
	Command wire.Code
	Status  wire.Status
	Evicted bool // the session ended with an Eviction frame
}

func (e *Error) Error() string {
	text := "client: " + e.Command.String() + ": " + e.Status.String() + " (" +
		strconv.FormatUint(uint64(e.Status), 10) + ")"
	if e.Evicted {
		text += ", session evicted"
	}
	return text
}

// Unwrap exposes the status so errors.Is(err, wire.StatusStreamIDNotFound)
// holds.
func (e *Error) Unwrap() error { return e.Status }

// StatusOf returns the protocol status an error carries, or StatusOK.
func StatusOf(err error) wire.Status {
	if err == nil {
		return wire.StatusOK // every call asks: spare it errors.As's allocations
	}
	var clientErr *Error
	if errors.As(err, &clientErr) {
		return clientErr.Status
	}
	var status wire.Status
	if errors.As(err, &status) {
		return status
	}
	return wire.StatusOK
}
