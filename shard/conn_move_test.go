package shard

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/wire"
)

// moveClient is a raw 0.9 client of a test server: one TCP connection,
// logged in as root, with its request ids counted.
type moveClient struct {
	t       *testing.T
	conn    net.Conn
	client  wire.Uint128
	session uint64
	request uint64
	reply   []byte
}

// skipUnlessTwoShards skips a move test where the machine has one CPU or
// backend cannot run, and returns the CPUs the process may use.
func skipUnlessTwoShards(t *testing.T, backend string) []int {
	t.Helper()
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) < 2 {
		t.Skip("connection moves need two shards: the machine offers one CPU")
	}
	if backend == BackendIOURing {
		if err := uringAvailable(); err != nil {
			t.Skipf("io_uring: %v", err)
		}
	}
	return cpus
}

// startMoveServer runs a two-shard server on backend; it skips where the
// machine has one CPU or the backend cannot run.
func startMoveServer(t *testing.T, backend string, adjust func(*ServerOptions)) *Server {
	t.Helper()
	cpus := skipUnlessTwoShards(t, backend)
	options := ServerOptions{Runtime: Options{CPUs: cpus[:2], Backend: backend, Listen: "127.0.0.1:0"},
		DataPath: t.TempDir(), Durability: 1 /* written */, Logger: testLogger()}
	if adjust != nil {
		adjust(&options)
	}
	return serveForTest(t, options)
}

