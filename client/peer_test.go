package client

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// peer is a loopback test server: it reads request frames and answers
// each with whatever its handler returns (golden reply frames, mostly).
// It is a stand-in for the network's far end, not a mock of our code.
type peer struct {
	t        testing.TB
	listener net.Listener
	handler  func(connection int, frame []byte) (replies [][]byte, hangUp bool)

	mu          sync.Mutex
	connections int
	failures    []string
	wait        sync.WaitGroup
}

func startPeer(t testing.TB, handler func(connection int, frame []byte) ([][]byte, bool)) *peer {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	return startPeerOn(t, listener, handler)
}

func startPeerOn(t testing.TB, listener net.Listener, handler func(int, []byte) ([][]byte, bool)) *peer {
	p := &peer{t: t, listener: listener, handler: handler}
	p.wait.Add(1)
	go p.serve()
	t.Cleanup(p.stop)
	return p
}

func (p *peer) address() string { return p.listener.Addr().String() }

func (p *peer) serve() {
	defer p.wait.Done()
	for {
		netConn, err := p.listener.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.connections++
		connection := p.connections
		p.mu.Unlock()
		p.wait.Add(1)
		go p.handle(connection, netConn)
	}
}

func (p *peer) handle(connection int, netConn net.Conn) {
	defer p.wait.Done()
	defer netConn.Close()
	reader := bufio.NewReader(netConn)
	for {
		frame, err := readFrame(reader, func(size int) []byte { return make([]byte, size) })
		if err != nil {
			return
		}
		replies, hangUp := p.handler(connection, frame)
		for _, reply := range replies {
			if _, err := netConn.Write(reply); err != nil {
				return
			}
		}
		if hangUp {
			return
		}
	}
}

// fail records a failure seen on the peer's goroutines; stop reports it.
func (p *peer) fail(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failures = append(p.failures, text)
}

func (p *peer) stop() {
	_ = p.listener.Close() // ends serve
	p.wait.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, failure := range p.failures {
		p.t.Error("peer: " + failure)
	}
}

func (p *peer) connectionCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.connections
}

// goldenClientID is the client id every golden frame carries.
var goldenClientID = wire.Uint128{Lo: 0x0807060504030201, Hi: 0x100f0e0d0c0b0a09}

func testOptions(address string) Options {
	return Options{
		Address: address, NewClientID: func() wire.Uint128 { return goldenClientID },
		Sleep:        func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
		ReplyTimeout: 10 * time.Second, SDKName: "go-sdk", SDKVersion: "0.9.0-edge.4",
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var vectorsDir = filepath.Join("..", "..", "shared", "protocol", "vectors")

type goldenRequest struct {
	Command string `json:"command"`
	Frame   string `json:"frame_hex"`
}

type goldenReply struct {
	Command string `json:"command"`
	Frame   string `json:"reply_frame_hex"`
}

func loadVectors(t *testing.T, name string, into any) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(vectorsDir, name))
	if err != nil {
		t.Fatalf("read golden vectors: %v", err)
	}
	if err := json.Unmarshal(text, into); err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
}

func unhex(t *testing.T, text string) []byte {
	t.Helper()
	value, err := hex.DecodeString(text)
	if err != nil {
		t.Fatal(err)
	}
	return value
}

// replyFrame encodes a success reply answering frame.
func replyFrame(t testing.TB, frame []byte, payload wire.Body) []byte {
	request, _, err := wire.DecodeRequest(frame)
	if err != nil {
		t.Errorf("peer got an undecodable request: %v", err)
		return nil
	}
	code := request.Header.CommandCode()
	header := wire.ReplyTo(&request.Header, code.ReplyOperation())
	buffer := make([]byte, wire.ReplyBytes(header.Operation, payload))
	wire.EncodeReply(buffer, header, payload)
	return buffer
}
