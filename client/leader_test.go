package client

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// statusFrame encodes a pre-commit refusal answering frame.
func statusFrame(t *testing.T, frame []byte, status wire.Status) []byte {
	header, _ := decodeRequest(t, frame)
	reply := make([]byte, wire.HeaderBytes)
	wire.EncodeStatusReply(reply, wire.ReplyTo(&header, header.CommandCode().ReplyOperation()), status)
	return reply
}

// TestNotAcceptedFollowsLeader: a node that refuses a write with 58
// TransientNotAccepted (it lost its leadership) makes the client re-read
// the roster, move to the leader it names, log in there and replay the
// write there (PROTOCOL.md §11, as the Go SDK does): the write is applied
// once, by the new leader.
func TestNotAcceptedFollowsLeader(t *testing.T) {
	first, second := startPeer(t, nil), startPeer(t, nil)
	var deposed atomic.Bool
	var refused, applied, secondLogins atomic.Int32
	leaderNow := func() *peer {
		if deposed.Load() {
			return second
		}
		return first
	}
	serve := func(self *peer) func(int, []byte) ([][]byte, bool) {
		return func(_ int, frame []byte) ([][]byte, bool) {
			header, _ := decodeRequest(t, frame)
			switch header.CommandCode() {
			case wire.CodeLoginRegister:
				if self == second {
					secondLogins.Add(1)
				}
				return [][]byte{loginReply(t, frame, 5)}, false
			case wire.CodeGetClusterMetadata:
				leader := leaderNow()
				nodes := []wire.ClusterNode{node(first.address(), wire.RoleFollower), node(second.address(), wire.RoleFollower)}
				if leader == first {
					nodes[0].Role = wire.RoleLeader
				} else {
					nodes[1].Role = wire.RoleLeader
				}
				return [][]byte{replyFrame(t, frame, roster(nodes...))}, false
			case wire.CodeCreateStream:
				if self != leaderNow() {
					refused.Add(1)
					return [][]byte{statusFrame(t, frame, wire.StatusTransientNotAccepted)}, false
				}
				applied.Add(1)
				return [][]byte{replyFrame(t, frame, &wire.StreamInfo{ID: 1, Name: "orders"})}, false
			}
			return [][]byte{replyFrame(t, frame, nil)}, false
		}
	}
	first.handler, second.handler = serve(first), serve(second)
	options := testOptions(first.address())
	options.Username, options.Password = "iggy", "iggy"
	client, err := Dial(testContext(t), options)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if !sameAddress(client.Address(), first.address()) {
		t.Fatalf("client at %s before the change, want %s", client.Address(), first.address())
	}
	deposed.Store(true)
	stream, err := client.CreateStream(testContext(t), "orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	if stream.Name != "orders" || refused.Load() != 1 || applied.Load() != 1 || secondLogins.Load() != 1 {
		t.Fatalf("stream %+v: %d refused, %d applied, %d logins on the new leader; want 1, 1, 1", stream,
			refused.Load(), applied.Load(), secondLogins.Load())
	}
	if !sameAddress(client.Address(), second.address()) {
		t.Fatalf("client at %s after 58, want the new leader %s", client.Address(), second.address())
	}
}

