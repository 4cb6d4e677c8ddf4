// Package wire is the Iggy TCP protocol, byte for byte: frame headers,
// every command's request body and reply payload, status codes, option and
// user-header blocks, batch records and message frames. The reference is
// ../shared/protocol/PROTOCOL.md (Iggy 0.9 VSR framing, protocol 0.11.0);
// section numbers (§n) in comments point into it.
//
// wire owns no I/O and imports nothing of ours except internal/invariant.
// A server front decodes requests and encodes replies with it; our client
// encodes requests and decodes replies with the same types.
//
// # API shape
//
// Every body type has EncodedSize, Encode(dst) and Decode(src). Encode
// writes exactly EncodedSize bytes into a buffer the caller owns. Decode
// returns the bytes consumed or a *DecodeError{Offset, Need, Have, What};
// DecodeAll also refuses trailing bytes. Slices in decoded values
// (identifier names, keys, payloads, batch records) are views into the
// decoded bytes, never copies: they live as long as that buffer.
// SendMessages and PollMessages decode without allocating.
//
// Server side: DecodeRequest (or an Assembler fed by partial reads), then
// Classify (drop, dispatch, login, logout, status or eviction per §3 and
// §15), then RequestSet.Decode (one reusable value per body type, no
// allocation per request); answer with EncodeReply, EncodeStatusReply,
// EncodeResultReply or an EvictionHeader. Admission is ValidateBatch then
// StampBatch; a poll reply is PlanPoll over stored batches (sliced headers
// and views of stored frames) then one vectored write, or EncodePoll.
//
// Client side: EncodeRequest, then DecodeReply, Reply.Err and the payload
// type of the command (NewReplyPayload lists them). A producer may encode
// SendMessages with EncodeSendVector instead: a RequestVector whose pieces
// are a small head and the caller's own payloads, for one vectored write
// that copies no payload.
//
// # Frame header (256 bytes, both directions, §2)
//
//	request (command 5)                    reply (command 8)
//	  0 checksum            u128 (0)         0 checksum            u128 (0)
//	 16 checksum_body       u128 (0)        16 checksum_body       u128 (0)
//	 32 cluster             u128            32 cluster             u128
//	 48 size                u32  header+body 48 size               u32
//	 52 view                u32             52 view                u32
//	 56 release             u32             56 release             u32
//	 60 command             u8   = 5        60 command             u8  = 8
//	 61 replica             u8              61 replica             u8
//	 62 reserved            66 zero bytes   62 reserved            66 bytes
//	128 client              u128 (≠ 0)     128 request_checksum    u128
//	144 request_checksum    u128           144 context             u128
//	160 timestamp           u64            160 client              u128
//	168 request             u64            176 op                  u64
//	176 operation           u8             184 commit              u64
//	177 padding             7 zero bytes   192 timestamp           u64
//	184 session             u64            200 request             u64
//	192 user_id             u32            208 operation           u8
//	196 code                u32 (op 2 only)209 padding             7 bytes
//	200 reserved            56 zero bytes  216 status              u32
//	                                       220 reserved            36 bytes
//
// An eviction (command 13) is header-only: client u128 @128, the accepted
// protocol window u32 @144 (max) and u32 @148 (min), reason u8 @255.
//
// # Batch record (§8.2) and message frame (§8.3)
//
//	batch header, 256 bytes               message frame, 48-byte header
//	  0 partition_id      u64 (server)      0 checksum        u64 XXH3(frame[8:])
//	  8 base_offset       u64 (server)      8 id              u128
//	 16 base_timestamp    u64 (server)     24 offset_delta    u32 (0, 1, 2 …)
//	 24 origin_timestamp  u64              28 timestamp_delta u32 µs from origin
//	 32 batch_length      u64 (256+frames) 32 user_headers_length u32
//	 40 batch_checksum    u64              36 payload_length  u32
//	 48 message_count     u32              40 reserved        u64 (0)
//	 52 reserved          204 zero bytes   48 payload, then user headers (TLV)
//
// batch_checksum = XXH3-64(bytes 0..40 ‖ message_count ‖ each frame's
// checksum field in order). The server stamps partition_id, base_offset and
// base_timestamp (StampBatch) and recomputes it; frames never change.
//
// # Invariants
//
//  1. Every encoder writes exactly EncodedSize bytes (asserted).
//  2. Decoding never reads past the slice it is given nor past a frame's
//     declared size, and never sizes an allocation from an unchecked count.
//  3. A request that decodes re-encodes to the same bytes: reserved and
//     padding bytes must be zero, booleans 0 or 1, so nothing is dropped.
//  4. Frames are 256..64 MiB; anything else breaks the stream (close it).
//  5. A batch admitted by ValidateBatch tiles its record exactly, has
//     message_count frames with deltas 0..n-1 and valid checksums.
//  6. Frame bytes are never rewritten: stamping touches the batch header,
//     slicing builds a new header and serves the stored frames as they are.
//
// # Resolutions where the reference is silent (PROTOCOL.md §15)
//
//   - Request headers with non-zero reserved or padding bytes do not decode;
//     every known SDK writes zeros there, and strictness keeps invariant 3.
//   - RequestHeader.Invalid drops only what §2.2 lists and leaves session
//     checks to the server (§15 #1: pre-login writes are evicted, not dropped).
//   - An unknown polling strategy is a decode error, answered with status 3
//     (§15 #2). Admission requires offset deltas 0..n-1 (the producer rule of
//     §8.3); VerifyRecord accepts increasing deltas for sliced records.
//   - Sliced records carry a checksum recomputed over the served frames
//     (§15 #8); the golden sliced reply confirms the formula.
//   - The status table (status_table.go, 480+ lines) mirrors
//     error_codes.json; TestGoldenStatusCodes keeps the two identical.
package wire
