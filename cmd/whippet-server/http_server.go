package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// The HTTP gateway serves Iggy's REST API by running each request as the
// same Iggy TCP command on the server's own listener, through a logged-in
// client per HTTP session: the shards see an HTTP caller as one more
// connection, so routing, rights and ordering are exactly those of TCP.

// Limits of the gateway.
const (
	// httpSessionsMax bounds logged-in HTTP sessions (tokens and basic-auth
	// credentials); a login past it is refused with 503, never evicted.
	httpSessionsMax = 4096
	// httpRequestTimeout bounds one request's round trip into the shards.
	httpRequestTimeout = 30 * time.Second
	// basicSessionLifetime bounds how long a basic-auth session is
	// reused; every reuse also checks the user's credential stamp, so a
	// password change, deletion or deactivation ends it at once.
	basicSessionLifetime = time.Minute
	// httpPollCountMax bounds messages one GET of messages returns.
	httpPollCountMax = 10000
)

// gateway is the REST front: its sessions and the server address it dials.
type gateway struct {
	connect  func(ctx context.Context, network, address string) (net.Conn, error) // reaches the shards
	secret   []byte                                                               // HS256 key of login tokens
	bodyMax  int64
	lifetime time.Duration // of a login token (http.jwt.access_token_expiry)
	logger   *slog.Logger
	metrics  *metrics
	mu       sync.Mutex
	sessions map[string]*httpSession // by token id, or by basic-auth digest
	// credential reads a user's password-hash stamp and whether the user
	// is active (shard.Server.CredentialStamp); nil skips the check.
	credential func(userID uint32) (stamp uint64, active bool)
	// durability names what an acknowledged send to a topic reached
	// (shard.Server.AckDurability), for the Iggy-Durability header; nil
	// sends no header.
	durability func(stream, topic wire.Identifier) (string, bool)
}

// httpSession is one logged-in caller: its client and when it lapses.
type httpSession struct {
	client   *client.Client
	userID   uint32
	username string
	expiry   time.Time
	stamp    uint64 // credential stamp of the user when the session began
}

// newGateway makes a gateway; secret empty draws a random one per start.
func newGateway(connect func(ctx context.Context, network, address string) (net.Conn, error), secret []byte, lifetime time.Duration, bodyMax int64, logger *slog.Logger) (*gateway, error) {
	if len(secret) == 0 {
		secret = make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return nil, err
		}
	}
	return &gateway{connect: connect, secret: secret, lifetime: lifetime, bodyMax: bodyMax, logger: logger,
		sessions: make(map[string]*httpSession)}, nil
}

// listen serves handler on address (TLS when config is set) until closed.
func (g *gateway) listen(address string, config *tls.Config, handler http.Handler) (*http.Server, net.Listener, error) {
	listener, err := net.Listen("tcp", address)
	if err != nil {
		return nil, nil, err
	}
	if config != nil {
		listener = tls.NewListener(listener, config)
	}
	server := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(g.logger.Handler(), slog.LevelWarn)}
	go func() {
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			g.logger.Error("http server", "err", err.Error())
		}
	}()
	return server, listener, nil
}

// close logs every session out and closes its client.
func (g *gateway) close() {
	g.mu.Lock()
	sessions := g.sessions
	g.sessions = map[string]*httpSession{}
	g.mu.Unlock()
	for _, session := range sessions {
		_ = session.client.Close() // shutting down; the server forgets the session
	}
}

// dial opens a client session logged in with username and password.
func (g *gateway) dial(ctx context.Context, username, password string) (*client.Client, wire.LoginReply, error) {
	c, err := client.New(client.Options{Address: shardsAddress, Dial: g.connect, ReconnectAttempts: -1,
		ReplyTimeout: httpRequestTimeout})
	if err != nil {
		return nil, wire.LoginReply{}, err
	}
	reply, err := c.Login(ctx, username, password)
	if err != nil {
		_ = c.Close() // the login failed; nothing to keep
		return nil, wire.LoginReply{}, err
	}
	return c, reply, nil
}

