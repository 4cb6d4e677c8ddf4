// Package classic is our client of the Iggy 0.8 "classic" TCP protocol
// (shared/protocol/legacy/PROTOCOL-0.8.md), the framing older Iggy SDKs
// speak: [length u32][code u32][body] requests, [status u32][length u32]
// [body] replies, login by LoginUser (38) or LoginWithPersonalAccessToken
// (44), the connection as the session. Tests use it to check that a server
// serves 0.8 clients beside 0.9 ones; the codec is wire/classic, and this
// package imports nothing else of ours.
//
// Invariants:
//  1. One request is in flight at a time (the protocol is lockstep): calls
//     hold the client's lock from the write to the end of the reply.
//  2. A reply with a non-zero status has no body read (PROTOCOL-0.8.md §1.2)
//     and surfaces as *Error (StatusOf reads it back).
//  3. An I/O error or a malformed reply prologue breaks the client for
//     good: a classic connection cannot resynchronise, and its session
//     (login, group memberships) ends with it.
package classic

// ClientVersion is the version string sent in LoginUser; 0.8 servers
// ignore it.
const ClientVersion = "0.8.0-whippet"
