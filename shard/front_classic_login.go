package shard

import (
	"bytes"
	"errors"
	"time"

	"github.com/whippetio/whippet/wire"
	"github.com/whippetio/whippet/wire/classic"
)

// ErrClassicReject: the first bytes of a connection are neither a classic
// nor a VSR request (PROTOCOL-0.8.md §11.2 steps 4–5); it is closed
// without a reply.
var ErrClassicReject = errors.New("shard: connection framing not recognised")

// ErrClassicConnectionsFull: a classic connection arrived past
// tcp.max_connections; it is closed without a reply.
var ErrClassicConnectionsFull = errors.New("shard: classic connection past the connection limit")

// classicClientHigh marks the client ids the server draws for classic
// sessions (a 0.9 client draws its own); the low half is the session.
const classicClientHigh uint64 = 0xC1A5_51C0 << 32

// classicLogin runs LoginUser (38) or LoginWithPersonalAccessToken (44)
// with 0.8 outcomes (PROTOCOL-0.8.md §9): a failure answers 42, 47, 20 or
// 54 and keeps the connection; a second login replaces the first.
func (f *front) classicLogin(s *session, request classic.DecodableRequest) {
	view := f.server.view.Load()
	if view == nil { // Metadata is still opening: the login waits for it.
		request = classicLoginCopy(request) // the frame is released on return
		_, err := f.shard.After(notReadyRetryDelay, func(time.Time) {
			if !s.closed {
				f.classicLogin(s, request)
			}
		})
		if err != nil {
			f.classicStatus(s, classic.StatusError)
		}
		return
	}
	userID, status := f.classicAuthenticate(view, request)
	if status != classic.StatusOK {
		f.classicStatus(s, status)
		return
	}
	if s.session != 0 {
		f.endSession(s)
	}
	s.session = f.server.sessions.Add(1)
	if s.client.IsZero() {
		s.client = wire.Uint128{Lo: s.session, Hi: classicClientHigh}
	}
	s.userID = userID
	f.server.clients.login(s.id, userID)
	f.classicAnswer(s, f.classicBuffer(classic.AppendReply(nil, classic.LoginReply{UserID: userID})))
}

// classicLoginCopy copies a login's views out of its frame.
func classicLoginCopy(request classic.DecodableRequest) classic.DecodableRequest {
	switch r := request.(type) {
	case *classic.LoginUser:
		return &classic.LoginUser{Username: bytes.Clone(r.Username), Password: bytes.Clone(r.Password)}
	case *classic.LoginWithPersonalAccessToken:
		return &classic.LoginWithPersonalAccessToken{Token: bytes.Clone(r.Token)}
	}
	return request
}

// classicAuthenticate checks credentials with the 0.8 status for each
// failure.
func (f *front) classicAuthenticate(view *frontView, request classic.DecodableRequest) (uint32, classic.Status) {
	switch r := request.(type) {
	case *classic.LoginUser:
		if status := classic.CheckCredentials(r.Username, r.Password); status != classic.StatusOK {
			return 0, status
		}
		user := view.userByName(string(r.Username))
		if user == nil || !f.verifyPassword(string(r.Password), user.PasswordHash) {
			return 0, classic.StatusInvalidCredentials
		}
		if user.Status != uint8(wire.UserActive) {
			return 0, classic.StatusUserInactive
		}
		return user.ID, classic.StatusOK
	case *classic.LoginWithPersonalAccessToken:
		owner, ok := view.tokens[hashToken(string(r.Token))]
		switch {
		case !ok:
			return 0, classic.StatusResourceNotFound
		case owner.expiryAt != 0 && owner.expiryAt <= nowMicros():
			return 0, classic.StatusPersonalAccessTokenExpired
		}
		user := view.user(owner.userID)
		if user == nil || user.Status != uint8(wire.UserActive) {
			return 0, classic.StatusUserInactive
		}
		return user.ID, classic.StatusOK
	}
	return 0, classic.StatusInvalidCommand
}
