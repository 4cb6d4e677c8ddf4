package main

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire/classic"
)

// readClassicReply reads one classic reply from a raw connection.
func readClassicReply(t *testing.T, conn net.Conn) (classic.Status, []byte) {
	t.Helper()
	var prologue [classic.ReplyPrologueBytes]byte
	if why := readWithin(conn, prologue[:], 10*time.Second); why != "" {
		t.Fatal(why)
	}
	header, err := classic.DecodeReplyHeader(prologue[:])
	if err != nil {
		t.Fatalf("reply prologue %x: %v", prologue, err)
	}
	body := make([]byte, header.Length)
	if why := readWithin(conn, body, 10*time.Second); why != "" {
		t.Fatal(why)
	}
	return header.Status, body
}

func classicFrame(t *testing.T, request classic.Request) []byte {
	t.Helper()
	frame, err := classic.AppendRequest(nil, request)
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

// TestClassicPipelinedFrames: frames written back to back in one write
// (the protocol is lockstep, but the bytes may still arrive together, and
// the Rust 0.8 SDK splits a frame into three writes) are answered once
// each, in order; a refused body is drained so the next frame still
// parses (the 0.8 server did not drain SendMessages before login).
func TestClassicPipelinedFrames(t *testing.T) {
	s := startServer(t)
	conn := s.raw(t)
	body, err := classic.AppendSendMessagesBody(nil, cid(0), cid(0),
		classic.Partitioning{Kind: classic.PartitioningBalanced}, []classic.OutgoingMessage{{Payload: []byte("early")}})
	if err != nil {
		t.Fatal(err)
	}
	send := append(classic.AppendRequestHeader(nil, classic.CodeSendMessages, len(body)), body...)
	var all []byte
	all = append(all, send...)
	all = append(all, classicFrame(t, classic.LoginUser{Username: []byte("iggy"), Password: []byte("iggy")})...)
	all = append(all, classicFrame(t, classic.CreateStream{Name: []byte("piped")})...)
	all = append(all, classicFrame(t, classic.GetStreams{})...)
	all = append(all, classicFrame(t, classic.Ping{})...)
	// The first prologue arrives split 4 + 4, as the Rust 0.8 SDK writes it.
	for _, part := range [][]byte{all[:4], all[4:8], all[8:]} {
		if _, err := conn.Write(part); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // separate TCP segments; nothing to wait for instead
	}
	if status, _ := readClassicReply(t, conn); status != classic.StatusUnauthenticated {
		t.Fatalf("send before login: status %v, want 40", status)
	}
	if status, body := readClassicReply(t, conn); status != classic.StatusOK || binary.LittleEndian.Uint32(body) != 0 {
		t.Fatalf("login: status %v body %x", status, body)
	}
	status, body := readClassicReply(t, conn)
	var stream classic.StreamEntry
	if status != classic.StatusOK || stream.Decode(body) != nil || stream.Name != "piped" {
		t.Fatalf("create stream: status %v body %x", status, body)
	}
	status, body = readClassicReply(t, conn)
	var streams classic.StreamList
	if status != classic.StatusOK || streams.Decode(body) != nil || len(streams.Streams) != 1 {
		t.Fatalf("get streams: status %v body %x", status, body)
	}
	if status, body := readClassicReply(t, conn); status != classic.StatusOK || len(body) != 0 {
		t.Fatalf("ping: status %v body %x", status, body)
	}
}

// TestClassicOversizeBody: on a classic connection, a length below 4 is
// answered 3 and the connection stays usable; a control frame announcing
// more than 10 MiB is answered 3 and the connection closed without
// reading the body (PROTOCOL-0.8.md §1.1, §1.3). (As a first frame either
// would not pass detection: §11.4.)
func TestClassicOversizeBody(t *testing.T) {
	s := startServer(t)
	classicLogin(t, s.dialClassic(t)) // a bystander session that must survive
	conn := s.raw(t)
	ping := classicFrame(t, classic.Ping{})
	short := binary.LittleEndian.AppendUint32(nil, 2)
	short = binary.LittleEndian.AppendUint32(short, uint32(classic.CodePing))
	oversize := binary.LittleEndian.AppendUint32(nil, 4+classic.ControlBodyBytesMax+1)
	oversize = binary.LittleEndian.AppendUint32(oversize, uint32(classic.CodeCreateStream))
	for i, step := range []struct {
		frame  []byte
		status classic.Status
	}{{ping, classic.StatusOK}, {short, classic.StatusInvalidCommand}, {ping, classic.StatusOK},
		{oversize, classic.StatusInvalidCommand}} {
		if _, err := conn.Write(step.frame); err != nil {
			t.Fatal(err)
		}
		if status, _ := readClassicReply(t, conn); status != step.status {
			t.Fatalf("step %d: status %v, want %v", i, status, step.status)
		}
	}
	if why := wantClosedSilently(conn, 5*time.Second); why != "" {
		t.Fatalf("after the oversize refusal: %s", why)
	}
	check(t, "a 0.9 client after the refusal", s.dial(t).Ping(ctxTimeout(t)))
}