// dialMove connects and logs in as root with client id clientLo.
func dialMove(t *testing.T, server *Server, clientLo uint64) *moveClient {
	t.Helper()
	conn, err := net.Dial("tcp", server.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := &moveClient{t: t, conn: conn, client: wire.Uint128{Lo: clientLo}, reply: make([]byte, 1<<20)}
	login := &wire.LoginRegister{Version: wire.ClientVersion{Protocol: wire.ProtocolVersion, SDKName: "t", SDKVersion: "1"},
		Username: "iggy", Password: "iggy"}
	var reply wire.LoginReply
	c.call(wire.OperationRegister, 0, login, &reply)
	c.session = reply.Session
	return c
}

// call sends one request and decodes its success payload into out (nil:
// none expected); any refusal fails the test.
func (c *moveClient) call(operation wire.Operation, code wire.Code, body wire.Body, out wire.Decoder) {
	c.t.Helper()
	header := wire.RequestHeader{Client: c.client, Operation: operation, Session: c.session, Request: c.request}
	c.request++ // the login is request 0 (§5.2), then 1, 2, ...
	if operation == wire.OperationNonReplicated {
		header.Code = code
	}
	frame := make([]byte, wire.RequestBytes(body))
	wire.EncodeRequest(frame, header, body)
	decoded, _, err := wire.DecodeReply(exchange(c.t, c.conn, frame, c.reply))
	if err != nil || decoded.Err() != nil {
		c.t.Fatalf("request %d (operation %d code %d): %v %v", c.request, operation, code, err, decoded.Err())
	}
	if out != nil {
		if err := wire.DecodeAll(out, decoded.Payload); err != nil {
			c.t.Fatalf("request %d payload: %v", c.request, err)
		}
	}
}

// setup creates stream 0 with topic 0 of partitionCount partitions.
func (c *moveClient) setup(partitionCount uint32) {
	c.t.Helper()
	c.call(wire.OperationCreateStream, 0, &wire.CreateStream{Name: "s"}, nil)
	c.call(wire.OperationCreateTopic, 0, &wire.CreateTopic{Stream: wire.NumericID(0), PartitionsCount: partitionCount,
		Name: "t"}, nil)
}

// send appends one small batch to partition of stream 0, topic 0.
func (c *moveClient) send(partition uint32) {
	c.t.Helper()
	messages := []wire.OutgoingMessage{{Payload: []byte("affinity")}}
	batch := make([]byte, wire.BatchBytes(messages))
	wire.EncodeBatch(batch, messages)
	c.call(wire.OperationSendMessages, 0, &wire.SendMessages{Stream: wire.NumericID(0), Topic: wire.NumericID(0),
		Partitioning: wire.PartitionID(partition), MessagesCount: 1, Batch: batch}, nil)
}

// me returns GetMe's answer.
func (c *moveClient) me() wire.ClientDetails {
	c.t.Helper()
	var details wire.ClientDetails
	c.call(wire.OperationNonReplicated, wire.CodeGetMe, nil, &details)
	return details
}

// clients returns GetClients' answer.
func (c *moveClient) clients() wire.ClientList {
	c.t.Helper()
	var list wire.ClientList
	c.call(wire.OperationNonReplicated, wire.CodeGetClients, nil, &list)
	return list
}

// partitionOn returns a partition of stream 0, topic 0 owned by shard.
func partitionOn(shard int) uint32 {
	return keysOwnedBy(0, 0, shard, 2, 1)[0].Partition
}

// hops sums the cross-shard messages every shard received so far.
func hops(server *Server) uint64 {
	total := uint64(0)
	for _, sh := range server.Runtime().Shards() {
		total += sh.Stats().MessagesIn
	}
	return total
}

// shardOfLast returns the shard that adopted the most connections since
// before (Stats.ConnsAdopted), the one a new connection landed on.
func shardOfLast(server *Server, before []uint64) int {
	for id, sh := range server.Runtime().Shards() {
		if sh.Stats().ConnsAdopted > before[id] {
			return id
		}
	}
	return -1
}

func adoptedCounts(server *Server) []uint64 {
	var counts []uint64
	for _, sh := range server.Runtime().Shards() {
		counts = append(counts, sh.Stats().ConnsAdopted)
	}
	return counts
}

var moveBackends = []string{BackendIOURing, BackendEpoll}

// TestConnMoveServesWithoutHops: a connection whose sends all go to the
// other shard's partition moves there after affinityRequestsMin of them,
// and from then on its requests cross no shard (MessagesIn stays put);
// its session (client id, login, its one entry in the client table)
// survives the move.
func TestConnMoveServesWithoutHops(t *testing.T) {
	for _, backend := range moveBackends {
		t.Run(backend, func(t *testing.T) {
			server := startMoveServer(t, backend, nil)
			before := adoptedCounts(server)
			c := dialMove(t, server, 41)
			home := shardOfLast(server, before)
			if home < 0 {
				t.Fatal("no shard adopted the connection")
			}
			other := 1 - home
			c.setup(8)
			meBefore := c.me()
			partition := partitionOn(other)
			hopsBefore := hops(server)
			for range affinityRequestsMin {
				c.send(partition)
			}
			if crossed := hops(server) - hopsBefore; crossed < 2*affinityRequestsMin {
				t.Fatalf("%d sends from shard %d to shard %d crossed %d times, want 2 each", affinityRequestsMin,
					home, other, crossed)
			}
			// The move starts once the last reply is out; a request that
			// reaches the socket before the receive's cancel lands runs on
			// the old shard and puts the move off to its own reply.
			shards := server.Runtime().Shards()
			for attempt := 0; shards[other].Stats().ConnsMovedIn == 0; attempt++ {
				if attempt == 50 {
					t.Fatalf("the connection did not move in %d more sends", attempt)
				}
				// On a loaded machine the next send can keep beating the
				// cancel; a growing pause lets the quiescent moment last.
				time.Sleep(time.Duration(attempt) * time.Millisecond)
				c.send(partition)
			}
			const sends = 200
			hopsMoved := hops(server)
			for range sends {
				c.send(partition)
			}
			if crossed := hops(server) - hopsMoved; crossed > 2 {
				t.Fatalf("after the move %d sends crossed shards %d times, want none", sends, crossed)
			}
			if out, in := shards[home].Stats().ConnsMovedOut, shards[other].Stats().ConnsMovedIn; out != 1 || in != 1 {
				t.Fatalf("moved out of shard %d: %d, into shard %d: %d; want 1 and 1", home, out, other, in)
			}
			meAfter := c.me()
			if meAfter.ClientID != meBefore.ClientID || meAfter.UserID != 0 {
				t.Fatalf("GetMe after the move: client %d user %d, before: client %d", meAfter.ClientID, meAfter.UserID,
					meBefore.ClientID)
			}
			list := c.clients()
			if len(list) != 1 || list[0].ClientID != meBefore.ClientID {
				t.Fatalf("GetClients after the move: %+v, want client %d once", list, meBefore.ClientID)
			}
			if count := shards[other].Connections() + shards[home].Connections(); count != 1 ||
				shards[other].Connections() != 1 {
				t.Fatalf("connections: shard %d %d, shard %d %d", home, shards[home].Connections(), other,
					shards[other].Connections())
			}
		})
	}
}

// TestConnMoveNoPingPong: a client alternating its sends between the two
// shards' partitions never moves, and neither does one whose server has
// affinity switched off.
func TestConnMoveNoPingPong(t *testing.T) {
	for _, backend := range moveBackends {
		t.Run(backend, func(t *testing.T) {
			server := startMoveServer(t, backend, nil)
			c := dialMove(t, server, 42)
			c.setup(8)
			for index := range 20 * affinityRequestsMin {
				c.send(partitionOn(index % 2))
			}
			// Runs shorter than affinityRequestsMin on one shard, broken by
			// the other: still no move.
			for index := range 10 * affinityRequestsMin {
				c.send(partitionOn(min(index%affinityRequestsMin, 1)))
			}
			for id, sh := range server.Runtime().Shards() {
				if stats := sh.Stats(); stats.ConnsMovedOut != 0 || stats.ConnsMovedIn != 0 {
					t.Fatalf("shard %d: moved out %d, in %d; want no move", id, stats.ConnsMovedOut, stats.ConnsMovedIn)
				}
			}
		})
	}
	t.Run("off", func(t *testing.T) {
		server := startMoveServer(t, BackendAuto, func(options *ServerOptions) { options.ConnectionAffinityOff = true })
		before := adoptedCounts(server)
		c := dialMove(t, server, 43)
		home := shardOfLast(server, before)
		c.setup(8)
		for range 4 * affinityRequestsMin {
			c.send(partitionOn(1 - home))
		}
		for id, sh := range server.Runtime().Shards() {
			if moved := sh.Stats().ConnsMovedOut; moved != 0 {
				t.Fatalf("shard %d moved %d connections with affinity off", id, moved)
			}
		}
	})
}

// TestConnMoveClose: clients that close right as their connection starts
// to move (the reply that completes the run of requests is the last
// thing they read) leave no fd open, no connection counted and no entry
// in the client table; each is closed once (ConnsClosed matches the
// connections taken). Seeds the race many times on both backends.
func TestConnMoveClose(t *testing.T) {
	for _, backend := range moveBackends {
		t.Run(backend, func(t *testing.T) {
			server := startMoveServer(t, backend, nil)
			setup := dialMove(t, server, 1)
			setup.setup(8)
			setup.send(partitionOn(0)) // open both partitions' files before counting fds
			setup.send(partitionOn(1))
			fdsBefore := openFDs(t)
			const rounds = 30
			for round := range rounds {
				c := dialMove(t, server, uint64(100+round))
				partition := partitionOn(round % 2) // half start on the owner: those never move
				for range affinityRequestsMin + round%3 {
					c.send(partition)
				}
				_ = c.conn.Close() // the test's end of the socket; the server notices
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				shards := server.Runtime().Shards()
				count := shards[0].Connections() + shards[1].Connections()
				if count == 1 && len(server.clients.list()) == 1 && openFDs(t) <= fdsBefore {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("connections %d, clients %d, fds %d (before %d): a moved connection leaked", count,
						len(server.clients.list()), openFDs(t), fdsBefore)
				}
				time.Sleep(time.Millisecond) // the shards close asynchronously
			}
			adopted, closed, movedIn, movedOut := uint64(0), uint64(0), uint64(0), uint64(0)
			for _, sh := range server.Runtime().Shards() {
				stats := sh.Stats()
				adopted, closed = adopted+stats.ConnsAdopted, closed+stats.ConnsClosed
				movedIn, movedOut = movedIn+stats.ConnsMovedIn, movedOut+stats.ConnsMovedOut
			}
			t.Logf("%d connections, %d moves started, %d landed", adopted, movedOut, movedIn)
			if adopted != closed+1 || movedIn != movedOut {
				t.Fatalf("adopted %d closed %d (one left open), moved out %d in %d", adopted, closed, movedOut, movedIn)
			}
			setup.send(0) // the server still serves
		})
	}
}

// TestConnMoveShutdown: a shutdown that starts while connections are
// moving drains every one of them; nothing is left open.
func TestConnMoveShutdown(t *testing.T) {
	for _, backend := range moveBackends {
		t.Run(backend, func(t *testing.T) {
			warm, err := net.Listen("tcp", "127.0.0.1:0") // Go's poller opens its fds once, on first use
			if err != nil {
				t.Fatal(err)
			}
			_ = warm.Close() // only the poller's start was wanted
			fdsBefore := openFDs(t)
			server := startMoveServer(t, backend, nil)
			setup := dialMove(t, server, 1)
			setup.setup(8)
			var clients []*moveClient
			for round := range 6 {
				c := dialMove(t, server, uint64(200+round))
				for range affinityRequestsMin {
					c.send(partitionOn(round % 2))
				}
				clients = append(clients, c)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := server.Shutdown(ctx); err != nil {
				t.Fatalf("shutdown: %v", err)
			}
			for _, c := range clients {
				_ = c.conn.Close() // the server closed its end
			}
			_ = setup.conn.Close() // likewise
			if fds := openFDs(t); fds > fdsBefore {
				t.Fatalf("%d fds open after shutdown, %d before start", fds, fdsBefore)
			}
		})
	}
}

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("fd count needs /proc: %v", err)
	}
	return len(entries)
}

