package shard

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/whippetio/whippet/internal/invariant"
)

// netLink is the outbound link to one peer: its queue (any shard), its
// connection (the owner shard), and the signals its dialer waits on.
type netLink struct {
	net     *ClusterNet
	peer    int
	address string
	owner   int // shard owning the connection; set before the dialer starts

	connected   atomic.Bool   // the connection is adopted and authenticated
	attempt     atomic.Uint64 // numbers the dialer's attempts
	pending     atomic.Uint64 // the attempt handed to the owner, not yet opened or abandoned; 0: none
	wakePending atomic.Bool   // a flush message to the owner is on its way
	wakeRetry   []bool        // by shard: a timer retries this shard's wake-up; only that shard touches its entry
	up          chan struct{} // owner → dialer: the attempt's connection opened
	down        chan struct{} // owner → dialer: the connection closed

	mu         sync.Mutex
	queue      []*netBuf // ring of clusterQueueMessagesMax
	queueHead  int
	queueLen   int
	queueBytes int

	// The owner shard's alone.
	conn        *Conn
	connSizes   [clusterConnBuffersMax]int // bytes of each buffer handed to conn, in order
	connHead    int
	connBuffers int
	connBytes   int
	batch       []*netBuf // scratch for takeBatch
}

// netOutbound is attached to an outbound link's connection.
type netOutbound struct {
	link    *netLink
	attempt uint64
}

func newNetLink(n *ClusterNet, peer int, address string) *netLink {
	return &netLink{
		net: n, peer: peer, address: address,
		up: make(chan struct{}, 1), down: make(chan struct{}, 1),
		queue: make([]*netBuf, clusterQueueMessagesMax),
	}
}

// push copies msg to the tail of the queue; false when the queue is full.
func (l *netLink) push(msg []byte) bool {
	buf := l.net.getBuf(len(msg))
	copy(buf.bytes, msg)
	l.mu.Lock()
	if l.queueLen == clusterQueueMessagesMax || l.queueBytes+len(msg) > clusterQueueBytesMax {
		l.mu.Unlock()
		l.net.putBuf(buf)
		return false
	}
	l.queue[(l.queueHead+l.queueLen)%clusterQueueMessagesMax] = buf
	l.queueLen++
	l.queueBytes += len(msg)
	l.mu.Unlock()
	return true
}

// wake gets the owner shard to send what is queued: at once when s is
// the owner, else with one cross-shard message (retried on a timer of s
// while the queue to the owner is full, so a queued message is never
// stranded).
func (l *netLink) wake(s *Shard) {
	if s.id == l.owner {
		l.flush(s)
		return
	}
	if !l.wakePending.CompareAndSwap(false, true) {
		return
	}
	if s.Send(l.owner, Message{Kind: clusterNetMessageFlush, Data: l}) == nil {
		return
	}
	l.wakePending.Store(false)
	if l.wakeRetry[s.id] {
		return // this shard's retry is already armed
	}
	_, err := s.After(clusterWakeRetryDelay, func(time.Time) {
		l.wakeRetry[s.id] = false
		l.wake(s)
	})
	if err != nil {
		s.logger.Warn("cluster: cannot retry a link wake-up", "peer", l.peer, "err", err.Error())
		return
	}
	l.wakeRetry[s.id] = true
}

// onWake runs on the owner for a flush message.
func (l *netLink) onWake(sh *Shard) {
	l.wakePending.Store(false) // before the flush: a later push wakes again
	l.flush(sh)
}

// flush hands queued messages to the connection, gathered into send
// buffers, while the connection holds less than clusterConnBytesMax
// unsent; without a connection it drops them.
func (l *netLink) flush(sh *Shard) {
	invariant.Assert(sh.id == l.owner, "a link is flushed on its owner shard")
	if l.conn == nil {
		l.dropQueued()
		return
	}
	for l.connBuffers < clusterConnBuffersMax && l.connBytes < clusterConnBytesMax {
		buf, count := l.takeBatch(sh)
		if buf == nil {
			return
		}
		if !l.handOver(buf) {
			l.net.stats.droppedClosed.Add(uint64(count))
			return
		}
		l.net.stats.messagesSent.Add(uint64(count))
		l.net.stats.bytesSent.Add(uint64(len(buf)))
	}
}

