package client

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

func decodeRequest(t *testing.T, frame []byte) (wire.RequestHeader, []byte) {
	request, _, err := wire.DecodeRequest(frame)
	if err != nil {
		t.Errorf("undecodable request: %v", err)
	}
	return request.Header, request.Body
}

func loginReply(t *testing.T, frame []byte, session uint64) []byte {
	return replyFrame(t, frame, &wire.LoginReply{Session: session, ServerVersion: wire.ProtocolVersion,
		ServerRelease: "test"})
}

func roster(nodes ...wire.ClusterNode) *wire.ClusterMetadata {
	return &wire.ClusterMetadata{Name: "test", Nodes: nodes}
}

func node(address string, role wire.NodeRole) wire.ClusterNode {
	host, port, _ := net.SplitHostPort(address)
	number, _ := strconv.Atoi(port)
	return wire.ClusterNode{Name: address, IP: host, TCPPort: uint16(number), Role: role}
}

// TestPipelining: the peer withholds every reply until it has read all the
// requests, so the calls can only complete if they were in flight together.
func TestPipelining(t *testing.T) {
	const calls = 16
	var mu sync.Mutex
	var held [][]byte
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) {
		mu.Lock()
		defer mu.Unlock()
		held = append(held, replyFrame(t, frame, nil))
		if len(held) < calls {
			return nil, false
		}
		replies := held
		held = nil
		return replies, false
	})
	ctx := testContext(t)
	client, err := Dial(ctx, testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var wait sync.WaitGroup
	failures := make(chan error, calls)
	for range calls {
		wait.Add(1)
		go func() {
			defer wait.Done()
			failures <- client.Ping(ctx)
		}()
	}
	wait.Wait()
	close(failures)
	for err := range failures {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestEvictionEndsSession: a login answered with an Eviction fails with
// the mapped status and drops the connection; the next call redials.
func TestEvictionEndsSession(t *testing.T) {
	p := startPeer(t, func(connection int, frame []byte) ([][]byte, bool) {
		header, _ := decodeRequest(t, frame)
		if header.Operation == wire.OperationRegister {
			eviction := make([]byte, wire.HeaderBytes)
			(&wire.EvictionHeader{Client: header.Client, Reason: wire.EvictionInvalidCredentials}).Encode(eviction)
			return [][]byte{eviction}, false
		}
		return [][]byte{replyFrame(t, frame, nil)}, false
	})
	ctx := testContext(t)
	client, err := New(testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	_, err = client.Login(ctx, "iggy", "wrong")
	var refusal *Error
	if !errors.As(err, &refusal) || !refusal.Evicted || refusal.Status != wire.StatusInvalidCredentials {
		t.Fatalf("login error %v, want an eviction with InvalidCredentials", err)
	}
	if err := client.Ping(ctx); err != nil {
		t.Fatalf("ping after the eviction: %v", err)
	}
	if got := p.connectionCount(); got != 2 {
		t.Fatalf("%d connections, want a redial after the eviction", got)
	}
}

// TestTransientReplay: a login answered with result 57 is replayed with the
// identical frame on the same connection until it succeeds.
func TestTransientReplay(t *testing.T) {
	var replies []goldenReply
	loadVectors(t, "responses.json", &replies)
	var transient []byte
	for _, reply := range replies {
		if reply.Command == "LoginRegister transient: result section TransientNotCommitted (57), SDK replays" {
			transient = unhex(t, reply.Frame)
		}
	}
	var frames [][]byte
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) {
		header, _ := decodeRequest(t, frame)
		if header.Operation != wire.OperationRegister {
			return [][]byte{replyFrame(t, frame, roster())}, false
		}
		frames = append(frames, frame)
		if len(frames) < 3 {
			return [][]byte{transient}, false
		}
		return [][]byte{loginReply(t, frame, 7)}, false
	})
	client, err := Dial(testContext(t), testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if _, err := client.Login(testContext(t), "iggy", "iggy"); err != nil {
		t.Fatal(err)
	}
	if len(frames) != 3 || !bytes.Equal(frames[0], frames[2]) || p.connectionCount() != 1 {
		t.Fatalf("%d register frames over %d connections, want 3 identical on 1", len(frames), p.connectionCount())
	}
}

// TestLeaderRedirection: a follower's roster names another node as leader;
// the client moves there, logs in again and stays.
func TestLeaderRedirection(t *testing.T) {
	var leaderLogins atomic.Int32
	leader := startPeer(t, nil)
	follower := startPeer(t, nil)
	serve := func(self *peer) func(int, []byte) ([][]byte, bool) {
		return func(_ int, frame []byte) ([][]byte, bool) {
			header, _ := decodeRequest(t, frame)
			switch header.CommandCode() {
			case wire.CodeLoginRegister:
				if self == leader {
					leaderLogins.Add(1)
				}
				return [][]byte{loginReply(t, frame, 3)}, false
			case wire.CodeGetClusterMetadata:
				nodes := roster(node(follower.address(), wire.RoleFollower), node(leader.address(), wire.RoleLeader))
				return [][]byte{replyFrame(t, frame, nodes)}, false
			}
			return [][]byte{replyFrame(t, frame, nil)}, false
		}
	}
	leader.handler, follower.handler = serve(leader), serve(follower)
	options := testOptions(follower.address())
	options.Username, options.Password = "iggy", "iggy"
	client, err := Dial(testContext(t), options)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if !sameAddress(client.Address(), leader.address()) || leaderLogins.Load() != 1 || client.Session() != 3 {
		t.Fatalf("client at %s with %d leader logins, want the leader %s", client.Address(), leaderLogins.Load(),
			leader.address())
	}
	if err := client.Ping(testContext(t)); err != nil {
		t.Fatal(err)
	}
}

// TestReconnectRestoresSession: the peer hangs up after the first login;
// the next call redials under a new client id and logs in again.
func TestReconnectRestoresSession(t *testing.T) {
	var logins atomic.Int32
	p := startPeer(t, func(connection int, frame []byte) ([][]byte, bool) {
		header, _ := decodeRequest(t, frame)
		switch header.CommandCode() {
		case wire.CodeLoginRegister:
			logins.Add(1)
			return [][]byte{loginReply(t, frame, uint64(10+connection))}, false
		case wire.CodeGetClusterMetadata:
			return [][]byte{replyFrame(t, frame, roster())}, connection == 1
		}
		return [][]byte{replyFrame(t, frame, nil)}, false
	})
	options := testOptions(p.address())
	options.Username, options.Password = "iggy", "iggy"
	var minted atomic.Uint64
	options.NewClientID = func() wire.Uint128 { return wire.Uint128{Lo: minted.Add(1)} }
	client, err := Dial(testContext(t), options)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx := testContext(t)
	for client.Ping(ctx) != nil && ctx.Err() == nil {
		// the first Ping may race the hang-up and fail with ErrDisconnected
	}
	if logins.Load() != 2 || client.Session() != 12 || minted.Load() != 2 {
		t.Fatalf("%d logins, session %d, %d client ids", logins.Load(), client.Session(), minted.Load())
	}
}

// TestCancelledCallKeepsConnection: a caller that gives up leaves its
// request queued; its late reply is dropped and the next call on the same
// connection still gets its own reply.
func TestCancelledCallKeepsConnection(t *testing.T) {
	p, arrived := startHoldingPeer(t, func(_ int, frame []byte) []byte { return replyFrame(t, frame, nil) })
	client, err := Dial(testContext(t), testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithCancel(testContext(t))
	first := make(chan error, 1)
	go func() { first <- client.Ping(ctx) }()
	<-arrived
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ping: %v", err)
	}
	if err := client.Ping(testContext(t)); err != nil || p.connectionCount() != 1 {
		t.Fatalf("second ping: %v over %d connections", err, p.connectionCount())
	}
}

// startHoldingPeer starts a peer that answers its first request only
// together with its second: it holds reply's frame for the first and
// sends both once the second arrives (reply gets the request's index).
// The channel gets a value as each of the two requests arrives.
func startHoldingPeer(t *testing.T, reply func(index int, frame []byte) []byte) (*peer, <-chan struct{}) {
	arrived := make(chan struct{}, 2)
	var held [][]byte
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) {
		held = append(held, reply(len(held), frame))
		arrived <- struct{}{}
		if len(held) < 2 {
			return nil, false
		}
		return held, false
	})
	return p, arrived
}

