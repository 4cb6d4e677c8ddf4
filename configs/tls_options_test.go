package configs

import (
	"strings"
	"testing"
)

// TestListenBehindTLSAndHTTP: the shards listen only for plain TCP; with
// tcp.tls cmd terminates TLS and hands connections over in process, as
// it does for the HTTP API, so no plaintext listener is opened.
func TestListenBehindTLSAndHTTP(t *testing.T) {
	cases := []struct {
		name    string
		environ []string
		listen  string
	}{
		{"plain tcp", []string{"WHIPPET_TCP_ADDRESS=127.0.0.1:9999"}, "127.0.0.1:9999"},
		{"tcp with tls", []string{"WHIPPET_TCP_ADDRESS=127.0.0.1:9999", "WHIPPET_TCP_TLS_ENABLED=true",
			"WHIPPET_TCP_TLS_CERT_FILE=c.pem", "WHIPPET_TCP_TLS_KEY_FILE=k.pem"}, ""},
		{"http only", []string{"WHIPPET_TCP_ENABLED=false"}, ""},
		{"neither", []string{"WHIPPET_TCP_ENABLED=false", "WHIPPET_HTTP_ENABLED=false"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			loaded, err := Load("", append(tc.environ, "WHIPPET_SYSTEM_SHARDING_CPU_ALLOCATION=1"))
			if err != nil {
				t.Fatal(err)
			}
			options, err := loaded.Config.ServerOptions(RootCredentials(nil), []int{0}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if options.Runtime.Listen != tc.listen {
				t.Fatalf("listen %q, want %q", options.Runtime.Listen, tc.listen)
			}
		})
	}
}

// TestJWTSettings: the token lifetime must be positive and a configured
// secret long enough to sign with.
func TestJWTSettings(t *testing.T) {
	loaded, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Config.HTTP.JWT.AccessTokenExpiry.Std().Hours() != 1 || loaded.Config.HTTP.JWT.EncodingSecret != "" {
		t.Fatalf("jwt defaults %+v", loaded.Config.HTTP.JWT)
	}
	for key, environ := range map[string]string{
		"http.jwt.access_token_expiry": "WHIPPET_HTTP_JWT_ACCESS_TOKEN_EXPIRY=0 s",
		"http.jwt.encoding_secret":     "WHIPPET_HTTP_JWT_ENCODING_SECRET=short",
	} {
		if _, err := Load("", []string{environ}); err == nil || !strings.Contains(err.Error(), key) {
			t.Fatalf("%s: err %v does not name %s", environ, err, key)
		}
	}
}
