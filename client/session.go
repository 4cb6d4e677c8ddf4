package client

import (
	"context"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/whippetio/whippet/wire"
)

func (c *Client) hasCredentials() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.login != nil
}

func (c *Client) passwordLogin(username, password string) *wire.LoginRegister {
	return &wire.LoginRegister{Version: c.version(), Username: username, Password: password}
}

func (c *Client) tokenLogin(token string) *wire.LoginRegister {
	return &wire.LoginRegister{Version: c.version(), Token: token, WithToken: true}
}

func (c *Client) version() wire.ClientVersion {
	return wire.ClientVersion{Protocol: wire.ProtocolVersion, SDKName: c.options.SDKName,
		SDKVersion: c.options.SDKVersion}
}

// Login logs in with a username and password (§5.2), follows the cluster
// leader (§11), and remembers the credentials for reconnects.
func (c *Client) Login(ctx context.Context, username, password string) (wire.LoginReply, error) {
	if len(username) > wire.NameBytesMax || len(password) > wire.NameBytesMax {
		return wire.LoginReply{}, &Error{Command: wire.CodeLoginRegister, Status: wire.StatusInvalidCredentials}
	}
	return c.loginWith(ctx, c.passwordLogin(username, password))
}

// LoginWithToken logs in with a personal access token.
func (c *Client) LoginWithToken(ctx context.Context, token string) (wire.LoginReply, error) {
	if token == "" || len(token) > wire.NameBytesMax {
		return wire.LoginReply{}, &Error{Command: wire.CodeLoginRegisterWithPAT, Status: wire.StatusInvalidPersonalAccessToken}
	}
	return c.loginWith(ctx, c.tokenLogin(token))
}

func (c *Client) loginWith(ctx context.Context, login *wire.LoginRegister) (wire.LoginReply, error) {
	c.connecting.Lock()
	defer c.connecting.Unlock()
	current, err := c.liveConn()
	if err != nil {
		return wire.LoginReply{}, err
	}
	if current == nil {
		if current, err = c.reconnectWithout(ctx); err != nil {
			return wire.LoginReply{}, err
		}
	}
	if c.Session() != 0 {
		if err := c.logoutOn(ctx, current); err != nil {
			return wire.LoginReply{}, err
		}
	}
	reply, err := c.register(ctx, current, login)
	if err != nil {
		return wire.LoginReply{}, err
	}
	c.mu.Lock()
	c.login = login
	c.mu.Unlock()
	return reply, c.followLeader(ctx, 0)
}

// reconnectWithout dials without restoring a session: the caller is about
// to log in with new credentials.
func (c *Client) reconnectWithout(ctx context.Context) (*conn, error) {
	c.mu.Lock()
	saved := c.login
	c.login = nil
	c.mu.Unlock()
	current, err := c.reconnect(ctx)
	c.mu.Lock()
	c.login = saved
	c.mu.Unlock()
	return current, err
}

// register sends the Register request and binds the session it returns.
func (c *Client) register(ctx context.Context, current *conn, login *wire.LoginRegister) (wire.LoginReply, error) {
	command := wire.CodeLoginRegister
	if login.WithToken {
		command = wire.CodeLoginRegisterWithPAT
	}
	done, err := c.invokeOn(ctx, current, command, login, true, nil)
	if err != nil {
		return wire.LoginReply{}, err
	}
	var reply wire.LoginReply
	if err := decodePayload(done, &reply); err != nil {
		current.fail(err)
		return wire.LoginReply{}, err
	}
	c.mu.Lock()
	c.session = reply.Session
	c.mu.Unlock()
	return reply, nil
}

// Logout ends the session (§5.5): the client forgets its credentials and
// starts the next session under a new client id.
func (c *Client) Logout(ctx context.Context) error {
	c.connecting.Lock()
	defer c.connecting.Unlock()
	c.mu.Lock()
	c.login = nil // whatever happens below, do not log in again by itself
	c.mu.Unlock()
	current, err := c.liveConn()
	if err != nil || current == nil {
		return err
	}
	return c.logoutOn(ctx, current)
}

func (c *Client) logoutOn(ctx context.Context, current *conn) error {
	if _, err := c.invokeOn(ctx, current, wire.CodeLogoutUser, nil, true, nil); err != nil {
		return err
	}
	c.mu.Lock()
	c.mintClientIDLocked()
	c.mu.Unlock()
	return nil
}

// followLeader reads the roster after a login and moves to the leader when
// a multi-node cluster names another node (§11). Errors reading the roster
// keep the current connection, as the reference SDK does.
func (c *Client) followLeader(ctx context.Context, redirects int) error {
	metadata, ok := c.rosterWithLeader(ctx)
	if !ok || len(metadata.Nodes) <= 1 || redirects >= RedirectsMax {
		return nil
	}
	leader, found := metadata.Leader()
	if !found {
		return nil
	}
	target := net.JoinHostPort(leader.IP, strconv.Itoa(int(leader.TCPPort)))
	if sameAddress(target, c.Address()) {
		return nil
	}
	c.mu.Lock()
	login := c.login
	c.mu.Unlock()
	fresh, err := c.open(ctx, target)
	if err != nil {
		return err
	}
	if login != nil {
		if _, err := c.register(ctx, fresh, login); err != nil {
			return err
		}
	}
	return c.followLeader(ctx, redirects+1)
}

// rosterWithLeader reads the roster, re-reading while a multi-node cluster
// has no healthy leader, for at most LeaderWaitDuration.
func (c *Client) rosterWithLeader(ctx context.Context) (wire.ClusterMetadata, bool) {
	started := time.Now()
	for {
		current, err := c.liveConn()
		if err != nil || current == nil {
			return wire.ClusterMetadata{}, false
		}
		done, err := c.invokeOn(ctx, current, wire.CodeGetClusterMetadata, nil, true, nil)
		if err != nil {
			return wire.ClusterMetadata{}, false
		}
		var metadata wire.ClusterMetadata
		if decodePayload(done, &metadata) != nil {
			return wire.ClusterMetadata{}, false
		}
		c.rememberNodes(&metadata)
		if _, found := metadata.Leader(); found || len(metadata.Nodes) <= 1 {
			return metadata, true
		}
		if time.Since(started) > LeaderWaitDuration || c.options.Sleep(ctx, LeaderWaitInterval) != nil {
			return metadata, true
		}
	}
}

func (c *Client) rememberNodes(metadata *wire.ClusterMetadata) {
	var candidates []string
	for _, node := range metadata.Nodes {
		if node.Status == wire.NodeHealthy {
			candidates = append(candidates, net.JoinHostPort(node.IP, strconv.Itoa(int(node.TCPPort))))
		}
	}
	c.mu.Lock()
	c.candidates = candidates
	c.mu.Unlock()
}

// sameAddress compares host:port pairs case-insensitively, with localhost
// equal to 127.0.0.1 and IP literals compared as addresses (§11 step 5).
func sameAddress(first, second string) bool {
	firstHost, firstPort, errFirst := net.SplitHostPort(first)
	secondHost, secondPort, errSecond := net.SplitHostPort(second)
	if errFirst != nil || errSecond != nil {
		return strings.EqualFold(first, second)
	}
	if firstPort != secondPort {
		return false
	}
	return normalizeHost(firstHost) == normalizeHost(secondHost)
}

func normalizeHost(host string) string {
	host = strings.ToLower(host)
	if host == "localhost" {
		return "127.0.0.1"
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.String()
	}
	return host
}