// TestHeartbeat: with HeartbeatInterval set, an idle client pings.
func TestHeartbeat(t *testing.T) {
	pings := make(chan struct{}, 8)
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) {
		select {
		case pings <- struct{}{}:
		default:
		}
		return [][]byte{replyFrame(t, frame, nil)}, false
	})
	options := testOptions(p.address())
	options.HeartbeatInterval = 10 * time.Millisecond
	client, err := Dial(testContext(t), options)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for range 2 {
		select {
		case <-pings:
		case <-testContext(t).Done():
			t.Fatal("no heartbeat")
		}
	}
}

// TestRequestIDsLeaveInOrder: concurrent metadata writes each take the
// next request id, and the ids reach the server strictly increasing
// (§5.4), whatever the goroutine interleaving.
func TestRequestIDsLeaveInOrder(t *testing.T) {
	const calls = 64
	var mu sync.Mutex
	last := uint64(0)
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) {
		header, _ := decodeRequest(t, frame)
		mu.Lock()
		defer mu.Unlock()
		if header.Request <= last {
			t.Errorf("request id %d after %d", header.Request, last)
		}
		last = header.Request
		return [][]byte{replyFrame(t, frame, nil)}, false
	})
	client, err := Dial(testContext(t), testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var wait sync.WaitGroup
	for range calls {
		wait.Add(1)
		go func() {
			defer wait.Done()
			if err := client.PurgeStream(testContext(t), stream1); err != nil {
				t.Error(err)
			}
		}()
	}
	wait.Wait()
	if last != calls {
		t.Fatalf("last request id %d, want %d", last, calls)
	}
}
