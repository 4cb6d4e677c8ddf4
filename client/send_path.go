package client

import "github.com/whippetio/whippet/wire"

// sendPath is how a request frame reaches the socket.
type sendPath uint8

const (
	// sendWhole: the request is encoded into one frame, then written
	// with one write. Every request but a large SendMessages.
	sendWhole sendPath = iota
	// sendStreamed: a SendMessages frame is encoded in two passes
	// (wire.RequestStream): the headers and every checksum first, then the
	// payloads are copied chunk by chunk, each chunk written as soon as it
	// is final, so the server receives while the client still copies.
	sendStreamed
	// sendVectored: a SendMessages frame is a head plus views of the
	// caller's payloads (wire.RequestVector), written with writev.
	sendVectored
)

// sendPathOf returns how body is sent on current. A SendMessages frame
// of at least VectoredSendBytesMin whose messages average at least
// VectoredMessageBytesMin goes from a vector when the connection writes
// with writev (not through TLS). Any other SendMessages frame longer than
// StreamedChunkBytes is streamed; anything shorter is one chunk anyway and
// goes whole, one write of one pass.
func sendPathOf(current *conn, body wire.Body) sendPath {
	outgoing, ok := body.(*wire.OutgoingMessages)
	if !ok || len(outgoing.Messages) == 0 {
		return sendWhole
	}
	size := wire.RequestBytes(body)
	switch {
	case current.vectored && size >= VectoredSendBytesMin && size/len(outgoing.Messages) >= VectoredMessageBytesMin:
		return sendVectored
	case size > StreamedChunkBytes:
		return sendStreamed
	}
	return sendWhole
}
