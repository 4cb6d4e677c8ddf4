package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

var garbageSeed = flag.Uint64("garbage-seed", 0, "seed of TestGarbageFrames (0: time-based)")

// TestGarbageFrames: seeded random frames (declared operations, random
// codes, sessions and bodies) on logged-in connections never crash the
// server nor disturb a bystander, and what it stored survives a restart.
// After each random frame a Ping proves the connection is still in order
// (or was closed as the protocol says).
func TestGarbageFrames(t *testing.T) {
	seed := *garbageSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -garbage-seed %d)", seed, seed)
	random := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s := startServer(t)
	bystander := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "stream")(bystander.CreateStream(ctx, "steady", nil))
	must[*wire.TopicDetails](t, "topic")(bystander.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 2, Name: "t"}))
	operations := []wire.Operation{wire.OperationRegister, wire.OperationNonReplicated, wire.OperationLogout,
		wire.OperationCreateStream, wire.OperationCreateTopic, wire.OperationDeleteStream, wire.OperationCreateUser,
		wire.OperationSendMessages, wire.OperationStoreConsumerOffset, wire.OperationJoinConsumerGroup}
	iterations := 400
	if testing.Short() {
		iterations = 150
	}
	var r *rawConn
	for i := range iterations {
		if r == nil {
			r = s.rawConn(t)
			wantReplyStatus(t, "login", r.login("iggy", "iggy", wire.ProtocolVersion), wire.StatusOK)
		}
		body := make([]byte, random.IntN(64+448*(i%3/2)))
		for j := range body {
			body[j] = byte(random.IntN(4 + 252*(i%2))) // small values hit lengths and kinds; odd rounds take any byte
		}
		operation := operations[random.IntN(len(operations))]
		frame := r.frame(operation, wire.Code(random.IntN(700)), wire.Raw(body))
		if operation == wire.OperationNonReplicated && random.IntN(2) == 0 {
			binary.LittleEndian.PutUint32(frame[196:], uint32(wire.Codes()[random.IntN(len(wire.Codes()))]))
		}
		r.write(frame)
		if !r.pingAfter() {
			r = nil // evicted or closed, as the protocol allows
		}
		if i%50 == 0 {
			check(t, "bystander ping", bystander.Ping(ctx))
		}
	}
	s.restart()
	c := s.dial(t)
	if topic := must[*wire.TopicDetails](t, "topic after")(c.GetTopic(ctx, wire.NamedID("steady"), id(0))); topic.Name != "t" {
		t.Fatalf("topic after the garbage %+v", topic)
	}
}

// pingAfter sends a Ping and reads up to its reply; false when the
// connection ended (an eviction, or a close) first.
func (r *rawConn) pingAfter() bool {
	r.t.Helper()
	ping := r.frame(wire.OperationNonReplicated, wire.CodePing, nil)
	want := binary.LittleEndian.Uint64(ping[168:])
	if _, err := r.conn.Write(ping); err != nil {
		return false
	}
	for {
		reply, err := r.next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err) {
				return false
			}
			r.t.Fatalf("reading after a garbage frame: %v", err)
		}
		if reply.Command == wire.CommandEviction {
			return false
		}
		if reply.Header.Request == want && reply.Header.Operation == wire.OperationNonReplicated {
			return true
		}
	}
}

func isReset(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && !opErr.Timeout()
}

// next reads one frame, reporting read errors instead of failing.
func (r *rawConn) next() (wire.Reply, error) {
	_ = r.conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // a stuck read is an error below
	head := make([]byte, wire.HeaderBytes)
	if _, err := io.ReadFull(r.conn, head); err != nil {
		return wire.Reply{}, err
	}
	size := int(binary.LittleEndian.Uint32(head[48:]))
	frame := append(head, make([]byte, size-wire.HeaderBytes)...)
	if _, err := io.ReadFull(r.conn, frame[wire.HeaderBytes:]); err != nil {
		return wire.Reply{}, err
	}
	reply, _, err := wire.DecodeReply(frame)
	return reply, err
}