// TestNotAcceptedWithoutCluster: a single node's 58 is replayed on the
// same node until it accepts; the roster check keeps the connection.
func TestNotAcceptedWithoutCluster(t *testing.T) {
	var refusals atomic.Int32
	p := startPeer(t, func(_ int, frame []byte) ([][]byte, bool) {
		header, _ := decodeRequest(t, frame)
		switch header.CommandCode() {
		case wire.CodeLoginRegister:
			return [][]byte{loginReply(t, frame, 9)}, false
		case wire.CodeGetClusterMetadata:
			return [][]byte{replyFrame(t, frame, roster())}, false
		case wire.CodePing:
			if refusals.Add(1) <= 3 {
				return [][]byte{statusFrame(t, frame, wire.StatusTransientNotAccepted)}, false
			}
		}
		return [][]byte{replyFrame(t, frame, nil)}, false
	})
	options := testOptions(p.address())
	options.Username, options.Password = "iggy", "iggy"
	client, err := Dial(testContext(t), options)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := client.Ping(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if refusals.Load() != 4 || p.connectionCount() != 1 {
		t.Fatalf("%d pings over %d connections, want 4 on 1", refusals.Load(), p.connectionCount())
	}
}

// TestReconnectTriesOtherNodes: when the node the client talks to dies,
// the redial moves on to the other healthy nodes of the last roster
// instead of retrying only the dead one.
func TestReconnectTriesOtherNodes(t *testing.T) {
	first, second := startPeer(t, nil), startPeer(t, nil)
	var firstDead atomic.Bool
	serve := func(self *peer) func(int, []byte) ([][]byte, bool) {
		return func(_ int, frame []byte) ([][]byte, bool) {
			header, _ := decodeRequest(t, frame)
			switch header.CommandCode() {
			case wire.CodeLoginRegister:
				return [][]byte{loginReply(t, frame, 2)}, false
			case wire.CodeGetClusterMetadata:
				nodes := roster(node(first.address(), wire.RoleLeader), node(second.address(), wire.RoleFollower))
				if firstDead.Load() {
					nodes.Nodes[0].Role, nodes.Nodes[0].Status = wire.RoleFollower, wire.NodeUnreachable
					nodes.Nodes[1].Role = wire.RoleLeader
				}
				return [][]byte{replyFrame(t, frame, nodes)}, false
			}
			return [][]byte{replyFrame(t, frame, nil)}, self == first && firstDead.Load()
		}
	}
	first.handler, second.handler = serve(first), serve(second)
	options := testOptions(first.address())
	options.Username, options.Password = "iggy", "iggy"
	options.ReconnectAttempts = 1 // two dials: the dead node, then the next one
	client, err := Dial(testContext(t), options)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	firstDead.Store(true)
	_ = client.Ping(testContext(t)) // answered, then the node hangs up
	first.stop()                    // and stays down: dials to it are refused
	ctx := testContext(t)
	for client.Ping(ctx) != nil && ctx.Err() == nil {
		// a Ping racing the hang-up fails with ErrDisconnected
	}
	if ctx.Err() != nil || !sameAddress(client.Address(), second.address()) {
		t.Fatalf("client at %s (%v), want the surviving node %s", client.Address(), ctx.Err(), second.address())
	}
}

// TestReconnectAfterTimeoutTriesOthersFirst: a node that stops answering
// (paused: it still accepts connections) costs one reply timeout; the
// redial then starts at the other nodes of the roster instead of dialling
// the silent node again.
func TestReconnectAfterTimeoutTriesOthersFirst(t *testing.T) {
	first, second := startPeer(t, nil), startPeer(t, nil)
	var silent atomic.Bool
	serve := func(self *peer) func(int, []byte) ([][]byte, bool) {
		return func(_ int, frame []byte) ([][]byte, bool) {
			if self == first && silent.Load() {
				return nil, false // reads and never answers
			}
			header, _ := decodeRequest(t, frame)
			switch header.CommandCode() {
			case wire.CodeLoginRegister:
				return [][]byte{loginReply(t, frame, 4)}, false
			case wire.CodeGetClusterMetadata:
				nodes := roster(node(first.address(), wire.RoleLeader), node(second.address(), wire.RoleFollower))
				if silent.Load() {
					nodes.Nodes[0].Role, nodes.Nodes[1].Role = wire.RoleFollower, wire.RoleLeader
				}
				return [][]byte{replyFrame(t, frame, nodes)}, false
			}
			return [][]byte{replyFrame(t, frame, nil)}, false
		}
	}
	first.handler, second.handler = serve(first), serve(second)
	options := testOptions(first.address())
	options.Username, options.Password = "iggy", "iggy"
	options.ReplyTimeout = 200 * time.Millisecond
	options.ReconnectAttempts = -1 // one dial per reconnect: it must be the live node
	client, err := Dial(testContext(t), options)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	silent.Store(true)
	if err := client.Ping(testContext(t)); !errors.Is(err, errTimeout) {
		t.Fatalf("ping of a silent node: %v, want a timeout", err)
	}
	if err := client.Ping(testContext(t)); err != nil {
		t.Fatalf("ping after the timeout: %v (client at %s)", err, client.Address())
	}
	if !sameAddress(client.Address(), second.address()) || first.connectionCount() != 1 {
		t.Fatalf("client at %s after %d connections to the silent node, want %s after 1", client.Address(),
			first.connectionCount(), second.address())
	}
}
