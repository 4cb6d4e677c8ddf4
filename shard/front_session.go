package shard

import (
	"crypto/subtle"
	"net"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
)

// session is one connection's state: its login, its decoded-request
// scratch, and the frames waiting behind the one executing.
type session struct {
	conn     *Conn
	id       uint32 // the client id GetClients reports
	address  string
	requests wire.RequestSet
	order    order
	closed   bool
	evicted  bool
	lastSeen time.Time

	// Bound at login; session 0 means not logged in.
	session uint64
	client  wire.Uint128
	userID  uint32
	// inGroups is set once the session joined a group, so that its end
	// tells shard 0.
	inGroups bool
	// written is the reply to the session's last metadata write, kept so
	// that a replay of that request id answers it again instead of
	// applying it twice (§5.4).
	written      []byte
	writtenID    uint64
	writtenValid bool
	// classic is set on a 0.8 classic connection (front_classic.go).
	classic *classicConn
	// stream is the send whose frame is appended while it arrives
	// (front_stream.go).
	stream sendStream
	// cancelRoom cancels the connection's receive, for a stream dropped
	// while it receives into the stream's room (made once).
	cancelRoom func()

	// Connection affinity (front_affinity.go): the shard the last
	// partition requests went to and how many in a row, when the session
	// last moved, the logged-in user's creation time (to tell a re-created
	// user apart), and the framing-detection timer of the connection.
	affinityShard  int
	affinityStreak int
	movedAt        time.Time
	userCreatedAt  uint64
	detecting      *classicDetecting
}

func (f *front) newSession(conn *Conn) *session {
	s := &session{conn: conn, address: peerAddress(conn.fd), userID: wire.ClientUserNone}
	s.id = f.server.clients.add(s.address)
	f.sessions = append(f.sessions, s)
	return s
}

func peerAddress(fd int) string {
	sa, err := unix.Getpeername(fd)
	if err != nil {
		return ""
	}
	return sockaddrString(sa)
}

func sockaddrString(sa unix.Sockaddr) string {
	switch addr := sa.(type) {
	case *unix.SockaddrInet4:
		return net.JoinHostPort(net.IP(addr.Addr[:]).String(), strconv.Itoa(addr.Port))
	case *unix.SockaddrInet6:
		return net.JoinHostPort(net.IP(addr.Addr[:]).String(), strconv.Itoa(addr.Port))
	}
	return ""
}

// serve classifies one frame (§3) and runs it.
func (f *front) serve(s *session, frame frameRef) {
	request, _, err := wire.DecodeRequest(frame.buf)
	if err != nil {
		f.finish(s, frame, nil) // a header that does not decode is dropped (§2.2)
		return
	}
	class := wire.Classify(&request, s.session)
	switch class.Disposition {
	case wire.DispositionDrop:
		f.finish(s, frame, nil)
	case wire.DispositionStatus:
		f.finish(s, frame, f.statusReply(&request.Header, class.Code, class.Status))
	case wire.DispositionEvict:
		f.evict(s, frame, &request.Header, class.Reason, 0, 0)
	case wire.DispositionLogin:
		f.login(s, frame, &request)
	case wire.DispositionLogout:
		f.logout(s, frame, &request.Header)
	case wire.DispositionDispatch:
		f.dispatch(s, frame, &request, class.Code)
	default:
		invariant.Assert(false, "front: unknown disposition")
	}
}

// statusReply encodes a pre-commit refusal (§4.1).
func (f *front) statusReply(header *wire.RequestHeader, code wire.Code, status wire.Status) []byte {
	operation := header.Operation
	if code.Known() && operation != wire.OperationNonReplicated {
		operation = code.ReplyOperation()
	}
	buf := f.shard.Buffer(wire.HeaderBytes)
	wire.EncodeStatusReply(buf, wire.ReplyTo(header, operation), status)
	return buf
}

// evict answers with an Eviction frame and closes the connection once it
// is sent (§2.4).
func (f *front) evict(s *session, frame frameRef, header *wire.RequestHeader, reason wire.EvictionReason,
	versionMax, versionMin uint32) {
	eviction := wire.EvictionHeader{Cluster: header.Cluster, Client: header.Client, Reason: reason,
		VersionMax: versionMax, VersionMin: versionMin}
	if eviction.Client == (wire.Uint128{}) {
		eviction.Client = s.client
	}
	buf := f.shard.Buffer(wire.HeaderBytes)
	eviction.Encode(buf)
	f.server.options.Logger.Debug("evicting a client", "address", s.address, "reason", int(reason),
		"operation", int(header.Operation))
	s.evicted = true
	f.endSession(s)
	f.finish(s, frame, buf)
}