// login runs /users/login: a new session and its signed token.
func (g *gateway) login(ctx context.Context, username, password string) (token string, session *httpSession, err error) {
	c, reply, err := g.dial(ctx, username, password)
	if err != nil {
		return "", nil, err
	}
	tokenID := make([]byte, 16)
	if _, err := rand.Read(tokenID); err != nil {
		_ = c.Close() // no token, no session
		return "", nil, err
	}
	session = &httpSession{client: c, userID: reply.UserID, username: username,
		expiry: time.Now().Add(g.lifetime)}
	jti := base64.RawURLEncoding.EncodeToString(tokenID)
	if _, err := g.store(jti, session); err != nil {
		return "", nil, err
	}
	return g.sign(jti, reply.UserID, session.expiry), session, nil
}

var errSessionsFull = errors.New("whippet-server: too many HTTP sessions")

// store keeps session under key and returns the session to use: when a
// concurrent request stored a live one there first, that one, and the
// new session's client is closed, so no client is ever leaked.
func (g *gateway) store(key string, session *httpSession) (*httpSession, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sweepLocked(time.Now())
	if previous := g.sessions[key]; previous != nil {
		_ = session.client.Close() // a duplicate of previous
		return previous, nil
	}
	if len(g.sessions) >= httpSessionsMax {
		_ = session.client.Close() // refused for want of room
		return nil, errSessionsFull
	}
	g.sessions[key] = session
	return session, nil
}

// live returns the session under key unless it lapsed.
func (g *gateway) live(key string) *httpSession {
	g.mu.Lock()
	defer g.mu.Unlock()
	session := g.sessions[key]
	if session == nil || time.Now().After(session.expiry) {
		return nil
	}
	return session
}

// sweepLocked closes sessions whose token lapsed.
func (g *gateway) sweepLocked(now time.Time) {
	for key, session := range g.sessions {
		if now.After(session.expiry) {
			_ = session.client.Close() // lapsed; the server forgets it
			delete(g.sessions, key)
		}
	}
}

// sign makes an HS256 JWT naming the session (jti) and the user (sub).
func (g *gateway) sign(jti string, userID uint32, expiry time.Time) string {
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	claims, _ := json.Marshal(map[string]any{"sub": userID, "jti": jti, "iat": time.Now().Unix(),
		"exp": expiry.Unix(), "iss": "whippet", "aud": "whippet"}) // a map of plain values always marshals
	body := header + "." + base64.RawURLEncoding.EncodeToString(claims)
	mac := hmac.New(sha256.New, g.secret)
	mac.Write([]byte(body))
	return body + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// verify checks a token's signature and expiry and returns its jti.
func (g *gateway) verify(token string) (string, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", false
	}
	mac := hmac.New(sha256.New, g.secret)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	signature, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(signature, mac.Sum(nil)) {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", false
	}
	var claims struct {
		JTI string `json:"jti"`
		Exp int64  `json:"exp"`
	}
	if json.Unmarshal(raw, &claims) != nil || time.Now().Unix() > claims.Exp {
		return "", false
	}
	return claims.JTI, true
}

// authenticate finds the caller's session from a Bearer token or basic
// auth; nil means unauthenticated (the reply is already written).
func (g *gateway) authenticate(w http.ResponseWriter, r *http.Request) (*httpSession, string) {
	header := r.Header.Get("Authorization")
	if token, ok := strings.CutPrefix(header, "Bearer "); ok {
		jti, valid := g.verify(strings.TrimSpace(token))
		if valid {
			if session := g.live(jti); session != nil && g.current(jti, session, false) {
				return session, jti
			}
		}
		writeStatus(w, wire.StatusUnauthenticated, "")
		return nil, ""
	}
	if username, password, ok := r.BasicAuth(); ok {
		return g.basic(w, r.Context(), username, password)
	}
	writeStatus(w, wire.StatusUnauthenticated, "")
	return nil, ""
}

// basic keeps one session per basic-auth credential pair, keyed by a
// keyed digest so the password itself is never held.
func (g *gateway) basic(w http.ResponseWriter, ctx context.Context, username, password string) (*httpSession, string) {
	mac := hmac.New(sha256.New, g.secret)
	mac.Write([]byte(username + "\x00" + password))
	key := "basic:" + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	if session := g.live(key); session != nil && g.current(key, session, true) {
		return session, key
	}
	c, reply, err := g.dial(ctx, username, password)
	if err != nil {
		writeError(w, err)
		return nil, ""
	}
	session := &httpSession{client: c, userID: reply.UserID, username: username,
		expiry: time.Now().Add(basicSessionLifetime)}
	if g.credential != nil {
		// Read after the login: a change racing the login itself can
		// leave this session on the new stamp until it lapses.
		session.stamp, _ = g.credential(reply.UserID)
	}
	session, err = g.store(key, session)
	if err != nil {
		writeError(w, err)
		return nil, ""
	}
	return session, key
}

