package client

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
)

// Client speaks the Iggy TCP protocol to one server at a time. It is safe
// for concurrent use: concurrent calls are pipelined on one connection and
// answered in order. A broken connection is redialled (with backoff) by the
// next call, and the session is restored when credentials are configured.
type Client struct {
	options Options

	connecting         sync.Mutex // serialises dial, login and redirection
	mu                 sync.Mutex // guards everything below
	conn               *conn
	address            string
	clientID           wire.Uint128
	counter            uint64 // next request id (§5.4)
	session            uint64
	login              *wire.LoginRegister // replayed after a reconnect; nil after Logout
	closed             bool
	candidates         []string  // healthy nodes of the last roster
	leaderRechecked    time.Time // when a 58 last ran the leader check
	serverPartitioning bool

	topics    topicCache
	heartbeat chan struct{} // closed by Close to stop the heartbeat
}

// New validates options and returns a client that connects on first use.
func New(options Options) (*Client, error) {
	if err := options.Validate(); err != nil {
		return nil, err
	}
	client := &Client{options: options.withDefaults(), heartbeat: make(chan struct{})}
	client.address = client.options.Address
	if client.options.Token != "" {
		client.login = client.tokenLogin(client.options.Token)
	} else if client.options.Username != "" {
		client.login = client.passwordLogin(client.options.Username, client.options.Password)
	}
	if client.options.HeartbeatInterval > 0 {
		go client.beat()
	}
	return client, nil
}

// Dial returns a connected client, logged in when options carry
// credentials.
func Dial(ctx context.Context, options Options) (*Client, error) {
	client, err := New(options)
	if err != nil {
		return nil, err
	}
	if _, err := client.connection(ctx); err != nil {
		return nil, err
	}
	return client, nil
}

// Close ends the connection; later calls return ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	if !c.closed {
		close(c.heartbeat)
	}
	c.closed = true
	current := c.conn
	c.conn = nil
	c.mu.Unlock()
	if current != nil {
		current.close()
	}
	return nil
}

// beat pings while a connection is up; it never dials by itself.
func (c *Client) beat() {
	ticker := time.NewTicker(c.options.HeartbeatInterval)
	defer ticker.Stop()
	for {
		select {
		case <-c.heartbeat:
			return
		case <-ticker.C:
		}
		if current, _ := c.liveConn(); current != nil {
			ctx, cancel := context.WithTimeout(context.Background(), c.options.ReplyTimeout)
			_, _ = c.invokeOn(ctx, current, wire.CodePing, nil, true, nil) // a failed ping breaks the connection itself
			cancel()
		}
	}
}

// Address returns the address of the server the client talks to.
func (c *Client) Address() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.address
}

// Session returns the bound session, 0 when not logged in.
func (c *Client) Session() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// connection returns a live connection, dialling (and logging in) first if
// there is none.
func (c *Client) connection(ctx context.Context) (*conn, error) {
	if current, err := c.liveConn(); current != nil || err != nil {
		return current, err
	}
	c.connecting.Lock()
	defer c.connecting.Unlock()
	if current, err := c.liveConn(); current != nil || err != nil {
		return current, err
	}
	return c.reconnect(ctx)
}

func (c *Client) liveConn() (*conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if c.conn != nil && !c.conn.isBroken() {
		return c.conn, nil
	}
	return nil, nil
}

// reconnect dials with exponential backoff over the configured address and
// the learned cluster nodes, then restores the session. The caller holds
// connecting.
func (c *Client) reconnect(ctx context.Context) (*conn, error) {
	backoff := ReconnectBackoffMin
	var lastErr error
	first := c.firstTarget()
	for attempt := 0; attempt <= max(c.options.ReconnectAttempts, 0); attempt++ {
		if attempt > 0 {
			if err := c.options.Sleep(ctx, backoff); err != nil {
				return nil, errors.Join(lastErr, err)
			}
			backoff = min(2*backoff, ReconnectBackoffMax)
		}
		address := c.dialTarget(first + attempt)
		fresh, err := c.open(ctx, address)
		if errors.Is(err, ErrClosed) {
			return nil, err
		}
		if err != nil {
			lastErr = err
			continue
		}
		if err := c.restoreSession(ctx, fresh); err != nil {
			fresh.close()
			var refusal *Error
			if errors.As(err, &refusal) {
				return nil, err // the server answered: retrying cannot help
			}
			lastErr = err
			continue
		}
		current, err := c.liveConn()
		if current != nil || err != nil {
			return current, err
		}
		lastErr = ErrDisconnected // broke again while logging in: dial once more
	}
	return nil, lastErr
}

