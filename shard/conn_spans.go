package shard

import (
	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
)

// replySpans are the records of a poll reply that go out straight from
// the engine cache's arena (engine.PollSpan, pinned there) instead of
// being copied into the reply buffer: the reply on the wire is the
// buffer with each span's bytes inserted at its At. The connection holds
// them, with the buffer, until the reply is sent or the connection closes
// with no send in flight; then each span is released.
type replySpans struct {
	list  []engine.PollSpan
	bytes int // the spans' total length
}

// takeSpans returns an empty span list with room for pollSpansMax.
func (sh *Shard) takeSpans() *replySpans {
	if last := len(sh.spansFree) - 1; last >= 0 {
		spans := sh.spansFree[last]
		sh.spansFree = sh.spansFree[:last]
		return spans
	}
	return &replySpans{list: make([]engine.PollSpan, 0, pollSpansMax)}
}

// releaseSpans unpins every span of spans (nil is none) and keeps the list
// for another reply.
func (sh *Shard) releaseSpans(spans *replySpans) {
	if spans == nil {
		return
	}
	for index := range spans.list {
		spans.list[index].Release()
	}
	bump(&sh.stats.spansPinned, -len(spans.list))
	spans.list, spans.bytes = spans.list[:0], 0
	if len(sh.spansFree) < spanListsFreeMax {
		sh.spansFree = append(sh.spansFree, spans)
	}
}

// size is the bytes the queued buffer puts on the wire.
func (o *outgoing) size() int {
	if o.spans == nil {
		return len(o.buf)
	}
	return len(o.buf) + o.spans.bytes
}

// vectors appends to into the pieces of o's bytes from offset on, in wire
// order: the buffer's bytes between the spans and the spans themselves.
func (o *outgoing) vectors(offset int, into [][]byte) [][]byte {
	invariant.Assert(offset < o.size(), "a vectored send has bytes left")
	at := 0
	for index := range o.spans.list {
		span := &o.spans.list[index]
		into = appendPiece(into, o.buf[at:span.At], &offset)
		into = appendPiece(into, span.Data, &offset)
		at = span.At
	}
	into = appendPiece(into, o.buf[at:], &offset)
	invariant.Assert(len(into) > 0 && len(into) <= sendSpansMax, "a vectored send has 1..sendSpansMax pieces")
	return into
}

// appendPiece appends what is left of piece once skip bytes, counted from
// it on, are skipped; skip shrinks by the bytes it passed over.
func appendPiece(into [][]byte, piece []byte, skip *int) [][]byte {
	if *skip >= len(piece) {
		*skip -= len(piece)
		return into
	}
	piece = piece[*skip:]
	*skip = 0
	return append(into, piece)
}

// replyWith is Reply for a poll reply whose records partly stay in the
// cache (spans, nil for none): the connection releases them once the
// reply is sent, or dropped.
func (c *Conn) replyWith(buf []byte, spans *replySpans) error {
	invariant.Assert(c.inflight > c.repliesQueued, "reply answers a delivered frame")
	if spans != nil {
		invariant.Assert(len(spans.list) > 0, "a reply with spans has one")
	}
	if c.state >= connClosing {
		c.inflight--
		c.shard.Release(buf)
		c.shard.releaseSpans(spans)
		return ErrConnClosed
	}
	invariant.Assert(c.sendLen < sendQueueLenMax, "a reply always fits the send queue")
	c.repliesQueued++
	if spans != nil {
		bump(&c.shard.stats.bytesInPlace, spans.bytes)
	}
	c.enqueue(outgoing{buf: buf, reply: true, spans: spans})
	return nil
}

// startSendVec sends the front buffer and its spans from sendOffset on.
func (c *Conn) startSendVec(front *outgoing) error {
	c.sendVec = front.vectors(c.sendOffset, c.sendVec[:0])
	return c.shard.backend.SendVec(c.fd, c.sendVec, c.token(tokenSend))
}

// evacuate copies the records of this connection's replies that wait to
// go out in place into buffers of their own and releases their spans: the
// shard's cache could not evict a pinned record (engine.Cache.PinBlocked),
// and a client that reads slowly, or not at all, must not keep it from
// taking new records. A reply in flight is cancelled first; its
// completion copies what is left of it (onSend).
func (c *Conn) evacuate() {
	if c.state >= connClosing || c.evacuating || c.sendLen == 0 {
		return // a closing connection releases its spans once no send is in flight
	}
	if !c.sendArmed {
		c.flattenQueued(0)
		return
	}
	if c.sendJoined == nil && c.sendQueue[c.sendHead].spans != nil {
		c.evacuating = true
		if err := c.shard.backend.Cancel(c.fd, c.token(tokenSend)); err != nil {
			c.shard.fail(err)
		}
		return
	}
	c.flattenQueued(c.sendCovers) // behind the send in flight
}

// flattenQueued copies the queued replies with spans, from the index-th
// queued buffer on, into buffers of their own; none of them is in flight.
func (c *Conn) flattenQueued(index int) {
	for ; index < c.sendLen; index++ {
		queued := &c.sendQueue[(c.sendHead+index)%sendQueueLenMax]
		if queued.spans == nil {
			continue
		}
		offset := 0
		if index == 0 {
			offset, c.sendOffset = c.sendOffset, 0
		}
		size := queued.size() - offset
		flat := c.shard.Buffer(size)
		at := 0
		for _, piece := range queued.vectors(offset, nil) {
			at += copy(flat[at:], piece)
		}
		invariant.Assert(at == size, "a flattened reply holds every byte left to send")
		c.shard.Release(queued.buf)
		c.shard.releaseSpans(queued.spans)
		queued.buf, queued.spans = flat, nil
		bump(&c.shard.stats.repliesCopied, 1)
	}
}

// evacuateSpans has every connection of the shard copy out the records
// its replies hold pinned in the cache.
func (sh *Shard) evacuateSpans() {
	for _, conn := range sh.conns {
		if conn != nil && !conn.peer {
			conn.evacuate()
		}
	}
}
