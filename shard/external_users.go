package shard

import (
	"hash/fnv"

	"github.com/whippetio/whippet/wire"
)

// CredentialStamp returns a fingerprint of user userID's current password
// hash and whether the user exists and is active, as of the published
// view. Other goroutines (the HTTP gateway) call it to tell a cached
// login from credentials that have since changed: the stamp changes with
// every password change, and a deleted or deactivated user reads !active.
// It reads only the atomic view pointer, so it is safe from any thread.
func (s *Server) CredentialStamp(userID uint32) (stamp uint64, active bool) {
	view := s.view.Load()
	if view == nil {
		return 0, false
	}
	user := view.user(userID)
	if user == nil {
		return 0, false
	}
	digest := fnv.New64a()
	digest.Write([]byte(user.PasswordHash))
	return digest.Sum64(), user.Status == uint8(wire.UserActive)
}
