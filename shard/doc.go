// Package shard is Whippet's thread-per-core runtime: N shards, each one
// goroutine locked to its OS thread and pinned to its CPU, each owning a
// completion-based I/O backend (io_uring, or epoll where io_uring is
// unavailable), its connections, its timers and its ends of the
// cross-shard queues. It is where the rooms meet: it may import ring, wire,
// engine and vsr; nothing of ours imports it but configs and cmd.
//
// # Shape of a shard
//
// A shard's loop turns: fire due timers, take what peers sent, resume
// connections that were paused at their in-flight limit, then one
// Backend.Wait that submits every op the turn started (one batched submit)
// and reaps at most completionsPerTurnMax completions, which it routes by
// token to the owning connection, the accepter or a FileOp. The Wait blocks
// until the next timer; with Options.Spin it first polls for a bounded,
// adaptive time. Peers wake a blocked shard with MSG_RING (io_uring) or its
// eventfd (epoll), and only when it announced it sleeps, so a busy shard
// takes no wake-up syscalls.
//
// # Backends
//
// Backend is declared here (the consumer declares the interface) and has
// two implementations with one behaviour, checked by the same test bodies:
//
//   - io_uring (uring*.go, on our ring package): one single-issuer ring with
//     DEFER_TASKRUN per shard, multishot accept, multishot recv into a
//     provided-buffer ring of recvBufferCount × recvBufferBytes (re-armed
//     when it runs dry), zero-copy sends of buffers from Shard.Buffer (ring
//     pools mapped outside the Go heap; other slices bounce through one),
//     vectored sends (SENDMSG) of poll replies whose records stay in the
//     engine cache's arena, read by the kernel in place,
//     the rest of a large frame received straight into its pooled buffer
//     (RECV with MSG_WAITALL, one completion, no copy; after a large frame
//     the next head comes from one single-shot buffer-select receive, so
//     the switch needs no cancel, during which a multishot receive would
//     copy the whole frame out of the buffer ring), MSG_RING between
//     shards and an eventfd read for other threads;
//   - epoll (epoll*.go): level-triggered epoll, nonblocking socket
//     syscalls, synchronous file syscalls completed at the next Wait.
//
// Options.Backend "auto" takes io_uring when ring.Available and the probe
// allow it, else epoll with one log line naming the cause; "io_uring" or
// "epoll" force one ("io_uring" fails with ErrBackend where it cannot run).
//
// A shard sleeps in epoll_wait or io_uring_enter through Syscall6, which
// leaves its P in the syscall state until sysmon retakes it (20 µs to
// 10 ms). Start therefore raises GOMAXPROCS by the shard count while the
// runtime runs, so goroutines outside the shards always find a P.
//
// A shard is one thread however many connections it serves. On a CPU
// shared with other busy threads the kernel's fair scheduler gives it one
// thread's share, while a goroutine-per-connection server pinned to the
// same CPU gets one share per connection: with a load average of 6 on 2
// CPUs, one shard serving two 1 MiB echo connections on CPU 0 ran at
// 0.5–0.6× a net server whose two connection threads were pinned there,
// and at 1.1× with one connection each. Give shards CPUs of their own.
//
// The P a sleeping shard holds also explains why a goroutine locked to
// its thread (runtime.LockOSThread) that waits on Go's network poller in
// this process sees its wake-ups late: round trips of 5–8 ms at the
// median instead of 0.6 ms, measured with a pinned echo client against a
// shard on another CPU. A locked goroutine that parks hands its P off
// without polling; the runtime starts an M to poll the network only when
// it hands off the last running P, and a P held in a syscall counts as
// running. So nothing polls until sysmon does (every 10 ms when idle) or
// retakes a P that sat in a syscall for 10 ms. It is not CPU contention:
// the shard and the client were on different CPUs, and a net-package
// server pinned the same way kept 0.6–0.8 ms. Unlocked goroutines are
// unaffected (the M that parks one polls itself), and the broker's
// clients are other processes; so pin no goroutine that waits on
// net in a process running shards, and benchmarks leave clients unpinned.
//
// # Memory
//
// Buffers come from ring pools mapped outside the Go heap and faulted in on
// first touch, so a size class costs what its busiest moment used. A shard
// that goes idleTrimDelay without a completion gives its free buffers'
// pages back (Backend.Trim, trim.go); when every shard idles, shard 0 also
// returns the Go heap's free pages (debug.FreeOSMemory), which the
// scavenger keeps while large long-lived allocations hold the heap goal
// up. Measured on an idle whippet-server with two shards: 71 MB RSS with
// populated pools, 30 MB lazy, 11 MB with the idle trim.
//
// # Accepting: one listener, least-loaded handover
//
// Shard 0 owns the only listening socket and hands each accepted fd, over
// the SPSC queue, to the shard owning the fewest connections. We chose this
// over one SO_REUSEPORT listener per shard because the kernel's reuseport
// hash balances flows statistically, not by load: IO-URING-NOTES.md
// measured that two connections needed 1 to 6 redials to land on two
// listeners, and a broker serving a handful of heavy producer connections
// would leave cores idle. A handover costs one queue slot and maybe one
// wake per connection, paid once at accept, and accept is not our hot path.
// When a target's queue is full shard 0 holds the fd (connectionsHandoffMax)
// and retries; beyond that it serves the connection itself. It never drops
// one.
//
// Least-loaded placement knows nothing of partitions, so a connection may
// land on a shard other than the one owning the partitions it uses; the
// front then moves it there once its requests settled on that shard
// (front_affinity.go, conn_move.go), which spares each request the two
// cross-shard hops (ServerOptions.ConnectionAffinityOff keeps it put).
//
// A cluster node has a second listener, for its replica links
// (Options.PeerListen): the last shard accepts on it and spreads the
// sockets round robin; a second per-shard Handler (Options.NewPeerHandler)
// serves them and the sockets handed over with Runtime.AdoptPeer.
// ClusterNet (cluster_net*.go) is that handler: the replica transport.
//
// # Use
//
//	rt, err := shard.Start(shard.Options{Listen: ":8090", NewHandler: newFront})
//	...
//	err = rt.RunUntilSignal(30 * time.Second) // SIGINT/SIGTERM: drain, flush, close
//
// A Handler sizes frames (FrameBytes), receives whole frames (OnFrame) and
// answers each with Conn.Reply, possibly later and after a hop to another
// shard (Shard.Send; the *Conn travels in Message.Data and is touched only
// back on its own shard).
//
// # Data plane
//
// Data (data_*.go, described in data_doc.go) runs the partitions: each
// partition is owned by the shard OwnerOf names; ops start on the
// connection's shard (DataShard.Append, Poll, StoreOffset, ...), run on the
// owner's engine.Partition, and complete back on the connection's shard.
// Storage is the engine.Storage over a shard's backend.
//
// # Replication groups
//
// In cluster mode Cluster (cluster_host*.go) hosts every vsr group of the
// node on the group's shard: the metadata group (0) on shard 0, a
// partition's group (1<<63 | namespace, cluster_partition*.go) on the
// partition's owner. A group executes each Ready of its replica in vsr's
// order (persist to its engine/replicalog journal, send, restore, apply)
// and steps nothing else meanwhile; messages wait in a bounded inbox.
// Messages the transport delivers are stepped on the next timer turn,
// never inside its callback. This node's requests are proposed (stepped on
// the primary, forwarded by a backup, resent until they apply here) and
// complete when the local apply reaches them, so a send is answered with
// the offsets this node's engine assigned, the same on every node.
//
// # Invariants
//
//  1. Only a shard's own thread touches its state: connections, timers,
//     backend, buffer pool and file ops. Other threads read only the atomic
//     counters (Connections, Stats, QueueDepth, latency tables), call
//     Backend.Notify, and hand sockets over through Runtime.Adopt's bounded
//     inbox, which has its own mutex and is drained by the shard's loop.
//  2. A shard's thread is locked (runtime.LockOSThread) and, unless
//     Options.Unpinned (pin_cores = false), pinned (sched_setaffinity)
//     before its backend is created; it is never unlocked, so the runtime
//     discards the thread at exit.
//  3. Each ordered pair of shards has one SPSC queue; only the sender
//     pushes and only the receiver pops. A full queue refuses the message
//     (ErrQueueFull): nothing is dropped and the sender decides.
//  4. A shard sets sleeping before it checks its queues and blocks; a
//     sender pushes before it reads sleeping; so a queued message never
//     waits for an unrelated wake-up.
//  5. Every op has one final completion; a buffer passed to an op belongs
//     to the backend until then. A connection closes its fd only after
//     every op on it has completed, so an fd number is never reused while
//     the kernel still works for its old owner.
//  6. A connection has at most one send in flight; its sends go out in
//     queue order, each resumed after a partial send (a vectored one from
//     the piece and offset where it stopped). A poll reply sent in place
//     from the cache's arena (replySpans, Backend.SendVec) keeps its
//     records pinned until it is sent, or until the connection closed
//     with no send in flight, and only on the shard whose cache it pins.
//  7. A connection has at most one receive armed: multishot Recv,
//     RecvOnce, or RecvInto straight into the frame being assembled when
//     it holds at least directRecvBytesMin and the backend can lend its
//     buffer as is: for the rest of the frame, however little, when no
//     receive is armed, and in place of a multishot receive once at
//     least directRecvBytesMin of it is missing (or into memory its
//     Handler lends for the frame's next bytes, frameRoom: the frame then
//     lacks them, and the Handler hears of every such receive,
//     frameReceived, before the next one and before OnClose); switching
//     cancels the multishot receive and waits for its final completion,
//     so bytes never arrive out of order.
//  8. In-flight frames per connection never exceed inflightRequestsMax: at
//     the limit reading pauses (recv cancelled, bytes already received
//     parked, at most pausedInputBytesMax) until a reply is sent.
//  9. A reply always fits the send queue (sendQueueLenMax covers every
//     in-flight reply plus pushQueueLenMax pushes).
//  10. A frame larger than frameBytesMax, a header the Handler cannot size
//     within frameHeadBytesMax bytes, or a peer leaving mid-frame closes
//     only that connection, reported to Handler.OnClose.
//  11. Shutdown stops accepting, drains every connection (in-flight
//     requests answered and sent), waits until every shard has drained
//     (a peer may still answer for this shard's clients), runs OnStop on
//     each shard, and only then closes the backends.
//  12. Every loop is bounded: completions, messages per peer and timers
//     fired per turn; only the shard loop itself runs forever.
//  13. A backend error no op can recover from stops every shard
//     (Runtime.Err): half-alive is worse than dead.
//  14. A group executes one Ready at a time, in vsr's order; its journal
//     write completes (fdatasynced for synced groups, and for any change
//     of view or vote) before any of the Ready's messages leaves.
//  15. A request this node submitted is answered only from the local apply
//     of its entry, or fails with ErrClusterStopped or
//     ErrClusterOutcomeUnknown; ErrClusterNotAccepted (58) only when
//     nothing was proposed.
//  16. A partition's applied mark (op, offset next) is recorded only after
//     the engine fdatasynced everything applied up to it.
//  17. A client connection moves to another shard (conn_move.go) only
//     while quiescent: nothing received and unanswered, nothing queued or
//     being sent, no partial frame, no receive armed (the cancelled one
//     finished), and its Handler's state holds nothing of the old shard.
//     At every instant it is owned by exactly one shard or sits in
//     exactly one queue; the sender counts it until the target took it,
//     so shutdown never leaves it in a queue. Peer connections never move.
package shard
