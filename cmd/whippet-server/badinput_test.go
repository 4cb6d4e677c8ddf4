package main

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// rawConn speaks hand-made frames to the server.
type rawConn struct {
	t       *testing.T
	conn    net.Conn
	client  wire.Uint128
	session uint64
	request uint64
}

func (s *server) rawConn(t *testing.T) *rawConn {
	return &rawConn{t: t, conn: s.raw(t), client: wire.Uint128{Lo: uint64(time.Now().UnixNano()), Hi: 1}}
}

// frame encodes a request; code goes @196 only for NonReplicated.
func (r *rawConn) frame(operation wire.Operation, code wire.Code, body wire.Body) []byte {
	header := wire.RequestHeader{Client: r.client, Operation: operation, Session: r.session}
	if operation == wire.OperationNonReplicated {
		header.Code = code
	}
	if operation != wire.OperationRegister {
		r.request++
		header.Request = r.request
	}
	frame := make([]byte, wire.RequestBytes(body))
	wire.EncodeRequest(frame, header, body)
	return frame
}

func (r *rawConn) write(frame []byte) {
	r.t.Helper()
	if _, err := r.conn.Write(frame); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// read returns the next reply or eviction.
func (r *rawConn) read() wire.Reply {
	r.t.Helper()
	_ = r.conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // a stuck read fails below
	head := make([]byte, wire.HeaderBytes)
	if _, err := io.ReadFull(r.conn, head); err != nil {
		r.t.Fatalf("read reply header: %v", err)
	}
	size := int(binary.LittleEndian.Uint32(head[48:]))
	frame := append(head, make([]byte, size-wire.HeaderBytes)...)
	if _, err := io.ReadFull(r.conn, frame[wire.HeaderBytes:]); err != nil {
		r.t.Fatalf("read reply body: %v", err)
	}
	reply, _, err := wire.DecodeReply(frame)
	if err != nil {
		r.t.Fatalf("decode reply: %v", err)
	}
	return reply
}

// closed fails unless the server closed the connection.
func (r *rawConn) closed() {
	r.t.Helper()
	_ = r.conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // a stuck read fails below
	buf := make([]byte, 1)
	if _, err := r.conn.Read(buf); !errors.Is(err, io.EOF) {
		r.t.Fatalf("connection still open (read: %v)", err)
	}
}

func (r *rawConn) login(username, password string, protocol uint32) wire.Reply {
	r.t.Helper()
	body := &wire.LoginRegister{Version: wire.ClientVersion{Protocol: protocol, SDKName: "raw", SDKVersion: "1"},
		Username: username, Password: password}
	r.write(r.frame(wire.OperationRegister, 0, body))
	reply := r.read()
	if reply.Command == wire.CommandReply && reply.Err() == nil {
		var login wire.LoginReply
		if err := wire.DecodeAll(&login, reply.Payload); err != nil {
			r.t.Fatalf("login reply: %v", err)
		}
		r.session = login.Session
	}
	return reply
}

func wantReplyStatus(t *testing.T, what string, reply wire.Reply, status wire.Status) {
	t.Helper()
	if reply.Command != wire.CommandReply || reply.Header.Status != status {
		t.Fatalf("%s: command %v status %v, want a reply with status %v", what, reply.Command, reply.Header.Status, status)
	}
}

func wantEviction(t *testing.T, what string, reply wire.Reply, reason wire.EvictionReason) {
	t.Helper()
	if reply.Command != wire.CommandEviction || reply.Eviction.Reason != reason {
		t.Fatalf("%s: command %v reason %v, want eviction %v", what, reply.Command, reply.Eviction.Reason, reason)
	}
}

// TestBadInput: every kind of bad frame gets the status or eviction
// PROTOCOL.md names, and a well-behaved client next to them is unaffected.
func TestBadInput(t *testing.T) {
	s := startServer(t)
	bystander := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "stream")(bystander.CreateStream(ctx, "calm", nil))

	r := s.rawConn(t)
	r.write(r.frame(wire.OperationNonReplicated, wire.CodePing, nil))
	wantReplyStatus(t, "ping before login", r.read(), wire.StatusOK)
	r.write(r.frame(wire.OperationNonReplicated, wire.CodeGetStreams, nil))
	wantReplyStatus(t, "read before login", r.read(), wire.StatusUnauthenticated)
	r.write(r.frame(wire.OperationLogout, 0, nil))
	wantReplyStatus(t, "logout before login", r.read(), wire.StatusOK)
	r.write(r.frame(wire.OperationCreateStream, 0, &wire.CreateStream{Name: "x"}))
	wantEviction(t, "write before login", r.read(), wire.EvictionNoSession)
	r.closed()

	r = s.rawConn(t)
	wantEviction(t, "old protocol", r.login("iggy", "iggy", wire.PackVersion(0, 10, 0)), wire.EvictionIncompatibleProtocol)
	r = s.rawConn(t)
	wantEviction(t, "wrong password", r.login("iggy", "nope", wire.ProtocolVersion), wire.EvictionInvalidCredentials)
	r = s.rawConn(t)
	r.write(r.frame(wire.OperationNonReplicated, wire.CodeLoginUser, nil))
	wantEviction(t, "legacy login", r.read(), wire.EvictionMalformedLogin)

	r = s.rawConn(t)
	wantReplyStatus(t, "login", r.login("iggy", "iggy", wire.ProtocolVersion), wire.StatusOK)
	r.write(r.frame(wire.OperationNonReplicated, wire.Code(999), nil))
	wantReplyStatus(t, "unknown code", r.read(), wire.StatusInvalidCommand)
	r.write(r.frame(wire.OperationNonReplicated, wire.CodeCreateStream, &wire.CreateStream{Name: "y"}))
	wantReplyStatus(t, "write code as a read", r.read(), wire.StatusFeatureUnavailable)
	r.write(r.frame(wire.OperationNonReplicated, wire.CodeGetStream, wire.Raw{9, 9, 9}))
	wantReplyStatus(t, "unknown identifier kind", r.read(), wire.StatusInvalidIdentifier)
	r.write(r.frame(wire.OperationNonReplicated, wire.CodePollMessages, wire.Raw{1, 1, 4, 0, 0}))
	wantReplyStatus(t, "truncated body", r.read(), wire.StatusInvalidCommand)
	r.write(r.frame(wire.OperationCreateStream, 0, wire.Raw{0}))
	wantReplyStatus(t, "empty stream name", r.read(), wire.StatusInvalidStreamName)
	r.write(r.frame(wire.OperationNonReplicated, wire.CodeGetStream, wire.Raw{2, 0}))
	wantReplyStatus(t, "empty identifier", r.read(), wire.StatusInvalidIdentifier)
	r.write(r.frame(wire.OperationCreateTopic, 0, &wire.CreateTopic{Stream: id(0), PartitionsCount: 1,
		Name: string(make([]byte, 255))}))
	if reply := r.read(); reply.Err() != nil {
		t.Fatalf("a 255-byte topic name: %v", reply.Err())
	}
	checksummed := r.frame(wire.OperationCreateStream, 0, &wire.CreateStream{Name: "z"})
	wire.StampRequestChecksum(checksummed)
	checksummed[len(checksummed)-1] ^= 1
	r.write(checksummed)
	wantReplyStatus(t, "bad request checksum", r.read(), wire.StatusInvalidFormat)
	r.write(r.frame(wire.OperationCreateTopic, 0, &wire.CreateTopic{Stream: id(0), PartitionsCount: 1, Name: "t",
		Options: wire.Headers{wire.StringHeader("nope", "x")}}))
	wantReplyStatus(t, "unknown option key", r.read(), wire.StatusUnsupportedOptionKey)
	r.write(r.frame(wire.OperationCreateTopic, 0, &wire.CreateTopic{Stream: id(0), PartitionsCount: 1, Name: "t"}))
	if reply := r.read(); reply.Err() != nil {
		t.Fatalf("create topic: %v", reply.Err())
	}
	r.write(badBatch(r))
	if reply := r.read(); reply.Header.Status != wire.StatusInvalidMessageChecksum && reply.Header.Status != wire.StatusInvalidBatchChecksum {
		t.Fatalf("bad batch checksum: status %v", reply.Header.Status)
	}
	r.write(r.frame(wire.OperationCreateTopicWithAssignments, 0, nil))
	wantEviction(t, "internal operation", r.read(), wire.EvictionInvalidRequestOperation)
	r.closed()

	r = s.rawConn(t)
	wantReplyStatus(t, "login", r.login("iggy", "iggy", wire.ProtocolVersion), wire.StatusOK)
	r.session++
	r.write(r.frame(wire.OperationNonReplicated, wire.CodeGetStreams, nil))
	wantEviction(t, "foreign session", r.read(), wire.EvictionSessionTooLow)

	for _, size := range []uint32{100, 64<<20 + 1} {
		r = s.rawConn(t)
		frame := r.frame(wire.OperationNonReplicated, wire.CodePing, nil)
		binary.LittleEndian.PutUint32(frame[48:], size)
		r.write(frame)
		r.closed()
	}
	streams := must[wire.StreamList](t, "bystander still served")(bystander.GetStreams(ctx))
	if len(streams) != 1 || streams[0].TopicsCount != 2 {
		t.Fatalf("streams after the abuse %+v", streams)
	}
}

