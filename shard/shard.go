package shard

import (
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// ErrQueueFull reports that a peer's cross-shard queue is full: the
// caller holds on to the message and retries later (backpressure).
var ErrQueueFull = errors.New("shard: cross-shard queue full")

// Message is what shards pass each other. Kind and Value are the
// application's; Data carries a pointer without allocating (a non-pointer
// value boxed into it allocates).
type Message struct {
	Kind  uint32
	Value uint64
	Data  any
}

// envelope is one slot of a cross-shard queue: a message, a connection
// handed over by the accepting shard (fd >= 0), or a connection moving
// here from another shard (conn, conn_move.go).
type envelope struct {
	fd   int32
	msg  Message
	conn *Conn
}

// Shard is one pinned thread and everything it owns: its backend, its
// connections, its timers and its end of the cross-shard queues. Its
// methods run only on its own thread (from a Handler, a timer or a
// message callback), except ID and Connections.
type Shard struct {
	id      int
	cpu     int
	runtime *Runtime
	logger  *slog.Logger
	backend Backend
	handler Handler
	timers  timers
	stats   stats
	// fileLatency times file ops (external_fileops.go).
	fileLatency fileLatency
	// external holds sockets other goroutines handed over (Runtime.Adopt).
	external externalInbox

	inbox      []*Queue[envelope] // inbox[peer]: peer → this shard
	outbox     []*Queue[envelope] // outbox[peer]: this shard → peer
	local      []envelope         // messages a shard sends itself
	localSpare []envelope         // local's other buffer, swapped in each turn

	conns       []*Conn // by slot; nil when free
	connsFree   []uint32
	connCount   atomic.Int64 // owned connections, handed-over ones included
	movesOut    atomic.Int64 // connections posted to another shard that has not taken them yet
	connGen     uint32
	fileOps     []*FileOp
	fileOpsFree []uint32

	sleeping    atomic.Bool // blocked (or about to block) in Wait
	completions []Completion
	resume      []*Conn
	spansFree   []*replySpans // span lists of poll replies not in use (conn_spans.go)
	spinIdle    int           // fruitless spins in a row
	busy        bool          // completions arrived since the last idle check
	// clock is the loop turn's time, read at the turn's start and after a
	// Wait that brought completions: what the turn starts is stamped with
	// it instead of reading the clock once per request.
	clock time.Time
	idle  atomic.Bool // trimmed, and no completion since
	// heapTrimDue and heapTrimmed (shard 0): the Go heap's pages are to be
	// given back once every shard idles, and when they last were.
	heapTrimDue bool
	heapTrimmed time.Time

	listener  int   // shard 0 with a listener: the listening fd, else -1
	accepting bool  // the accept op is armed
	handoff   []int // accepted fds waiting for room in a peer's queue

	peerHandler   Handler // serves peer connections (Options.NewPeerHandler)
	peerListener  int     // the last shard with a peer listener: its fd, else -1
	peerAccepting bool    // the peer listener's accept op is armed

	epochSeen uint64 // the runtime epoch this turn acted on
	stopping  bool
	drained   bool
	forced    bool
	exit      bool
}

// ID returns the shard's index, 0 to the shard count minus one.
func (sh *Shard) ID() int { return sh.id }

// CPU returns the CPU the shard's thread is pinned to.
func (sh *Shard) CPU() int { return sh.cpu }

// Connections returns how many connections the shard owns; any thread.
func (sh *Shard) Connections() int { return int(sh.connCount.Load()) }

// Runtime returns the runtime the shard belongs to.
func (sh *Shard) Runtime() *Runtime { return sh.runtime }

// BackendName returns "io_uring" or "epoll".
func (sh *Shard) BackendName() string { return sh.backend.Name() }

// Buffer returns a buffer of length size from the shard's pool; pass it to
// Conn.Reply or Conn.Send, or give it back with Release.
func (sh *Shard) Buffer(size int) []byte { return sh.backend.Alloc(size) }

// Release returns a buffer to the shard's pool.
func (sh *Shard) Release(buf []byte) { sh.backend.Free(buf) }

// After runs callback on the shard's thread once, after delay.
func (sh *Shard) After(delay time.Duration, callback func(now time.Time)) (TimerID, error) {
	return sh.timers.add(time.Now().Add(delay), 0, callback)
}

// Every runs callback on the shard's thread every period, first after one
// period (heartbeats, flush intervals, replication ticks).
func (sh *Shard) Every(period time.Duration, callback func(now time.Time)) (TimerID, error) {
	invariant.Assert(period > 0, "timer period is positive")
	return sh.timers.add(time.Now().Add(period), period, callback)
}

// Stop cancels a pending timer; it reports whether the timer was pending.
func (sh *Shard) Stop(id TimerID) bool { return sh.timers.cancel(id) }

// Send queues message for shard to, whose OnMessage will run on its
// thread in the order this shard sent. It returns ErrQueueFull when the
// queue to that shard is full; the message was not sent.
func (sh *Shard) Send(to int, message Message) error {
	return sh.post(to, envelope{fd: -1, msg: message})
}

func (sh *Shard) post(to int, item envelope) error {
	invariant.Assert(to >= 0 && to < len(sh.outbox), "message target is a shard")
	if to == sh.id {
		if len(sh.local) >= queueSlotCount {
			return ErrQueueFull
		}
		sh.local = append(sh.local, item)
		return nil
	}
	if !sh.outbox[to].Push(item) {
		return ErrQueueFull
	}
	target := sh.runtime.shards[to]
	// Dekker pairing with the target's sleep: it sets sleeping, then looks
	// at its queues; we push, then look at sleeping. One side sees the
	// other, so a message never waits for an unrelated wake.
	if target.sleeping.Load() && target.sleeping.CompareAndSwap(true, false) {
		if err := sh.backend.Wake(target.backend); err != nil {
			sh.fail(err)
		}
	}
	return nil
}

// takeMessages delivers what the peers (and the shard itself) sent.
func (sh *Shard) takeMessages() int {
	count := 0
	for peer, queue := range sh.inbox {
		if queue == nil {
			continue
		}
		for range messagesPerTurnMax {
			item, ok := queue.Pop()
			if !ok {
				break
			}
			sh.deliver(peer, item)
			count++
		}
	}
	// Messages sent while delivering wait for the next turn, in the spare
	// slice; the two swap so a busy shard allocates none.
	local := sh.local
	sh.local = sh.localSpare[:0]
	for i, item := range local {
		sh.deliver(sh.id, item)
		local[i] = envelope{} // drop the message for the GC
		count++
	}
	sh.localSpare = local[:0]
	return count
}

func (sh *Shard) deliver(from int, item envelope) {
	if item.fd >= 0 {
		sh.adopt(int(item.fd))
		return
	}
	if item.conn != nil {
		sh.moveIn(item.conn)
		return
	}
	if onMessage := sh.runtime.options.OnMessage; onMessage != nil {
		bump(&sh.stats.messagesIn, 1)
		onMessage(sh, from, item.msg)
	}
}

func (sh *Shard) inboxPending() bool {
	for _, queue := range sh.inbox {
		if queue != nil && queue.Len() > 0 {
			return true
		}
	}
	return len(sh.local) > 0 || sh.external.pending.Load()
}

// adopt makes an accepted fd one of this shard's client connections.
func (sh *Shard) adopt(fd int) { sh.adoptWith(fd, false, nil) }

// adoptWith makes fd one of this shard's connections, served by its
// client Handler or, for a peer, its peer Handler, with attach already
// attached; a handler that implements connOpener learns of it before its
// first frame.
func (sh *Shard) adoptWith(fd int, peer bool, attach any) {
	handler := sh.handler
	if peer {
		handler = sh.peerHandler
	}
	invariant.Assert(handler != nil, "an adopted connection has a handler")
	if sh.stopping || len(sh.connsFree) == 0 && len(sh.conns) >= connectionsPerShardMax {
		_ = unix.Close(fd) // shutting down or full: refusing is the answer the peer gets
		sh.connCount.Add(-1)
		return
	}
	// Replies are whole frames: sending each at once beats Nagle's wait.
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1) // latency only; the connection works without it
	conn := &Conn{shard: sh, handler: handler, peer: peer, fd: fd, attached: attach}
	sh.place(conn)
	bump(&sh.stats.connsAdopted, 1)
	conn.armRecv()
	if opener, ok := handler.(connOpener); ok {
		opener.onOpen(conn)
	}
}

func (sh *Shard) freeConn(conn *Conn) {
	sh.unplace(conn)
	bump(&sh.stats.connsClosed, 1)
}

// unplace frees conn's slot (place's reverse) as it closes or leaves.
func (sh *Shard) unplace(conn *Conn) {
	invariant.Assert(sh.conns[conn.slot] == conn, "a leaving connection owns its slot")
	sh.conns[conn.slot] = nil
	sh.connsFree = append(sh.connsFree, conn.slot)
	sh.connCount.Add(-1)
}

// fail stops the runtime after an error the shard cannot recover from (a
// backend that refuses ops): a half-alive shard set is worse than none.
func (sh *Shard) fail(err error) {
	sh.logger.Error("shard: failing", "shard", sh.id, "err", err.Error())
	sh.runtime.failWith(err)
}
