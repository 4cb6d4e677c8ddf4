package client

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
	"time"

	"github.com/whippetio/whippet/wire"
)

// Options configure a Client. The zero value of every field means its
// default; Validate reports the first field that is out of range.
type Options struct {
	// Address is host:port of the server (default 127.0.0.1:8090).
	Address string
	// Username and Password, or Token, log in after every connect. Leave
	// all empty to call Login yourself.
	Username string
	Password string
	Token    string
	// TLS, when set, wraps the TCP stream; ServerName defaults to the host
	// part of Address.
	TLS *tls.Config
	// PipelineDepth bounds requests in flight on the connection.
	PipelineDepth int
	// ReplyTimeout bounds the wait for one reply; DialTimeout one connect.
	ReplyTimeout time.Duration
	DialTimeout  time.Duration
	// ReconnectAttempts bounds redials after a broken connection (negative
	// disables reconnecting).
	ReconnectAttempts int
	// Dial replaces net.Dialer (tests, proxies).
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// NewClientID mints the 128-bit client id of each new session; the
	// default draws from crypto/rand and never returns zero.
	NewClientID func() wire.Uint128
	// Sleep waits between retries; the default honours ctx.
	Sleep func(ctx context.Context, duration time.Duration) error
	// HeartbeatInterval, when positive, pings the server that often while
	// connected, so an idle consumer-group member is not evicted as stale
	// (§5.7; the Go SDK pings every 5 s).
	HeartbeatInterval time.Duration
	// SDKName and SDKVersion identify the client in its login body
	// (defaults SDKName and SDKVersion of this package).
	SDKName    string
	SDKVersion string
}

// ErrInvalidOptions prefixes every Validate error.
var ErrInvalidOptions = errors.New("client: invalid options")

// withDefaults returns a copy with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.Address == "" {
		o.Address = "127.0.0.1:8090"
	}
	if o.PipelineDepth == 0 {
		o.PipelineDepth = PipelineDepthDefault
	}
	if o.ReplyTimeout == 0 {
		o.ReplyTimeout = ReplyTimeoutDefault
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = DialTimeoutDefault
	}
	if o.ReconnectAttempts == 0 {
		o.ReconnectAttempts = ReconnectAttemptsDefault
	}
	if o.Dial == nil {
		dialer := &net.Dialer{}
		o.Dial = dialer.DialContext
	}
	if o.NewClientID == nil {
		o.NewClientID = randomClientID
	}
	if o.Sleep == nil {
		o.Sleep = sleepContext
	}
	if o.SDKName == "" {
		o.SDKName = SDKName
	}
	if o.SDKVersion == "" {
		o.SDKVersion = SDKVersion
	}
	return o
}

// Validate reports the first option that is out of range.
func (o Options) Validate() error {
	switch {
	case o.PipelineDepth < 0 || o.PipelineDepth > PipelineDepthMax:
		return errors.Join(ErrInvalidOptions, errors.New("PipelineDepth must be 0..4096"))
	case o.ReplyTimeout < 0 || o.DialTimeout < 0 || o.HeartbeatInterval < 0:
		return errors.Join(ErrInvalidOptions, errors.New("ReplyTimeout, DialTimeout and HeartbeatInterval must not be negative"))
	case o.Token != "" && (o.Username != "" || o.Password != ""):
		return errors.Join(ErrInvalidOptions, errors.New("set Username/Password or Token, not both"))
	case len(o.Username) > wire.UsernameBytesMax || len(o.Password) > wire.PasswordBytesMax:
		return errors.Join(ErrInvalidOptions, errors.New("Username or Password too long"))
	case len(o.SDKName) > wire.NameBytesMax || len(o.SDKVersion) > wire.NameBytesMax:
		return errors.Join(ErrInvalidOptions, errors.New("SDKName or SDKVersion longer than 255 bytes"))
	case len(o.Token) > wire.NameBytesMax:
		return errors.Join(ErrInvalidOptions, errors.New("Token longer than 255 bytes"))
	}
	if _, _, err := net.SplitHostPort(o.withDefaults().Address); err != nil {
		return errors.Join(ErrInvalidOptions, err)
	}
	return nil
}

func randomClientID() wire.Uint128 {
	var bytes [16]byte
	for {
		_, _ = rand.Read(bytes[:]) // crypto/rand.Read never fails on Linux
		id := wire.Uint128{Lo: binary.LittleEndian.Uint64(bytes[:]), Hi: binary.LittleEndian.Uint64(bytes[8:])}
		if !id.IsZero() {
			return id
		}
	}
}

func sleepContext(ctx context.Context, duration time.Duration) error {
	timer := time.NewTimer(duration)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