// badBatch is a SendMessages frame whose message checksum is wrong.
func badBatch(r *rawConn) []byte {
	outgoing := messages("bad", 2)
	batch := make([]byte, wire.BatchBytes(outgoing))
	wire.EncodeBatch(batch, outgoing)
	batch[wire.HeaderBytes] ^= 0xFF // the first frame's checksum
	body := &wire.SendMessages{Stream: id(0), Topic: id(0), Partitioning: wire.PartitionID(0), MessagesCount: 2,
		Batch: batch}
	return r.frame(wire.OperationSendMessages, 0, body)
}

// TestMaxFrameSize: tcp.max_frame_size closes a connection whose frame
// declares more; smaller frames are served.
func TestMaxFrameSize(t *testing.T) {
	s := startServer(t, "WHIPPET_TCP_MAX_FRAME_SIZE=64 KiB")
	r := s.rawConn(t)
	wantReplyStatus(t, "login", r.login("iggy", "iggy", wire.ProtocolVersion), wire.StatusOK)
	r.write(r.frame(wire.OperationNonReplicated, wire.CodePing, nil))
	wantReplyStatus(t, "ping", r.read(), wire.StatusOK)
	frame := r.frame(wire.OperationNonReplicated, wire.CodePing, nil)
	binary.LittleEndian.PutUint32(frame[48:], 65<<10)
	r.write(frame)
	r.closed()
}

