// Package classic is the Iggy 0.8 "classic" TCP protocol: the framing, the
// codec of all 47 commands, the 64-byte message header with its XXH3-64
// checksum, the 0.8 status codes, and the detector that tells a classic
// connection from a 0.9 VSR one on the same port. Clients built for Iggy
// 0.6–0.8 speak it; 0.9 clients speak the VSR framing of package wire.
//
// It is a pure codec: no I/O, no clocks, no randomness (a caller that stamps
// messages supplies the random id). It imports nothing of ours but
// internal/invariant, and in particular not package wire: conversions to the
// 0.9 message frame take and produce plain field values (convert.go).
// Reference: shared/protocol/legacy/PROTOCOL-0.8.md; golden data in
// shared/protocol/legacy/vectors.
//
// # Frames
//
// All integers are little-endian; there is no padding. A request:
//
//	0        4        8
//	+--------+--------+----------------------+
//	| length | code   | body (length-4)      |   length counts code + body
//	+--------+--------+----------------------+
//
// A reply:
//
//	0        4        8
//	+--------+--------+----------------------+
//	| status | length | body (length)        |   body empty when status != 0
//	+--------+--------+----------------------+
//
// The conversation is lockstep: the client speaks first, one request, one
// reply. The connection is the session: login (38 LoginUser, 44
// LoginWithPersonalAccessToken) is an ordinary command.
//
// # Messages
//
// SendMessages (101) body:
//
//	[metadata_length u32][stream ident][topic ident][partitioning][count u32]
//	[index entry × count][message × count]
//
//	index entry (16 bytes): 0      4              8              16
//	                        | 0 u32 | end pos u32 | 0 u64         |
//
// end pos is the cumulative byte length of messages 0..i; message i spans
// data[end(i-1):end(i)]. Each message is a 64-byte header, the payload, then
// the user headers:
//
//	 0          8                24         32          40           48
//	 | checksum | id (u128, 16)  | offset   | timestamp | origin_ts  |
//	48                 52               56          64
//	 | user_headers_len | payload_len   | reserved   | payload | user headers |
//
// checksum = XXH3-64 (seed 0) of bytes 8..end of the message, computed by
// the server after it stamped id (0 ⇒ random UUIDv4), offset and timestamp.
// A PollMessages (100) reply is
//
//	[partition_id u32][current_offset u64][count u32][message × count]
//
// with the same 64-byte-header messages back to back.
//
// # Mapping to the 0.9 message frame
//
// The classic header and the 0.9 frame (PROTOCOL.md §8.3: 48-byte header,
// payload, user headers, inside a batch record with a 256-byte header) carry
// the same facts. MessageFields is the neutral form; ToFrame and FromFrame
// convert. Field by field:
//
//	classic header (64)      0.9 frame (48) / batch header (256)
//	checksum @0              frame checksum @0: recomputed, never copied; each
//	                         covers its own layout (classic: bytes 8..end of the
//	                         64-byte form; 0.9: bytes 8..end of the 48-byte form)
//	id @8 (16 bytes)         id @8: the same 16 bytes, copied verbatim; a zero
//	                         id is replaced by a UUIDv4 before conversion
//	offset @24               batch base_offset + frame offset_delta @24; on send
//	                         offset_delta = index in the batch
//	timestamp @32            batch base_timestamp (one append time per batch)
//	origin_timestamp @40     batch origin_timestamp (min over the batch) +
//	                         frame timestamp_delta @28 (must fit u32 µs)
//	user_headers_len @48     user_headers_length @32
//	payload_len @52          payload_length @36
//	reserved @56             reserved @40 (zero both ways)
//	payload, user headers    payload, user headers (same order, same bytes)
//
// # Detection
//
// Detect looks at the first bytes of a connection (PROTOCOL-0.8.md §11.2):
// fewer than 8 ⇒ NeedMore; bytes 0..7 zero ⇒ VSR (an unsealed 0.9 request
// header); a known code with a plausible body length ⇒ Classic; a TLS record
// ⇒ Reject; otherwise wait up to DetectCandidateDeadline for a 256-byte
// header and accept it as VSR only if it is a valid request header, else
// Reject (close without a reply: the framing is unknown). Every real client
// is decided on its first 8 bytes.
//
// # Errors
//
// Decoders return typed values or a *DecodeError with the field, offset,
// need/have (truncation) or value (a bad discriminant or failed check), and
// the status a server answers with: 3 InvalidCommand for shape errors, 4
// InvalidFormat for failed validation, the 4xxx/10011 codes for SendMessages
// batch checks. Request decoders ignore trailing bytes, as the 0.8 server
// does (the classic Go SDK's UpdateUser sends one). Reply decoders require
// exact consumption. Encoders append to a caller-owned buffer; request
// encoders return an error for values that do not fit the wire, reply
// encoders assert, since they are fed validated server state.
//
// # Invariants
//
//  1. No decoder panics or reads outside the body it is given, whatever the
//     bytes (FuzzDecodeClassic, FuzzDecodeClassicReply).
//  2. Accepted input re-encodes to the bytes it was decoded from (up to the
//     consumed length for requests); decoders reject every non-canonical
//     form (flags other than 0/1, an absent partition with a non-zero id).
//  3. Decoded names, keys, payloads and user headers are views into the
//     frame, never copies; SendMessages and PollMessages decoding allocates
//     nothing (TestDecodeAllocations).
//  4. A SendMessages body that decodes has count ≥ 1, zero reserved index
//     words, monotonic end positions, and every span is exactly one message
//     of 64 + payload_len + user_headers_len bytes within the 0.8 caps; the
//     last end equals the data length.
//  5. A reply body with a non-zero status is empty; no success body is
//     exactly one byte long (the classic Go SDK would not read it).
//  6. Detect is pure and monotonic: once decided on n bytes, more bytes never
//     change the verdict; real classic and VSR clients are decided on 8.
//  7. Admit drains every refused body except one above its cap, after which
//     the connection closes: the stream never desynchronises.
//  8. A stored message served by AppendMessage carries a checksum equal to
//     XXH3-64 of its bytes 8..end (ChecksumValid).
//
// Files: frame.go (prologues, splitting), admit.go (what a server does with
// a prologue: dispatch, refuse after draining, refuse and close), codes.go, status.go and
// status_codes.go (the 222 codes), primitives.go and permissions.go (shared
// shapes), one file per command group (system, clients, users, tokens,
// streams, topics, partitions, groups, offsets, send, poll), message.go
// (64-byte header, checksum, stamping), headers.go (user-header TLV),
// convert.go, detect.go, dispatch.go.
package classic