// TestConnMoveKeepsGroupAndHeartbeat: a consumer-group member's session
// moves with its membership (GetMe still counts the group), and the
// heartbeat check of the shard it moved to evicts it once it falls
// silent: the client reads the eviction, the connection closes, and the
// client table forgets it.
func TestConnMoveKeepsGroupAndHeartbeat(t *testing.T) {
	const heartbeat = 300 * time.Millisecond
	server := startMoveServer(t, BackendAuto, func(options *ServerOptions) { options.HeartbeatInterval = heartbeat })
	before := adoptedCounts(server)
	c := dialMove(t, server, 51)
	home := shardOfLast(server, before)
	c.setup(8)
	c.call(wire.OperationCreateConsumerGroup, 0, &wire.CreateConsumerGroup{Stream: wire.NumericID(0),
		Topic: wire.NumericID(0), Name: "g"}, nil)
	c.call(wire.OperationJoinConsumerGroup, 0, &wire.GroupTarget{Stream: wire.NumericID(0), Topic: wire.NumericID(0),
		Group: wire.NumericID(0)}, nil)
	shards := server.Runtime().Shards()
	for attempt := 0; shards[1-home].Stats().ConnsMovedIn == 0; attempt++ {
		if attempt == 4*affinityRequestsMin {
			t.Fatalf("the member did not move in %d sends", attempt)
		}
		c.send(partitionOn(1 - home))
	}
	if me := c.me(); me.ConsumerGroupsCount != 1 || len(me.ConsumerGroups) != 1 {
		t.Fatalf("GetMe after the move: %+v, want one group", me)
	}
	if err := c.conn.SetReadDeadline(time.Now().Add(10 * heartbeat)); err != nil {
		t.Fatal(err)
	}
	received := 0
	buf := make([]byte, 4096)
	for {
		n, err := c.conn.Read(buf)
		received += n
		if err != nil {
			if received < wire.HeaderBytes {
				t.Fatalf("silent member: read %d bytes then %v, want an eviction and the close", received, err)
			}
			break
		}
	}
	other := dialMove(t, server, 52)
	for attempt := 0; ; attempt++ {
		list := other.clients()
		if len(list) == 1 {
			break
		}
		if attempt == 1000 {
			t.Fatalf("evicted member still listed: %+v", list)
		}
		time.Sleep(time.Millisecond) // the close runs on the shard's thread
	}
}

