package shard

import "errors"

// Handler runs a connection protocol (the RPC front, or the echo handler
// of the tests) on the shard that owns the connection. Each shard has its
// own Handler instance (Options.NewHandler), called only on that shard's
// thread, so it needs no locks for per-shard state.
type Handler interface {
	// FrameBytes returns the whole size, header included, of the frame
	// whose first bytes are head, or 0 when head is too short to tell.
	// head holds at most frameHeadBytesMax bytes and is valid only during
	// the call. An error (a malformed header) closes the connection.
	FrameBytes(head []byte) (int, error)
	// OnFrame receives one whole frame. The handler owns frame: it hands
	// it on to Conn.Reply or Conn.Send, or returns it with Shard.Release.
	// Each frame counts against the connection's in-flight limit until
	// the reply the handler passes to Conn.Reply (once per frame) is sent.
	OnFrame(conn *Conn, frame []byte)
	// OnClose reports that conn is closed and its fd released; err is nil
	// when the peer or a shutdown closed it between frames. Replies after
	// this are dropped.
	OnClose(conn *Conn, err error)
}

// connOpener is a Handler told of each connection it serves when the
// shard adopts it, before any frame (a peer handshake speaks first).
type connOpener interface {
	onOpen(conn *Conn)
}

// connSentNotifier is a Handler told each time a buffer it queued with
// Conn.Send (not a reply) is completely sent, so it can queue the next.
type connSentNotifier interface {
	onSent(conn *Conn)
}

// frameProgressNotifier is a Handler shown a large frame's bytes while
// they arrive: the connection receives such a frame straight into its
// buffer progressRecvBytes at a time, and after each receive that did
// not complete it (straight in, or copied out of receive buffers) calls
// onFrameProgress with the whole frame buffer (its declared size), of
// which the first arrived bytes are in. The handler
// may read them, never keep or write frame; the frame is delivered whole
// to OnFrame as ever. It returns whether it wants to see more of this
// frame; on false the rest is received in as few receives as it takes.
// watchesFrame, asked as a frame of size bytes starts, says whether it
// may want to see that frame at all; a frame it does not is received as
// any other.
//
// Before such a receive, frameRoom may lend memory of the handler's to
// receive the frame's next bytes into instead of frame: room for all of
// the rest of the frame, kept mapped and left alone until frameReceived
// reports how many bytes the receive brought (0 when it ended without
// any), which it always does, before the next receive and before
// OnClose. Those bytes are the frame's (arrived counts them) though
// frame lacks them: the handler that lent the room answers for them.
// frameReceived returns as onFrameProgress does, and stands for it after
// such a receive.
type frameProgressNotifier interface {
	watchesFrame(conn *Conn, size int) bool
	onFrameProgress(conn *Conn, frame []byte, arrived int) bool
	frameRoom(conn *Conn, frame []byte, arrived int) []byte
	frameReceived(conn *Conn, frame []byte, arrived, n int) bool
}

// shardStopper is a peer Handler told when its shard begins to stop,
// before the shard drains its connections (a link that would only delay
// the drain can close instead).
type shardStopper interface {
	onStopping(sh *Shard)
}

// Errors a connection closes with, reported through Handler.OnClose.
var (
	// ErrFrameTooLarge: a frame declared more than frameBytesMax bytes.
	ErrFrameTooLarge = errors.New("shard: frame larger than the limit")
	// ErrFrameHeader: the handler could not size a frame from
	// frameHeadBytesMax bytes.
	ErrFrameHeader = errors.New("shard: frame header not recognised")
	// ErrPeerClosedMidFrame: the peer closed with a partial frame sent.
	ErrPeerClosedMidFrame = errors.New("shard: peer closed mid-frame")
	// ErrSendQueueFull: a connection already has pushQueueLenMax pushes
	// waiting to be sent.
	ErrSendQueueFull = errors.New("shard: send queue full")
	// ErrConnClosed: the connection is closed or closing.
	ErrConnClosed = errors.New("shard: connection closed")
	// ErrForcedClose: shutdown's deadline passed before the connection
	// drained.
	ErrForcedClose = errors.New("shard: connection closed by forced shutdown")
)

// ErrFileOpsFull reports a shard with fileOpsInFlightMax file ops in flight.
var ErrFileOpsFull = errors.New("shard: too many file ops in flight")
