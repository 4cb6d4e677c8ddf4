package main

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/whippetio/whippet/shard"
)

// The TLS listener terminates TLS on Go's crypto/tls (the portable path)
// and carries each connection's plaintext over a socketpair whose other
// end a shard adopted (Runtime.Adopt), where the front serves it like any
// TCP client. No plaintext listener is opened.

// tlsProxy accepts TLS connections and relays them to target.
type tlsProxy struct {
	listener net.Listener
	runtime  *shard.Runtime
	logger   *slog.Logger
	wait     sync.WaitGroup
}

// tlsHandshakeTimeout bounds a client's TLS handshake.
const tlsHandshakeTimeout = 10 * time.Second

func loadTLS(certFile, keyFile string) (*tls.Config, error) {
	certificate, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{certificate}, MinVersion: tls.VersionTLS12}, nil
}

func startTLSProxy(address string, runtime *shard.Runtime, config *tls.Config, logger *slog.Logger) (*tlsProxy, error) {
	listener, err := net.Listen("tcp", address)
	if err != nil {
		return nil, err
	}
	proxy := &tlsProxy{listener: listener, runtime: runtime, logger: logger}
	proxy.wait.Add(1)
	go proxy.accept(config)
	return proxy, nil
}

func (p *tlsProxy) accept(config *tls.Config) {
	defer p.wait.Done()
	for {
		conn, err := p.listener.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				p.logger.Error("tls accept", "err", err.Error())
			}
			return
		}
		go p.relay(tls.Server(conn, config))
	}
}

func (p *tlsProxy) relay(conn *tls.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(tlsHandshakeTimeout)) // a fresh conn accepts a deadline
	if err := conn.Handshake(); err != nil {
		p.logger.Debug("tls handshake", "remote", conn.RemoteAddr().String(), "err", err.Error())
		return
	}
	_ = conn.SetDeadline(time.Time{}) // clearing a deadline cannot fail on a live conn
	upstream, err := dialShards(p.runtime)
	if err != nil {
		p.logger.Error("tls relay: hand the connection to a shard", "err", err.Error())
		return
	}
	defer upstream.Close()
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(upstream, conn) // ends when either side closes
		_ = upstream.(*net.UnixConn).CloseWrite()
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(conn, upstream) // ends when either side closes
		_ = conn.CloseWrite()
		done <- struct{}{}
	}()
	<-done
	<-done
}

// close stops accepting; relayed connections end with their peers or
// with the server's shutdown closing their upstream.
func (p *tlsProxy) close() {
	_ = p.listener.Close() // ends accept
	p.wait.Wait()
}
