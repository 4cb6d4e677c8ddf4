package shard

import (
	"context"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// startTestServer runs a two-shard server on a temporary directory.
func startTestServer(t *testing.T) *Server {
	t.Helper()
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	return serveForTest(t, ServerOptions{Runtime: Options{CPUs: cpus[:min(2, len(cpus))], Backend: BackendAuto,
		Listen: "127.0.0.1:0"}, DataPath: t.TempDir(), Durability: 1 /* written */})
}

// serveForTest starts a server with options and shuts it down when the
// test ends.
func serveForTest(t *testing.T, options ServerOptions) *Server {
	t.Helper()
	server, err := StartServer(options)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = server.Shutdown(ctx) // the test is over; a slow close changes nothing
	})
	return server
}

// exchange writes frame and reads one reply into reply (no allocation).
func exchange(t *testing.T, conn net.Conn, frame, reply []byte) []byte {
	t.Helper()
	if _, err := conn.Write(frame); err != nil {
		t.Fatal(err)
	}
	return readReply(t, conn, reply)
}

// TestFrontSendAllocations: the steady send path allocates nothing,
// process-wide (front, runtime, data plane, engine); measured with the
// malloc count around a run of pre-encoded sends, with a little slack for
// the runtime's own background allocations. It pins a regression in
// which engine.IsFatal's errors.As target cost one allocation on every
// data-plane completion.
func TestFrontSendAllocations(t *testing.T) {
	server := startTestServer(t)
	conn, err := net.Dial("tcp", server.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := wire.Uint128{Lo: 7}
	session := loginIggy(t, conn, client)
	reply := make([]byte, 1<<20)
	request := func(operation wire.Operation, body wire.Body, id uint64) []byte {
		h := wire.RequestHeader{Client: client, Operation: operation, Session: session.Session, Request: id}
		out := make([]byte, wire.RequestBytes(body))
		wire.EncodeRequest(out, h, body)
		return out
	}
	for i, body := range []wire.Body{&wire.CreateStream{Name: "s"},
		&wire.CreateTopic{Stream: wire.NumericID(0), PartitionsCount: 1, Name: "t"}} {
		operation := wire.OperationCreateStream
		if i == 1 {
			operation = wire.OperationCreateTopic
		}
		if r, _, _ := wire.DecodeReply(exchange(t, conn, request(operation, body, uint64(i+1)), reply)); r.Err() != nil {
			t.Fatalf("setup: %v", r.Err())
		}
	}
	messages := make([]wire.OutgoingMessage, 10)
	for i := range messages {
		messages[i] = wire.OutgoingMessage{Payload: []byte("allocation-free")}
	}
	batch := make([]byte, wire.BatchBytes(messages))
	wire.EncodeBatch(batch, messages)
	send := request(wire.OperationSendMessages, &wire.SendMessages{Stream: wire.NumericID(0), Topic: wire.NumericID(0),
		Partitioning: wire.PartitionID(0), MessagesCount: 10, Batch: batch}, 3)
	for range 200 { // warm the pools, caches and journal
		exchange(t, conn, send, reply)
	}
	const sends = 500
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range sends {
		exchange(t, conn, send, reply)
	}
	runtime.ReadMemStats(&after)
	perSend := float64(after.Mallocs-before.Mallocs) / sends
	t.Logf("%.2f allocations per send (whole process)", perSend)
	if perSend > 0.1 {
		t.Fatalf("%.2f allocations per send, want 0 (amortised)", perSend)
	}
}

// TestLoginBeforeReady: a login that arrives while shard 0 still opens the
// metadata waits for it instead of reading a view that does not exist.
func TestLoginBeforeReady(t *testing.T) {
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	address := probe.Addr().String()
	_ = probe.Close() // only its port was wanted
	done := make(chan *Server, 1)
	options := ServerOptions{Runtime: Options{CPUs: cpus[:min(2, len(cpus))], Listen: address},
		DataPath: t.TempDir()}
	go func() {
		server, err := StartServer(options)
		if err != nil {
			t.Error(err)
		}
		done <- server
	}()
	var conn net.Conn
	for attempt := 0; ; attempt++ {
		if conn, err = net.Dial("tcp", address); err == nil {
			break
		}
		if attempt == 50_000 {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Microsecond) // the listener opens before the metadata
	}
	defer conn.Close()
	login := &wire.LoginRegister{Version: wire.ClientVersion{Protocol: wire.ProtocolVersion, SDKName: "t", SDKVersion: "1"},
		Username: "iggy", Password: "iggy"}
	frame := make([]byte, wire.RequestBytes(login))
	wire.EncodeRequest(frame, wire.RequestHeader{Client: wire.Uint128{Lo: 1}, Operation: wire.OperationRegister}, login)
	reply, _, err := wire.DecodeReply(exchange(t, conn, frame, make([]byte, 4096)))
	if err != nil || reply.Err() != nil {
		t.Fatalf("early login: %v %v", err, reply.Err())
	}
	server := <-done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = server.Shutdown(ctx) // the test is over
}

// loginIggy registers and logs in as the root user iggy/iggy over conn
// with the given client id and returns the session.
func loginIggy(t *testing.T, conn net.Conn, client wire.Uint128) wire.LoginReply {
	t.Helper()
	login := &wire.LoginRegister{Version: wire.ClientVersion{Protocol: wire.ProtocolVersion, SDKName: "t", SDKVersion: "1"},
		Username: "iggy", Password: "iggy"}
	frame := make([]byte, wire.RequestBytes(login))
	wire.EncodeRequest(frame, wire.RequestHeader{Client: client, Operation: wire.OperationRegister}, login)
	decoded, _, err := wire.DecodeReply(exchange(t, conn, frame, make([]byte, 1<<20)))
	if err != nil || decoded.Err() != nil {
		t.Fatalf("login: %v %v", err, decoded.Err())
	}
	var session wire.LoginReply
	if err := wire.DecodeAll(&session, decoded.Payload); err != nil {
		t.Fatal(err)
	}
	return session
}
