package shard

import "github.com/whippetio/whippet/internal/invariant"

// # Moving a connection to another shard
//
// A client connection lives on the shard that accepted it, but the
// partitions it writes and reads live on the shards OwnerOf names: when
// they are another shard's, every request hops there and its answer hops
// back. A Handler that sees a connection's requests settle on one other
// shard asks to move it (Conn.wantMove); the connection moves once it is
// quiescent, and from then on its requests run where its partitions are.
//
// Quiescent means nothing of the connection is in flight on this shard:
// no frame delivered and unanswered, nothing queued or being sent, no
// partial frame or header, no parked input, no pause or resume pending,
// and the Handler agrees (its session runs no request, holds no timer).
// Then the armed receive is cancelled; bytes that arrive before its final
// completion are consumed here as usual, which makes the connection busy
// again and calls the move off until the next quiescent moment. At the
// final completion, still quiescent, the shard frees the connection's
// slot, tells the Handler (movedOut), and posts the *Conn itself over the
// SPSC queue to the target. The target gives it a slot and a generation
// of its own, arms a receive on the same fd and tells its Handler
// (movedIn). The socket never closes and no byte is lost: what the client
// sent meanwhile waits in the kernel for the new receive.
//
// The Conn carries no buffer of the old shard's pools across (everything
// it held was sent or released before it became quiescent), and no op is
// armed on the old shard's backend, so the fd is in no ring or epoll set
// but the target's. Peer connections (replica links) never move.
//
// Shutdown: a connection that arrives at a stopping or full shard is
// closed there at once (no op is armed on it) and its Handler hears
// movedIn then OnClose, so the session ends exactly once. The sending
// shard counts its moves until they land (movesOut) and does not count
// itself drained before, so no connection is ever in a queue that nobody
// will read.

// connMover is a Handler whose connections may move between shards.
type connMover interface {
	// movable reports whether conn's handler state may leave the shard now.
	movable(conn *Conn) bool
	// movedOut tells the old shard's Handler that conn left it.
	movedOut(conn *Conn)
	// movedIn tells the new shard's Handler that conn arrived, before any
	// frame is delivered (or before OnClose, when the shard refused it).
	movedIn(conn *Conn)
}

// wantMove asks for the connection to move to shard target once it is
// quiescent; a later wantMove or dropMove replaces the wish.
func (c *Conn) wantMove(target int) {
	invariant.Assert(target != c.shard.id, "a move goes to another shard")
	invariant.Assert(target >= 0 && target < len(c.shard.runtime.shards), "a move goes to a shard")
	if c.peer || c.state != connOpen {
		return
	}
	c.moveWanted, c.moveTarget = true, target
	c.tryMove()
}

// dropMove calls a wished move off; a receive already cancelled for it
// is armed again when its final completion arrives.
func (c *Conn) dropMove() { c.moveWanted = false }

// quiescent reports whether nothing of the connection is in flight on its
// shard, so that it may leave.
func (c *Conn) quiescent() bool {
	if c.state != connOpen || c.inflight != 0 || c.sendLen != 0 || c.sendArmed {
		return false
	}
	if c.frame != nil || c.headLen != 0 || len(c.parked) != 0 || c.paused || c.resuming {
		return false
	}
	return true
}

// tryMove starts a wished move when the connection is quiescent: it
// cancels the armed receive, whose final completion hands the connection
// over (onRecvEnded), or hands it over now when none is armed.
func (c *Conn) tryMove() {
	if !c.moveWanted || c.moving || !c.quiescent() {
		return
	}
	if _, ok := c.leavable(); !ok {
		return
	}
	if !c.recvArmed {
		c.handOver()
		return
	}
	c.moving = true
	c.cancelRecv()
}

// leavable returns the connection's Handler when it and the shard let the
// connection leave now: the Handler moves connections and agrees, and the
// shard is not stopping.
func (c *Conn) leavable() (connMover, bool) {
	sh := c.shard
	if sh.stopping || sh.runtime.stopRequested.Load() {
		return nil, false
	}
	mover, ok := c.handler.(connMover)
	if !ok || !mover.movable(c) {
		return nil, false
	}
	return mover, true
}

// handOver gives the quiescent connection, with no receive armed, to the
// target shard; where that cannot be done now it reads on here and the
// move waits for the next quiescent moment.
func (c *Conn) handOver() {
	sh := c.shard
	invariant.Assert(!c.recvArmed, "a connection moves with no receive armed")
	invariant.Assert(c.quiescent(), "a connection moves only when quiescent")
	target := sh.runtime.shards[c.moveTarget]
	mover, ok := c.leavable()
	refused := !ok || target.connCount.Load() >= connectionsPerShardMax ||
		sh.outbox[target.id].Len() >= sh.outbox[target.id].Cap()
	if refused {
		c.rearm()
		return
	}
	c.moveWanted = false
	mover.movedOut(c)
	sh.unplace(c)
	target.connCount.Add(1)
	sh.movesOut.Add(1)
	bump(&sh.stats.connsMovedOut, 1)
	c.handler, c.movedFrom = nil, sh
	// Only this shard pushes to that queue and it had room: the push
	// succeeds, and from here on only the target touches the connection.
	err := sh.post(target.id, envelope{fd: -1, conn: c})
	invariant.Assert(err == nil, "a move fits the queue it checked")
}

// moveIn makes a connection another shard handed over one of this
// shard's: a slot, a receive on its fd, and the Handler told. A stopping
// or full shard closes it instead (no op is armed on it anywhere).
func (sh *Shard) moveIn(c *Conn) {
	from := c.movedFrom
	invariant.Assert(from != nil && from != sh, "a moved connection comes from another shard")
	invariant.Assert(c.handler == nil, "a moved connection arrives without a handler")
	c.shard, c.handler, c.movedFrom = sh, sh.handler, nil
	mover, ok := c.handler.(connMover)
	invariant.Assert(ok, "a shard that takes moved connections has a connMover handler")
	if sh.stopping || len(sh.connsFree) == 0 && len(sh.conns) >= connectionsPerShardMax {
		c.closeSocket()
		sh.connCount.Add(-1)
		bump(&sh.stats.connsClosed, 1)
		mover.movedIn(c)
		c.handler.OnClose(c, nil)
		from.movesOut.Add(-1)
		return
	}
	sh.place(c)
	bump(&sh.stats.connsMovedIn, 1)
	c.armRecv()
	mover.movedIn(c)
	from.movesOut.Add(-1)
}

// place gives conn a free slot of this shard and a fresh generation.
func (sh *Shard) place(conn *Conn) {
	sh.connGen++
	conn.gen = sh.connGen & tokenGenMask
	if last := len(sh.connsFree) - 1; last >= 0 {
		conn.slot = sh.connsFree[last]
		sh.connsFree = sh.connsFree[:last]
		sh.conns[conn.slot] = conn
		return
	}
	conn.slot = uint32(len(sh.conns))
	sh.conns = append(sh.conns, conn)
}
