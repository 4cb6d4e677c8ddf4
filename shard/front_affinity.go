package shard

import (
	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
)

// # Connection affinity
//
// A request's partition lives on the shard OwnerOf names; a connection
// lives where it was accepted (the least-loaded shard). When the two
// differ, every request hops to the owner and its answer hops back. The
// front watches each session's partition requests (appends, polls,
// offsets, flushes): after affinityRequestsMin of them in a row went to
// one other shard, and no sooner than affinityMoveIntervalMin after the
// session last moved, it asks the runtime to move the connection there
// (conn_move.go), which happens at the next moment the session runs no
// request. A request to this shard's own partitions, or to a third
// shard, breaks the run: a client spreading its writes over shards stays
// where it is and never ping-pongs.
//
// The session travels with the connection: its client id and entry in
// the client table (GetMe, GetClients), its login, its group
// memberships (held by shard 0, keyed by client and session id), its
// heartbeat clock and its replay cache. What is per shard is re-homed:
// the shard's session list (heartbeat checks, user logouts) and the
// Balanced partitioning cursor (per shard by design).
//
// A user deleted or deactivated while one of its sessions is between
// shards may have had its logout broadcast pass both shards' fronts
// before the session reached either list; the arriving session is
// therefore checked against the published view, which already holds
// the change, and logged out when its user is gone, inactive or was
// re-created under its id.
//
// Classic (0.8) sessions stay where they are: the protocol is lockstep
// (one request at a time, so a hop costs a round trip it would cost
// anyway), and a classic session keeps shard-local timers (a deferred
// start of its next request, a login waiting for the metadata) that hold
// the session on its shard. TLS connections move like any other: the
// shard serves one end of a socketpair whose other end the TLS
// terminator relays, and moving that end changes nothing for the relay.

// noteOwner records that a request of s runs on shard owner's partition,
// and asks for a move once the session's requests settled there.
func (f *front) noteOwner(s *session, owner int) {
	if f.server.options.ConnectionAffinityOff || s.classic != nil || s.closed {
		return
	}
	if owner == f.shard.id {
		s.affinityStreak = 0
		s.conn.dropMove()
		return
	}
	if owner != s.affinityShard {
		s.affinityShard, s.affinityStreak = owner, 0
		s.conn.dropMove()
	}
	s.affinityStreak++
	if s.affinityStreak >= affinityRequestsMin && f.shard.now().Sub(s.movedAt) >= affinityMoveIntervalMin {
		s.conn.wantMove(owner)
	}
}

// movable: a session may leave with its connection when it runs and
// holds no request, waits for no timer of this shard, and speaks 0.9.
func (f *front) movable(conn *Conn) bool {
	s, ok := conn.Attached().(*session)
	if !ok || s.classic != nil || s.closed || s.evicted {
		return false
	}
	if s.detecting != nil && !s.detecting.fired {
		return false // the framing-detection timer still holds the connection
	}
	o := &s.order
	return o.running == 0 && len(o.queue) == 0 && !o.waiting
}

// movedOut takes the session off this shard's list as its connection
// leaves.
func (f *front) movedOut(conn *Conn) {
	s := conn.Attached().(*session)
	invariant.Assert(s.conn == conn, "front: a moving session belongs to its connection")
	f.forget(s)
	s.affinityStreak = 0
}

// movedIn puts an arriving session on this shard's list, logged out when
// its user changed in transit.
func (f *front) movedIn(conn *Conn) {
	s := conn.Attached().(*session)
	invariant.Assert(s.conn == conn, "front: an arriving session belongs to its connection")
	invariant.Assert(s.order.running == 0, "front: a session moves with no request running")
	f.sessions = append(f.sessions, s)
	s.movedAt = f.shard.now()
	if s.session == 0 {
		return
	}
	view := f.server.view.Load()
	user := view.user(s.userID)
	if user == nil || user.Status != uint8(wire.UserActive) || user.CreatedAt != s.userCreatedAt {
		f.endSession(s)
	}
}

// forget takes s off this shard's session list.
func (f *front) forget(s *session) {
	for i, other := range f.sessions {
		if other == s {
			last := len(f.sessions) - 1
			f.sessions[i] = f.sessions[last]
			f.sessions[last] = nil
			f.sessions = f.sessions[:last]
			return
		}
	}
}
