package shard

// # The RPC front (front_*.go)
//
// StartServer runs a front on every shard: the Handler that turns Iggy
// frames (PROTOCOL.md, through wire) into work and replies.
//
//	frame → FrameBytes (size @48, 256..64 MiB, else close)
//	      → order (front_order.go): queue, start in order
//	      → serve: wire.DecodeRequest, wire.Classify (§3)
//	          drop | status | eviction | login | logout | dispatch
//	      → dispatch (front_dispatch.go), one of:
//	          reads of the view          answered here (front_reads.go, front_system.go)
//	          reads with counters        TopicStats/StatsAll first (front_stats.go)
//	          metadata writes, Join,     Shard.Send to shard 0 → metaPlane (front_meta*.go)
//	          Leave, Sync                → store.Execute → data follow-ups → back
//	          partition commands         DataShard.Append/Poll/... (front_data*.go)
//	      → complete: encode into the shard's buffer, finish → Conn.Reply
//
// Shard 0 owns the metadata store and the consumer-group table; after each
// change it publishes a frontView, an immutable deep copy that every shard
// reads through one atomic pointer. So names resolve, rights are checked and
// partitions are chosen on the connection's shard with no hop; only writes
// travel to shard 0. Slow work stays off shard 0: argon2id hashing and
// verification, and token minting, run on the connection's shard
// (prepareMeta, login).
//
// Startup: loadPartitions opens the metadata on the portable storage to
// list the partitions, so that each owner recovers its own at start; shard
// 0 then reopens the store on its backend, creates the root user on a
// first start and publishes the first view. Requests that arrive earlier
// wait (waitReady).
//
// Consumer groups (front_groups.go) are cooperative: a partition taken
// from a member stays committable but not pollable by it until it syncs,
// leaves, or consumer_group.rebalancing_timeout passes; only then does the
// new owner get it. Memberships belong to sessions and are not logged.
//
// Front invariants:
//
//  1. Replies of one connection leave in request order; a request starts
//     only once every earlier request answered, except within the send
//     lane and the read-only poll lane (front_order.go).
//  2. Every delivered frame is answered exactly once: by a reply, or by
//     forgetFrame when the protocol says to drop it (§2.2).
//  3. A published view is never modified; shard 0 alone publishes.
//  4. Only shard 0 reads or writes the metadata store and the group table;
//     a call carries its own result fields back to its origin shard.
//  5. A metadata write applies at most once per (session, request id): a
//     replay of the session's last write answers its first reply (§5.4).
//  6. Passwords are stored as argon2id PHC strings and tokens as SHA-256
//     hashes; raw secrets leave the connection's shard only inside a call
//     (the token's single reply).