// TestMovedInChecksUser: a session arriving on a shard stays logged in
// only while its user exists, is active and is the one it logged in as
// (same creation time): a logout broadcast that passed both shards'
// fronts while the session was between them must not leave it logged in.
func TestMovedInChecksUser(t *testing.T) {
	state := &metadata.State{}
	apply(t, state, metadata.Command{Kind: metadata.CreateUser, Name: "root", Secret: "x", Status: 1, CreatedAt: 10})
	apply(t, state, metadata.Command{Kind: metadata.CreateUser, Name: "alice", Secret: "y", Status: 1, CreatedAt: 20})
	apply(t, state, metadata.Command{Kind: metadata.CreateUser, Name: "bob", Secret: "z",
		Status: uint8(wire.UserInactive), CreatedAt: 30})
	server := &Server{}
	server.clients.entries = make(map[uint32]*clientEntry)
	server.view.Store(buildView(nil, state, newGroupTable(time.Second), viewChange{stream: -1}))
	f := &front{server: server, shard: &Shard{}}
	cases := []struct {
		name      string
		userID    uint32
		createdAt uint64
		loggedIn  bool
	}{
		{"same user", 1, 20, true},
		{"user re-created under its id", 1, 19, false},
		{"user inactive", 2, 30, false},
		{"user deleted", 7, 40, false},
	}
	for _, tc := range cases {
		conn := &Conn{}
		s := &session{conn: conn, session: 5, userID: tc.userID, userCreatedAt: tc.createdAt}
		s.id = server.clients.add("test")
		server.clients.login(s.id, tc.userID)
		conn.Attach(s)
		f.movedIn(conn)
		if loggedIn := s.session != 0; loggedIn != tc.loggedIn {
			t.Errorf("%s: logged in %v after the move, want %v", tc.name, loggedIn, tc.loggedIn)
		}
		if len(f.sessions) == 0 || f.sessions[len(f.sessions)-1] != s {
			t.Errorf("%s: the arriving session is not on the shard's list", tc.name)
		}
	}
}