// firstTarget is where a reconnect starts in the dialTarget cycle: at the
// other nodes when the last connection broke because its node stopped
// answering (a paused or partitioned node still accepts TCP connections,
// so dialling it again would cost another reply timeout), else at the
// last address.
func (c *Client) firstTarget() int {
	c.mu.Lock()
	previous := c.conn
	c.mu.Unlock()
	if previous != nil && errors.Is(previous.brokenErr(), errTimeout) {
		return 1
	}
	return 0
}

// dialTarget is the address of a reconnect attempt: the last address,
// then the other healthy nodes of the last roster in turn, so that a dead
// node is not the only one tried.
func (c *Client) dialTarget(attempt int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	targets := []string{c.address}
	for _, candidate := range c.candidates {
		if !sameAddress(candidate, c.address) {
			targets = append(targets, candidate)
		}
	}
	return targets[attempt%len(targets)]
}

// open dials address and installs a fresh connection with a new client id
// and a request counter back at 1 (§5.4).
func (c *Client) open(ctx context.Context, address string) (*conn, error) {
	dialCtx, cancel := context.WithTimeout(ctx, c.options.DialTimeout)
	defer cancel()
	netConn, err := c.options.Dial(dialCtx, "tcp", address)
	if err != nil {
		return nil, err
	}
	if tcp, ok := netConn.(*net.TCPConn); ok {
		_ = tcp.SetNoDelay(true) // the default already; a failure only costs latency
	}
	if c.options.TLS != nil {
		netConn, err = c.handshake(dialCtx, netConn, address)
		if err != nil {
			return nil, err
		}
	}
	fresh := newConn(netConn, c.options.PipelineDepth)
	fresh.watchReplies(c.options.ReplyTimeout)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		fresh.close()
		return nil, ErrClosed
	}
	previous := c.conn
	c.conn, c.address = fresh, address
	c.mintClientIDLocked()
	c.mu.Unlock()
	if previous != nil {
		previous.close()
	}
	return fresh, nil
}

func (c *Client) handshake(ctx context.Context, netConn net.Conn, address string) (net.Conn, error) {
	config := c.options.TLS.Clone()
	if config.ServerName == "" {
		host, _, _ := net.SplitHostPort(address)
		config.ServerName = host
	}
	secure := tls.Client(netConn, config)
	if err := secure.HandshakeContext(ctx); err != nil {
		_ = netConn.Close() // the handshake error is the one to report
		return nil, err
	}
	return secure, nil
}

func (c *Client) mintClientIDLocked() {
	c.clientID = c.options.NewClientID()
	invariant.Assert(!c.clientID.IsZero(), "client: client id source returned zero")
	c.counter = 1
	c.session = 0
}

// restoreSession logs in again after a (re)connect when credentials are
// known, and follows the leader.
func (c *Client) restoreSession(ctx context.Context, fresh *conn) error {
	c.mu.Lock()
	login := c.login
	c.mu.Unlock()
	if login == nil {
		return nil
	}
	_, err := c.register(ctx, fresh, login)
	if err != nil {
		return err
	}
	return c.followLeader(ctx, 0)
}

// sleepRetry waits TransientReplayInterval unless the replay window since
// started is over.
func (c *Client) sleepRetry(ctx context.Context, started time.Time) bool {
	if time.Since(started) > TransientReplayDuration {
		return false
	}
	return c.options.Sleep(ctx, TransientReplayInterval) == nil
}
