package client

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"
)

// selfSigned returns a certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "whippet test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(parsed)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// dialOverTLS listens on loopback behind a self-signed certificate, hands
// the TLS listener to serve, and returns a client dialled to it with
// that certificate trusted, and the options it was dialled with.
func dialOverTLS(t *testing.T, serve func(net.Listener)) (*Client, Options) {
	t.Helper()
	certificate, pool := selfSigned(t)
	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	serve(tls.NewListener(plain, &tls.Config{Certificates: []tls.Certificate{certificate}}))
	options := testOptions(plain.Addr().String())
	options.TLS = &tls.Config{RootCAs: pool}
	client, err := Dial(testContext(t), options)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client, options
}

// TestTLS: with Options.TLS the same frames travel inside a verified TLS
// session whose server name defaults to the host of the address.
func TestTLS(t *testing.T) {
	client, options := dialOverTLS(t, func(secure net.Listener) {
		startPeerOn(t, secure, func(_ int, frame []byte) ([][]byte, bool) { return [][]byte{replyFrame(t, frame, nil)}, false })
	})
	if err := client.Ping(testContext(t)); err != nil {
		t.Fatalf("ping over TLS: %v", err)
	}
	options.TLS = &tls.Config{} // no trust in the test certificate
	if _, err := Dial(testContext(t), withoutRetries(options)); err == nil {
		t.Fatal("an untrusted certificate was accepted")
	}
}

func withoutRetries(options Options) Options {
	options.ReconnectAttempts = -1
	return options
}