// login runs the Register handshake (§5.2) against the published view.
func (f *front) login(s *session, frame frameRef, request *wire.Request) {
	header := &request.Header
	body := &s.requests.LoginRegister
	if err := wire.DecodeAll(body, request.Body); err != nil || !(body.PasswordShape || body.TokenShape) {
		f.evict(s, frame, header, wire.EvictionMalformedLogin, 0, 0)
		return
	}
	if !wire.VersionAccepted(body.Version.Protocol, wire.ProtocolVersion, wire.ProtocolVersion) {
		f.evict(s, frame, header, wire.EvictionIncompatibleProtocol, wire.ProtocolVersion, wire.ProtocolVersion)
		return
	}
	view := f.server.view.Load()
	if view == nil {
		f.waitReady(s, frame) // a login racing the first start: wait for the users
		return
	}
	userID, reason := f.authenticate(view, body)
	if reason != 0 {
		f.evict(s, frame, header, reason, 0, 0)
		return
	}
	if s.session == 0 || s.client != header.Client {
		if s.session != 0 {
			f.endSession(s)
		}
		s.session = f.server.sessions.Add(1)
		s.client = header.Client
		s.writtenValid = false
	}
	s.userID = userID
	s.userCreatedAt = view.user(userID).CreatedAt
	f.server.clients.login(s.id, userID)
	reply := wire.LoginReply{UserID: userID, Session: s.session, ServerVersion: wire.ProtocolVersion,
		ServerRelease: ServerRelease}
	f.finish(s, frame, f.encodeReply(header, wire.OperationRegister, &reply))
}

// authenticate tries the password shape, then the token shape (§5.2
// steps 3–5); it returns the user or the eviction reason.
func (f *front) authenticate(view *frontView, body *wire.LoginRegister) (uint32, wire.EvictionReason) {
	if body.PasswordShape && len(body.Username) >= usernameBytesMin && len(body.Username) <= usernameBytesMax &&
		len(body.Password) >= passwordBytesMin && len(body.Password) <= passwordBytesMax {
		if user := view.userByName(body.Username); user != nil && user.Status == uint8(wire.UserActive) &&
			f.verifyPassword(body.Password, user.PasswordHash) {
			return user.ID, 0
		}
	}
	if body.TokenShape && body.Token != "" {
		owner, ok := view.tokens[hashToken(body.Token)]
		if ok && (owner.expiryAt == 0 || owner.expiryAt > nowMicros()) {
			user := view.user(owner.userID)
			if user == nil || user.Status != uint8(wire.UserActive) {
				return 0, wire.EvictionUserInactive
			}
			return user.ID, 0
		}
		if !body.PasswordShape {
			return 0, wire.EvictionInvalidToken
		}
	}
	if body.PasswordShape {
		return 0, wire.EvictionInvalidCredentials
	}
	return 0, wire.EvictionMalformedLogin
}

// verifyPassword checks password against a stored argon2id hash, caching
// successes so that repeated logins skip the deliberate cost.
func (f *front) verifyPassword(password, stored string) bool {
	key := passwordCacheKey(password, stored)
	if f.passwords[key] {
		return true
	}
	if !checkPassword(password, stored) {
		return false
	}
	if len(f.passwords) >= passwordCacheEntriesMax {
		clear(f.passwords)
	}
	f.passwords[key] = true
	return true
}

// logout ends the session (§5.5); it works when not logged in.
func (f *front) logout(s *session, frame frameRef, header *wire.RequestHeader) {
	f.endSession(s)
	f.finish(s, frame, f.encodeReply(header, wire.OperationLogout, nil))
}

// endSession forgets the login and, when the session was in a group,
// tells shard 0 to remove it (a rebalance).
func (f *front) endSession(s *session) {
	if s.inGroups {
		s.inGroups = false
		f.post(0, Message{Kind: kindClientGone, Data: &clientGone{client: clientKey(s.client), sessionID: s.id}})
	}
	s.session = 0
	s.userID = wire.ClientUserNone
	f.server.clients.login(s.id, wire.ClientUserNone)
}

// logoutUser ends the sessions of a user that was deleted or deactivated:
// its id may be reused by a new user, whose rights the old sessions must
// not inherit. Their next request finds them logged out.
func (f *front) logoutUser(userID uint32) {
	for _, s := range f.sessions {
		if s.session != 0 && s.userID == userID {
			f.endSession(s)
		}
	}
}

// clientGone tells shard 0 that a session ended.
type clientGone struct {
	client    metadata.ClientID
	sessionID uint32
}

func clientKey(client wire.Uint128) metadata.ClientID {
	return metadata.ClientID{Low: client.Lo, High: client.Hi}
}

// encodeReply encodes a success reply into a buffer of the shard's pool.
func (f *front) encodeReply(header *wire.RequestHeader, operation wire.Operation, payload wire.Body) []byte {
	buf := f.shard.Buffer(wire.ReplyBytes(operation, payload))
	wire.EncodeReply(buf, wire.ReplyTo(header, operation), payload)
	return buf
}

// evictStale evicts group members silent for 1.2 heartbeat intervals
// (§5.7): only members, because only they hold partitions others wait on.
func (f *front) evictStale(now time.Time) {
	limit := f.server.options.HeartbeatInterval * staleFactorPercent / 100
	for _, s := range f.sessions {
		if !s.inGroups || s.order.running > 0 || s.closed || s.evicted || now.Sub(s.lastSeen) < limit {
			continue
		}
		if s.classic != nil {
			f.classicStale(s)
			continue
		}
		eviction := wire.EvictionHeader{Client: s.client, Reason: wire.EvictionStaleClient}
		buf := f.shard.Buffer(wire.HeaderBytes)
		eviction.Encode(buf)
		s.evicted = true
		f.endSession(s)
		if s.conn.Send(buf) != nil {
			s.conn.Close()
			continue
		}
		s.conn.drain()
	}
}

func nowMicros() uint64 { return uint64(time.Now().UnixMicro()) }

// constantTimeEqual compares secrets without leaking where they differ.
func constantTimeEqual(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }
