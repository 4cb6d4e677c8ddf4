package main

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
)

// TestTLSServer: the CLI's TLS flags against the real server's own TLS
// listener (tcp.tls with a self-signed certificate made here), no proxy
// between: trusted and named right it works, from flags and from the
// environment; an untrusted or misnamed certificate, or plaintext to the
// TLS port, is a connection failure.
func TestTLSServer(t *testing.T) {
	certificate, caFile := selfSigned(t, "whippet.test")
	der, err := x509.MarshalPKCS8PrivateKey(certificate.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "WHIPPET_TCP_TLS_ENABLED=true", "WHIPPET_TCP_TLS_CERT_FILE="+caFile,
		"WHIPPET_TCP_TLS_KEY_FILE="+keyFile)
	if s.tlsAddress == "" {
		t.Fatalf("no tls_address in the server's log\n%s", s.log())
	}
	env := []string{"WHIPPET_TCP_SERVER_ADDRESS=" + s.tlsAddress, "WHIPPET_USERNAME=iggy", "WHIPPET_PASSWORD=iggy"}
	tlsFlags := []string{"--tcp-tls-enabled", "--tcp-tls-ca-file", caFile, "--tcp-tls-domain", "whippet.test"}

	created := runCLI(t, env, "", append(tlsFlags, "stream", "create", "secure")...)
	if created.code != exitOK {
		t.Fatalf("TLS to the server\n%s\n%s", created, s.log())
	}
	wantStrings(t, "over TLS", column(t, created, "NAME"), "secure")
	for _, args := range [][]string{{"topic", "create", "secure", "t", "1", "none"},
		{"message", "send", "secure", "t", "--partition-id", "0", "alpha", "beta"}} {
		if done := runCLI(t, env, "", append(tlsFlags, args...)...); done.code != exitOK {
			t.Fatalf("over TLS\n%s", done)
		}
	}
	polled := decode[pollView](t, runCLI(t, env, "", append(tlsFlags, "-o", "json", "message", "poll", "secure", "t", "0",
		"--offset", "0", "--message-count", "10")...))
	wantStrings(t, "payloads over TLS", payloadsOf(polled), "alpha", "beta")
	listed := runCLI(t, append(env, "IGGY_TCP_TLS_ENABLED=true", "WHIPPET_TCP_TLS_CA_FILE="+caFile,
		"WHIPPET_TCP_TLS_DOMAIN=whippet.test"), "", "stream", "list")
	if listed.code != exitOK {
		t.Fatalf("TLS from the environment\n%s", listed)
	}
	wantStrings(t, "streams over TLS", column(t, listed, "NAME"), "secure")
	wantExit(t, runCLI(t, env, "", "--tcp-tls-enabled", "--tcp-tls-domain", "whippet.test", "ping"),
		exitConnection, "certificate")
	wantExit(t, runCLI(t, env, "", "--tcp-tls-enabled", "--tcp-tls-ca-file", caFile, "--tcp-tls-domain",
		"other.test", "ping"), exitConnection, "certificate")
	if plain := runCLI(t, env, "", "ping"); plain.code == exitOK {
		t.Fatalf("plaintext to the TLS listener succeeded\n%s", plain)
	}
}
