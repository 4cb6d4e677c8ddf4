package main

import (
	"net/http"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// A cached basic-auth session ends the moment its credentials stop being
// valid: a password change (made over TCP, not through the gateway)
// refuses the old password on the very next request, and so do a
// deactivation and a deletion.
func TestHTTPBasicAuthFollowsUserChanges(t *testing.T) {
	s := startServer(t)
	root := newAPI(t, s).basic("iggy", "iggy")
	root.want(http.StatusCreated, "POST", "/users", map[string]any{"username": "bob", "password": "secret-1", "status": "active"})
	bob := newAPI(t, s).basic("bob", "secret-1")
	for range 3 { // the session is cached and reused
		bob.want(http.StatusOK, "GET", "/clients/me", nil)
	}
	admin := s.dial(t)
	check(t, "change bob's password", admin.ChangePassword(ctxTimeout(t), wire.NamedID("bob"), "secret-1", "secret-2"))
	bob.wantError(http.StatusUnauthorized, float64(wire.StatusInvalidCredentials), "invalid_credentials", "GET", "/clients/me", nil)
	bob = newAPI(t, s).basic("bob", "secret-2")
	bob.want(http.StatusOK, "GET", "/clients/me", nil)
	// The same through the REST API, by the user on their own session.
	bob.want(http.StatusNoContent, "PUT", "/users/bob/password", map[string]string{"current_password": "secret-2", "new_password": "secret-3"})
	bob.wantError(http.StatusUnauthorized, float64(wire.StatusInvalidCredentials), "invalid_credentials", "GET", "/clients/me", nil)
	bob = newAPI(t, s).basic("bob", "secret-3")
	bob.want(http.StatusOK, "GET", "/clients/me", nil)
	root.want(http.StatusNoContent, "PUT", "/users/bob", map[string]any{"status": "inactive"})
	if code, reply := bob.do("GET", "/clients/me", nil); code == http.StatusOK {
		t.Fatalf("a deactivated user's cached session still served: %v", reply)
	}
	root.want(http.StatusNoContent, "PUT", "/users/bob", map[string]any{"status": "active"})
	bob.want(http.StatusOK, "GET", "/clients/me", nil)
	root.want(http.StatusNoContent, "DELETE", "/users/bob", nil)
	if code, reply := bob.do("GET", "/clients/me", nil); code == http.StatusOK {
		t.Fatalf("a deleted user's cached session still served: %v", reply)
	}
}