// TestMetadataReplay: a metadata write replayed with the same request id
// on its session answers the first reply again and applies once (§5.4).
func TestMetadataReplay(t *testing.T) {
	s := startServer(t)
	r := s.rawConn(t)
	wantReplyStatus(t, "login", r.login("iggy", "iggy", wire.ProtocolVersion), wire.StatusOK)
	create := r.frame(wire.OperationCreateStream, 0, &wire.CreateStream{Name: "once"})
	r.write(create)
	first := r.read()
	r.write(create)
	second := r.read()
	if first.Err() != nil || second.Err() != nil || string(first.Payload) != string(second.Payload) {
		t.Fatalf("replay: first %v %x, second %v %x", first.Err(), first.Payload, second.Err(), second.Payload)
	}
	c := s.dial(t)
	if streams := must[wire.StreamList](t, "streams")(c.GetStreams(ctxTimeout(t))); len(streams) != 1 {
		t.Fatalf("the replay applied again: %+v", streams)
	}
	r.write(r.frame(wire.OperationCreateStream, 0, &wire.CreateStream{Name: "once"}))
	wantResult := r.read()
	if wantResult.Err() != wire.StatusStreamNameAlreadyExists {
		t.Fatalf("a new request with the same body: %v", wantResult.Err())
	}
}