// sendDirect hands msg to the connection in one copy, skipping the queue,
// when the owner itself sends and the connection has room. Order holds:
// the connection has room only when the queue holds nothing this shard
// queued (flush empties the queue before the connection fills).
func (l *netLink) sendDirect(sh *Shard, msg []byte) bool {
	if l.conn == nil || l.connBuffers >= clusterConnBuffersMax || l.connBytes >= clusterConnBytesMax {
		return false
	}
	buf := sh.frameBuffer(len(msg))
	copy(buf, msg)
	if !l.handOver(buf) {
		return false // the connection closes: the queue takes msg, and drops it with the rest
	}
	l.net.stats.messagesSent.Add(1)
	l.net.stats.bytesSent.Add(uint64(len(msg)))
	return true
}

// handOver queues buf on the connection, which owns it from now on.
func (l *netLink) handOver(buf []byte) bool {
	size := len(buf)
	if err := l.conn.Send(buf); err != nil {
		// Closed: OnClose follows and the link redials. The push queue
		// cannot be full (clusterConnBuffersMax ≤ pushQueueLenMax).
		invariant.Assert(err == ErrConnClosed, "a link's push queue has room")
		return false
	}
	l.connSizes[(l.connHead+l.connBuffers)%clusterConnBuffersMax] = size
	l.connBuffers++
	l.connBytes += size
	return true
}

// takeBatch removes the head of the queue, and the messages behind it
// that fit clusterBatchBytesMax together, into one pooled send buffer;
// it returns the buffer and how many messages it holds.
func (l *netLink) takeBatch(sh *Shard) ([]byte, int) {
	l.mu.Lock()
	if l.queueLen == 0 {
		l.mu.Unlock()
		return nil, 0
	}
	total := 0
	batch := l.batch[:0]
	for l.queueLen > 0 {
		head := l.queue[l.queueHead]
		if len(batch) > 0 && total+len(head.bytes) > clusterBatchBytesMax {
			break
		}
		batch = append(batch, head)
		total += len(head.bytes)
		l.queue[l.queueHead] = nil
		l.queueHead = (l.queueHead + 1) % clusterQueueMessagesMax
		l.queueLen--
	}
	l.queueBytes -= total
	l.mu.Unlock()
	out := sh.frameBuffer(total)
	position := 0
	for i, buf := range batch {
		position += copy(out[position:], buf.bytes)
		l.net.putBuf(buf)
		batch[i] = nil
	}
	invariant.Assert(position == total, "a batch holds its messages whole")
	l.batch = batch[:0]
	return out, len(batch)
}

// dropQueued empties the queue of a link that has no connection.
func (l *netLink) dropQueued() {
	l.mu.Lock()
	dropped := l.queueLen
	for l.queueLen > 0 {
		l.net.putBuf(l.queue[l.queueHead])
		l.queue[l.queueHead] = nil
		l.queueHead = (l.queueHead + 1) % clusterQueueMessagesMax
		l.queueLen--
	}
	l.queueBytes = 0
	l.mu.Unlock()
	l.net.stats.droppedClosed.Add(uint64(dropped))
}

// onOpen runs on the owner when the dialer's socket is adopted.
func (l *netLink) onOpen(conn *Conn, out *netOutbound) {
	invariant.Assert(conn.shard.id == l.owner, "a link's connection lives on its owner")
	if !l.pending.CompareAndSwap(out.attempt, 0) {
		conn.Close() // the dialer gave up on this attempt and dialed again
		return
	}
	invariant.Assert(l.conn == nil, "one connection per link")
	l.conn = conn
	l.connHead, l.connBuffers, l.connBytes = 0, 0, 0
	l.connected.Store(true)
	l.net.stats.linksUp.Add(1)
	notifyLink(l.up)
	l.flush(conn.shard)
}

// onSent runs on the owner when one buffer handed to the connection is
// out: room for more.
func (l *netLink) onSent(conn *Conn) {
	if conn != l.conn {
		return
	}
	invariant.Assert(l.connBuffers > 0, "a sent buffer was handed to the connection")
	l.connBytes -= l.connSizes[l.connHead]
	l.connHead = (l.connHead + 1) % clusterConnBuffersMax
	l.connBuffers--
	l.flush(conn.shard)
}

// onClose runs on the owner when the link's connection closed: what is
// queued is dropped (vsr retries), and the dialer dials again unless the
// runtime is stopping.
func (l *netLink) onClose(conn *Conn, err error) {
	if conn != l.conn {
		return
	}
	l.conn = nil
	l.connected.Store(false)
	l.dropQueued()
	if conn.shard.stopping {
		return // the dialer ends with the runtime
	}
	if err != nil {
		l.net.logger.Info("cluster: link closed", "peer", l.peer, "err", err.Error())
	}
	notifyLink(l.down)
}

func notifyLink(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
