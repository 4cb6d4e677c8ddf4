// Package client is our Go client of the Iggy TCP protocol: the one bench,
// the CLI and the integration tests use. It imports wire and nothing else
// of ours, and does its own I/O on net.Conn.
//
// A Client holds one connection at a time. Concurrent calls are pipelined
// on it (up to Options.PipelineDepth in flight); the server answers in
// order, so replies are paired with requests first in, first out, and each
// reply's request id is checked against its request (§5.6). Request ids
// follow §5.4: Register carries 0, every other request the session counter,
// which metadata writes, DeleteSegments and Logout then advance.
//
// A broken connection fails the calls in flight with ErrDisconnected; the
// next call redials with exponential backoff (ReconnectBackoffMin..Max,
// over the configured address and the healthy nodes of the last roster),
// mints a new client id and logs in again when credentials are known.
// After every login the client reads the cluster roster and moves to the
// healthy leader when a multi-node cluster names another node (§11, at most
// RedirectsMax hops). Transient refusals are replayed: 57 with the same
// frame on the same connection, 58 re-encoded, every 50 ms for 30 s. A 58
// (nothing was applied) first re-runs the leader check, at most every
// LeaderRecheckInterval, and the replay goes to whichever node that
// leaves the client on. A redial tries the last address, then the other
// healthy nodes of the last roster in turn; after a reply timeout (the node
// may be paused and still accept connections) it starts at the others.
//
// Refusals on any of the three channels surface as *Error carrying the
// protocol status; errors.Is(err, wire.StatusStreamIDNotFound) works.
//
// Invariants:
//  1. Request ids of one client id never decrease on the wire: ids are
//     assigned under the connection's write lock, as the frame is written.
//  2. Every call gets exactly one outcome: its reply, or the error that
//     broke its connection.
//  3. A reply is never paired with a request other than the oldest one in
//     flight; a mismatch drops the connection.
//  4. Payload bytes are copied at most once on send and not at all on poll
//     (the decoded records are views into the reply frame). A send of
//     large messages (VectoredSendBytesMin, VectoredMessageBytesMin) on a
//     plain socket is written with writev from the caller's payloads; any
//     other request is copied into one frame.
//  5. The reader never waits for a writer: writes hold only the write lock,
//     so replies are paired while a large frame waits for the socket. Lock
//     order: write lock, client lock, connection lock.
//  6. Nothing reads a caller's payloads after SendMessages returns: the
//     write runs on the calling goroutine; a caller whose context ends
//     mid-write cuts the write short with a past write deadline (and the
//     connection fails) before it returns.
package client
