package shard

import (
	"context"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// TestFrontPollSpansStress: poll replies sent in place stay byte-exact
// when a tiny cache wraps, trims and refuses records while slow readers
// pipeline polls and others reset their connections mid-reply, and no
// record stays pinned once they are gone. Method: a 16 MiB budget over two
// shards; a producer appending batches of random sizes to two
// partitions; consumers with 4 KiB receive buffers each pipelining 1-4
// polls of the newest messages and reading the replies slowly (one in three stalling up to 200 ms before it) (every
// message checked against its offset's payload), one in four rounds
// resetting the connection with the replies unread.
func TestFrontPollSpansStress(t *testing.T) {
	if testing.Short() {
		t.Skip("a soak of several seconds")
	}
	for _, backend := range spansBackends(t) {
		t.Run(backend, func(t *testing.T) { pollSpansStress(t, backend) })
	}
}

func pollSpansStress(t *testing.T, backend string) {
	server, session := startSpansServer(t, backend, 16<<20)
	producer, err := net.Dial("tcp", server.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	request := session(producer, wire.Uint128{Lo: 1})
	produce := spansProducer(t, producer, request, 2, 20)
	var mu sync.Mutex
	acked := [2]uint64{}
	done := make(chan struct{})
	var consumers sync.WaitGroup
	for consumer := range 4 {
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			spansStressConsume(t, server, session, uint64(consumer+1), &mu, &acked, done)
		}()
	}
	random := rand.New(rand.NewPCG(5, 6))
	for deadline := time.Now().Add(4 * time.Second); time.Now().Before(deadline) && !t.Failed(); {
		partition := uint32(random.IntN(2))
		var next []uint64
		for range 1 + random.IntN(30) {
			next = produce(partition, 1)
		}
		mu.Lock()
		acked[0], acked[1] = next[0], next[1]
		mu.Unlock()
	}
	close(done)
	consumers.Wait()
	copied := uint64(0)
	for _, sh := range server.Runtime().Shards() {
		copied += sh.Stats().RepliesCopied
	}
	t.Logf("%d bytes sent in place, %d replies copied out; %v messages", spansInPlace(server), copied, acked)
	if spansInPlace(server) == 0 {
		t.Fatal("no byte was sent in place")
	}
	waitSpansPinned(t, server, func(pinned uint64) bool { return pinned == 0 }, "no record pinned after the consumers left")
}

func spansStressConsume(t *testing.T, server *Server, session func(net.Conn, wire.Uint128) func(wire.Operation, wire.Code, wire.Body) []byte,
	seed uint64, mu *sync.Mutex, acked *[2]uint64, done <-chan struct{}) {
	random := rand.New(rand.NewPCG(seed, 9))
	reply := make([]byte, 16<<20)
	for round := uint64(0); ; round++ {
		select {
		case <-done:
			return
		default:
		}
		conn := dialSmallReceiveBuffer(t, server.Addr().String())
		request := session(conn, wire.Uint128{Lo: 1000*seed + round})
		type asked struct {
			partition uint32
			offset    uint64
		}
		var pipeline []asked
		for range 1 + random.IntN(4) {
			partition := uint32(random.IntN(2))
			mu.Lock()
			available := acked[partition]
			mu.Unlock()
			if available == 0 {
				continue
			}
			offset := available - min(available, uint64(1+random.IntN(3000)))
			if _, err := conn.Write(request(wire.OperationNonReplicated, wire.CodePollMessages,
				spansPoll(partition, offset, uint32(1+random.IntN(3000))))); err != nil {
				t.Error(err)
				return
			}
			pipeline = append(pipeline, asked{partition, offset})
		}
		if random.IntN(4) == 0 {
			time.Sleep(time.Duration(random.IntN(3000)) * time.Microsecond)
			_ = conn.(*net.TCPConn).SetLinger(0)
			_ = conn.Close() // a reset with replies in flight
			continue
		}
		for _, want := range pipeline {
			if random.IntN(3) == 0 {
				time.Sleep(time.Duration(random.IntN(200)) * time.Millisecond) // a slow reader: the cache wraps meanwhile
			}
			frame := exchangeBig(t, conn, nil, reply)
			if frame == nil || checkSpansReply(t, frame, want.partition, want.offset) == 0 {
				t.Errorf("consumer %d: a poll of partition %d at %d got nothing", seed, want.partition, want.offset)
				_ = conn.Close()
				return
			}
		}
		_ = conn.Close()
	}
}

// TestFrontPollSpansForcedStop: a server stopping while a client that
// reads nothing holds poll replies sent in place (pinned, their sends
// stuck on a full socket) stops once the grace period ends, and the
// forced close gives every pinned record back before the caches are
// released. Method: as TestFrontPollSpansReleasedOnClose up to the pins,
// then a Shutdown with a 300 ms grace.
func TestFrontPollSpansForcedStop(t *testing.T) {
	for _, backend := range spansBackends(t) {
		t.Run(backend, func(t *testing.T) { pollSpansForcedStop(t, backend) })
	}
}

func pollSpansForcedStop(t *testing.T, backend string) {
	const partitions, batches, batchMessages = 4, 30, 200
	server := pinByStuckPolls(t, backend, partitions, batches, batchMessages).server
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_ = server.Shutdown(ctx) // the grace ends (the client reads nothing): the close is forced
	for _, sh := range server.Runtime().Shards() {
		if pinned := sh.Stats().SpansPinned; pinned != 0 {
			t.Fatalf("shard %d stopped with %d records pinned", sh.id, pinned)
		}
	}
}
