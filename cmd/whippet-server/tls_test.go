package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files
// and returns their paths and a pool trusting the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "whippet test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	directory := t.TempDir()
	certFile, keyFile = filepath.Join(directory, "cert.pem"), filepath.Join(directory, "key.pem")
	check(t, "write cert", os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	check(t, "write key", os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	certificate, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(certificate)
	return certFile, keyFile, pool
}

// TestTLSListeners starts the server with TLS on the TCP listener and
// HTTPS, then runs the protocol through our client over TLS and the
// REST API over HTTPS, and checks that plaintext is refused on both and
// that no plaintext listener is open.
func TestTLSListeners(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	s := startServer(t, "WHIPPET_TCP_TLS_ENABLED=true", "WHIPPET_TCP_TLS_CERT_FILE="+certFile,
		"WHIPPET_TCP_TLS_KEY_FILE="+keyFile, "WHIPPET_HTTP_TLS_ENABLED=true", "WHIPPET_HTTP_TLS_CERT_FILE="+certFile,
		"WHIPPET_HTTP_TLS_KEY_FILE="+keyFile)
	tlsAddress := logField(t, s, "tls_address")
	if s.address != "none" {
		t.Fatalf("a plaintext listener is open at %s beside the TLS one", s.address)
	}
	ctx := ctxTimeout(t)
	c, err := client.Dial(ctx, client.Options{Address: tlsAddress, Username: "iggy", Password: "iggy",
		TLS: &tls.Config{RootCAs: pool}, ReconnectAttempts: -1})
	check(t, "dial over TLS", err)
	t.Cleanup(func() { _ = c.Close() })
	must[*wire.StreamInfo](t, "create stream over TLS")(c.CreateStream(ctx, "secure", nil))
	must[*wire.TopicDetails](t, "create topic over TLS")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: wire.NamedID("secure"),
		PartitionsCount: 1, Name: "t"}))
	_, err = c.SendMessages(ctx, wire.NamedID("secure"), wire.NamedID("t"),
		wire.Partitioning{Kind: wire.PartitioningPartitionID}, messages("tls", 3))
	check(t, "send over TLS", err)

	plain, err := net.DialTimeout("tcp", tlsAddress, 5*time.Second)
	check(t, "dial plaintext", err)
	_, _ = plain.Write(make([]byte, 256)) // a plaintext frame header is not a TLS hello
	_ = plain.SetReadDeadline(time.Now().Add(10 * time.Second))
	reply := make([]byte, 512)
	if n, err := plain.Read(reply); err == nil && n > 0 && reply[0] != 0x15 { // 0x15: a TLS alert record
		t.Fatalf("plaintext on the TLS listener got %d bytes of reply", n)
	}
	_ = plain.Close()

	https := &api{t: t, base: "https://" + logField(t, s, "http_address"),
		client: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
	https.auth = func(*http.Request) {}
	https.want(http.StatusOK, "GET", "/", nil)
	root := https.bearer(login(t, https, "iggy", "iggy"))
	polled := root.want(http.StatusOK, "GET", "/streams/secure/topics/t/messages?partition_id=0&kind=first&count=10", nil)
	if got := len(field(t, polled, "messages").([]any)); got != 3 {
		t.Fatalf("HTTPS poll of 3 messages sent over TLS: %d", got)
	}
	untrusted := &http.Client{Timeout: 5 * time.Second}
	if _, err := untrusted.Get(https.base + "/"); err == nil {
		t.Fatal("an HTTPS client without the certificate trusted it")
	}
	if response, err := untrusted.Get("http://" + logField(t, s, "http_address") + "/"); err == nil {
		_ = response.Body.Close()
		if response.StatusCode == http.StatusOK {
			t.Fatal("plaintext HTTP was served on the HTTPS listener")
		}
	}
}
