package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestTLSFlags: the CLI connects over TLS with --tcp-tls-enabled, trusting
// the CA of --tcp-tls-ca-file and checking the name of --tcp-tls-domain.
// A TLS terminator made in the test, with a self-signed certificate,
// forwards to the real server; an untrusted or misnamed certificate is a
// connection failure (exit 4).
func TestTLSFlags(t *testing.T) {
	s := startServer(t)
	certificate, caFile := selfSigned(t, "whippet.test")
	address := terminateTLS(t, certificate, s.address)
	env := []string{"WHIPPET_TCP_SERVER_ADDRESS=" + address, "WHIPPET_USERNAME=iggy", "WHIPPET_PASSWORD=iggy"}

	trusted := runCLI(t, env, "", "--tcp-tls-enabled", "--tcp-tls-ca-file", caFile, "--tcp-tls-domain",
		"whippet.test", "stream", "create", "secure")
	if trusted.code != exitOK {
		t.Fatalf("TLS with the CA\n%s", trusted)
	}
	wantStrings(t, "over TLS", column(t, trusted, "NAME"), "secure")
	viaEnv := runCLI(t, append(env, "IGGY_TCP_TLS_ENABLED=true", "WHIPPET_TCP_TLS_CA_FILE="+caFile,
		"WHIPPET_TCP_TLS_DOMAIN=whippet.test"), "", "ping")
	if viaEnv.code != exitOK {
		t.Fatalf("TLS from the environment\n%s", viaEnv)
	}
	wantExit(t, runCLI(t, env, "", "--tcp-tls-enabled", "--tcp-tls-domain", "whippet.test", "ping"),
		exitConnection, "certificate")
	wantExit(t, runCLI(t, env, "", "--tcp-tls-enabled", "--tcp-tls-ca-file", caFile, "--tcp-tls-domain",
		"other.test", "ping"), exitConnection, "certificate")
	wantExit(t, runCLI(t, env, "", "--tcp-tls-enabled", "--tcp-tls-ca-file", filepath.Join(t.TempDir(), "none.pem"),
		"ping"), exitUsage, "--tcp-tls-ca-file")
}

// selfSigned returns a certificate for name and the path of its PEM.
func selfSigned(t *testing.T, name string) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		DNSNames: []string{name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, path
}

// terminateTLS accepts TLS on a free port and pipes each connection to
// target in plaintext; it stops with the test.
func terminateTLS(t *testing.T, certificate tls.Certificate, target string) string {
	t.Helper()
	listener, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{certificate},
		MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = listener.Close() // ends the accept loop
		wg.Wait()
	})
	wg.Go(func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { pipe(conn, target) })
		}
	})
	return listener.Addr().String()
}

func pipe(front net.Conn, target string) {
	defer func() { _ = front.Close() }() // one connection of a test proxy
	back, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer func() { _ = back.Close() }()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(back, front); done <- struct{}{} }() // either side closing ends the pair
	go func() { _, _ = io.Copy(front, back); done <- struct{}{} }()
	<-done
}