// current reports whether session's user is still active and, for a
// basic-auth session (password true), still has the password the
// session logged in with; a stale session is logged out.
func (g *gateway) current(key string, session *httpSession, password bool) bool {
	if g.credential == nil {
		return true
	}
	stamp, active := g.credential(session.userID)
	if active && (!password || stamp == session.stamp) {
		return true
	}
	g.logout(key)
	return false
}

// logout ends the session key names.
func (g *gateway) logout(key string) {
	g.mu.Lock()
	session := g.sessions[key]
	delete(g.sessions, key)
	g.mu.Unlock()
	if session != nil {
		ctx, cancel := context.WithTimeout(context.Background(), httpRequestTimeout)
		defer cancel()
		_ = session.client.Logout(ctx) // closing below ends the session either way
		_ = session.client.Close()     // see above
	}
}

// httpError is Iggy's JSON error body.
type httpError struct {
	ID     uint32  `json:"id"`
	Code   string  `json:"code"`
	Reason string  `json:"reason"`
	Field  *string `json:"field"`
}

// writeError answers err: its protocol status as Iggy's HTTP API does.
func writeError(w http.ResponseWriter, err error) {
	if errors.Is(err, errSessionsFull) {
		writeJSON(w, http.StatusServiceUnavailable, httpError{ID: uint32(wire.StatusError), Code: "error", Reason: err.Error()})
		return
	}
	status := client.StatusOf(err)
	if status == wire.StatusOK {
		status = wire.StatusError
	}
	writeStatus(w, status, err.Error())
}

// writeStatus answers one protocol status with its HTTP code.
func writeStatus(w http.ResponseWriter, status wire.Status, reason string) {
	if reason == "" {
		reason = status.Message()
	}
	writeJSON(w, httpCode(status), httpError{ID: uint32(status), Code: snake(status.String()), Reason: reason})
}

// httpCode maps a protocol status to an HTTP status the way Iggy does.
func httpCode(status wire.Status) int {
	name := status.String()
	switch {
	case status == wire.StatusUnauthenticated || status == wire.StatusInvalidCredentials ||
		strings.Contains(name, "Token"):
		return http.StatusUnauthorized
	case status == wire.StatusUnauthorized:
		return http.StatusForbidden
	case strings.HasSuffix(name, "NotFound"):
		return http.StatusNotFound
	case status == wire.StatusError || status == wire.StatusDisconnected || status == wire.StatusCannotEstablishConnection:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// snake turns StreamIdNotFound into stream_id_not_found.
func snake(name string) string {
	var out strings.Builder
	for i, r := range name {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				out.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		out.WriteRune(r)
	}
	return out.String()
}

func writeJSON(w http.ResponseWriter, code int, value any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(value) // the peer may have left; nothing to do
}

// badRequest answers a malformed HTTP request (400 InvalidFormat).
func badRequest(w http.ResponseWriter, reason string) {
	writeStatus(w, wire.StatusInvalidFormat, reason)
}

// identifier reads a path segment: a number is an id, anything else a name.
func identifier(text string) wire.Identifier {
	if number, err := strconv.ParseUint(text, 10, 32); err == nil {
		return wire.NumericID(uint32(number))
	}
	return wire.NamedID(text)
}

// loginToken opens a session with a personal access token.
func (g *gateway) loginToken(ctx context.Context, personal string) (string, *httpSession, error) {
	c, err := client.New(client.Options{Address: shardsAddress, Dial: g.connect, ReconnectAttempts: -1,
		ReplyTimeout: httpRequestTimeout})
	if err != nil {
		return "", nil, err
	}
	reply, err := c.LoginWithToken(ctx, personal)
	if err != nil {
		_ = c.Close() // the login failed; nothing to keep
		return "", nil, err
	}
	tokenID := make([]byte, 16)
	if _, err := rand.Read(tokenID); err != nil {
		_ = c.Close() // no token, no session
		return "", nil, err
	}
	session := &httpSession{client: c, userID: reply.UserID, expiry: time.Now().Add(g.lifetime)}
	jti := base64.RawURLEncoding.EncodeToString(tokenID)
	if _, err := g.store(jti, session); err != nil {
		return "", nil, err
	}
	return g.sign(jti, reply.UserID, session.expiry), session, nil
}
