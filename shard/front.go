package shard

import (
	"context"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
)

// Server is the RPC front running on a Runtime: one front per shard
// decodes frames, keeps each connection's session, and runs every command
// where it belongs (metadata on shard 0, partitions on their owning shard)
// before it answers on the connection's shard.
type Server struct {
	options ServerOptions
	runtime *Runtime
	data    *Data
	fronts  []*front
	latency []*requestLatency // by shard; allocated before the shards start
	// view is the metadata as of the last applied command, published by
	// shard 0 and read by every shard (never modified once published).
	view      atomic.Pointer[frontView]
	opened    chan error
	clients   clientRegistry
	sessions  atomic.Uint64
	startedAt time.Time
	cpu       cpuSampler
	fatalOnce sync.Once
	// clusterView is the replication layer's, once installed.
	clusterView atomic.Pointer[clusterViewBox]
}

// StartServer starts the runtime with a front on every shard, opens the
// metadata store on shard 0, and returns once it is open (or failed).
func StartServer(options ServerOptions) (*Server, error) {
	if err := options.withDefaults(); err != nil {
		return nil, err
	}
	server := &Server{options: options, opened: make(chan error, 1), startedAt: time.Now()}
	server.clients.entries = make(map[uint32]*clientEntry)
	specs, err := loadPartitions(&server.options)
	if err != nil {
		return nil, err
	}
	server.data, err = NewData(DataOptions{Directory: options.DataPath, Partitions: specs,
		CacheBytes: options.CacheBytes, MaintenanceInterval: options.MaintenanceInterval, Logger: options.Logger,
		OpenFilesMax: options.OpenFilesMax, OpenFilesReserve: openFilesReserve(options.ConnectionsMax),
		ReadChecksumsUnverified: options.ReadChecksumsUnverified, AllocateAheadOff: options.AllocateAheadOff})
	if err != nil {
		return nil, err
	}
	runtimeOptions := options.Runtime
	runtimeOptions.NewHandler = server.newFront
	runtimeOptions.OnStart = server.onStart
	runtimeOptions.OnMessage = server.onMessage
	runtimeOptions.OnStop = server.onStop
	runtimeOptions = server.data.Install(runtimeOptions)
	if options.Cluster != nil {
		server.data.cluster = options.Cluster
		runtimeOptions = options.Cluster.Install(runtimeOptions, server.data)
	}
	cpus := runtimeOptions.CPUs
	if len(cpus) == 0 {
		allowed, err := AllowedCPUs()
		if err != nil {
			return nil, err
		}
		cpus = allowed
	}
	server.fronts = make([]*front, min(len(cpus), shardCountMax))
	server.latency = newRequestLatencies(len(server.fronts))
	runtime, err := Start(runtimeOptions)
	if err != nil {
		return nil, err
	}
	server.runtime = runtime
	select {
	case err = <-server.opened:
	case <-runtime.Done():
		err = runtime.Err()
	}
	if err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = runtime.Shutdown(ctx) // the open error is the one to report
		return nil, err
	}
	return server, nil
}

// Runtime returns the shard runtime the server runs on.
func (s *Server) Runtime() *Runtime { return s.runtime }

// Addr returns the client listener's address.
func (s *Server) Addr() net.Addr { return s.runtime.Addr() }

// RunUntilSignal serves until SIGINT or SIGTERM, then shuts down
// gracefully (Runtime.RunUntilSignal).
func (s *Server) RunUntilSignal(grace time.Duration) error { return s.runtime.RunUntilSignal(grace) }

// RunUntil serves until a signal arrives on signals (Runtime.RunUntil).
func (s *Server) RunUntil(signals <-chan os.Signal, grace time.Duration) error {
	return s.runtime.RunUntil(signals, grace)
}

// Shutdown stops the server gracefully (Runtime.Shutdown).
func (s *Server) Shutdown(ctx context.Context) error { return s.runtime.Shutdown(ctx) }

// Fatal returns the unsafe-to-continue error (an *engine.FatalError, such
// as a failed fdatasync) that stopped the server, or nil; any thread.
func (s *Server) Fatal() error { return s.data.Fatal() }

// fatal reports an unsafe-to-continue error once.
func (s *Server) fatal(reason error) {
	s.fatalOnce.Do(func() { s.options.Fatal(reason) })
}

func (s *Server) newFront(sh *Shard) Handler {
	f := &front{server: s, shard: sh, outbox: make([][]Message, len(s.fronts)),
		passwords: make(map[[32]byte]bool), roundRobin: make(map[[2]uint32]uint32)}
	f.dataDoneFn, f.sendDoneFn, f.pollDoneFn = f.dataDone, f.sendDone, f.pollDone
	f.latency = s.latency[sh.ID()]
	f.offsetDoneFn, f.opDoneFn = f.offsetDone, f.partitionOpDone
	s.fronts[sh.ID()] = f
	return f
}

func (s *Server) onStart(sh *Shard) {
	f := s.fronts[sh.ID()]
	invariant.Assert(f != nil, "front: the runtime builds the handler before OnStart")
	if sh.ID() == 0 {
		f.meta = newMetaPlane(f)
		f.meta.open()
	}
	if interval := s.options.HeartbeatInterval; interval > 0 {
		_, err := sh.Every(interval/2, f.evictStale)
		invariant.Assert(err == nil, "a fresh shard has room for the heartbeat timer")
	}
}

func (s *Server) onStop(sh *Shard) {
	if f := s.fronts[sh.ID()]; f != nil && f.meta != nil {
		f.meta.close()
	}
}

// Message kinds the front exchanges between shards.
const (
	kindMetaCall   uint32 = 0x100 + iota // → shard 0: run a metadata call
	kindCallDone                         // → origin: a call's reply is ready
	kindClientGone                       // → shard 0: a session ended; leave its groups
	kindUserGone                         // → every shard: log out the sessions of a user (Value)
)

func (s *Server) onMessage(sh *Shard, from int, message Message) {
	f := s.fronts[sh.ID()]
	switch message.Kind {
	case kindMetaCall:
		f.meta.run(message.Data.(*call))
	case kindCallDone:
		f.callDone(message.Data.(*call))
	case kindClientGone:
		f.meta.clientGone(message.Data.(*clientGone))
	case kindUserGone:
		f.logoutUser(uint32(message.Value))
	default:
		invariant.Assert(false, "front: unknown message kind")
	}
}

// front is one shard's Handler: it owns the sessions of the shard's
// connections. Only its shard's thread touches it.
type front struct {
	server *Server
	shard  *Shard
	meta   *metaPlane // shard 0 only
	// latency is this shard's request latency table (external_latency.go).
	latency *requestLatency
	// appendLatency times appends end to end (external_append.go).
	appendLatency appendLatency
	// outbox holds, per target shard, messages a full queue refused, in
	// order; later messages to that shard wait behind them.
	outbox      [][]Message
	outboxArmed bool
	// passwords caches argon2id verifications that succeeded.
	passwords map[[32]byte]bool
	sessions  []*session
	// roundRobin is the Balanced partitioning cursor of each topic
	// (stream id, topic id) on this shard.
	roundRobin map[[2]uint32]uint32
	// calls are recycled request contexts; dataDoneFn and the *Fn
	// continuations are method values made once, so that starting a data
	// op allocates nothing.
	calls        []*call
	dataDoneFn   func(op *DataOp)
	sendDoneFn   func(c *call, op *DataOp)
	pollDoneFn   func(c *call, op *DataOp)
	offsetDoneFn func(c *call, op *DataOp)
	opDoneFn     func(c *call, op *DataOp)
	// stats holds the partition counters gathered for the read being
	// answered (readWithStats), nil otherwise.
	stats map[PartitionKey]PartitionStats
}

// post sends message to shard to, keeping order behind earlier refusals.
func (f *front) post(to int, message Message) {
	if len(f.outbox[to]) == 0 {
		if err := f.shard.Send(to, message); err == nil {
			return
		}
	}
	f.outbox[to] = append(f.outbox[to], message)
	f.armOutbox()
}

func (f *front) armOutbox() {
	if f.outboxArmed {
		return
	}
	f.outboxArmed = true
	_, err := f.shard.After(outboxRetryDelay, f.flushOutbox)
	invariant.Assert(err == nil, "front: the outbox timer fits")
}

func (f *front) flushOutbox(time.Time) {
	f.outboxArmed = false
	for to, pending := range f.outbox {
		sent := 0
		for _, message := range pending {
			if f.shard.Send(to, message) != nil {
				break
			}
			sent++
		}
		f.outbox[to] = append(pending[:0], pending[sent:]...)
		if len(f.outbox[to]) > 0 {
			f.armOutbox()
		}
	}
}

// FrameBytes sizes a frame from its 256-byte header (§2.1).
func (f *front) FrameBytes(head []byte) (int, error) {
	size, err := wire.FrameSize(head)
	if err != nil || size == 0 {
		return 0, err
	}
	if size > f.server.options.FrameBytesMax {
		return 0, ErrFrameTooLarge
	}
	return size, nil
}

// OnFrame queues frame on its session and runs the queue: a connection's
// requests execute one at a time, in order, so its replies leave in order
// and a write is visible to the read that follows it.
func (f *front) OnFrame(conn *Conn, frame []byte) {
	s, _ := conn.Attached().(*session)
	if s != nil && s.classic != nil {
		f.onClassicFrame(s, frame)
		return
	}
	if s == nil {
		if limit := f.server.options.ConnectionsMax; limit > 0 && f.server.clients.count() >= limit {
			f.shard.Release(frame)
			conn.forgetFrame()
			conn.Close() // past tcp.max_connections: refusing is the answer the peer gets
			return
		}
		detecting, _ := conn.Attached().(*classicDetecting)
		s = f.newSession(conn)
		s.detecting = detecting
		conn.Attach(s)
	}
	if s.evicted {
		f.streamEnd(s)
		f.shard.Release(frame)
		conn.forgetFrame()
		return
	}
	invariant.Assert(len(s.order.queue)+s.order.running < queuedFramesMax,
		"front: a session holds at most the in-flight frames")
	s.lastSeen = f.shard.now()
	s.order.queue = append(s.order.queue, frame)
	streamed := s.stream.frame == &frame[0]
	f.runQueue(s)
	if streamed && s.stream.frame == &frame[0] {
		f.streamEnd(s) // the request did not reach its append (it ran to another answer)
	}
}

// OnClose ends the session: its pending frames are dropped, its group
// memberships end (a rebalance on shard 0), and its entry leaves the list.
func (f *front) OnClose(conn *Conn, err error) {
	s, _ := conn.Attached().(*session)
	if s == nil {
		return
	}
	s.closed = true
	f.streamEnd(s)
	for _, frame := range s.order.queue {
		f.shard.Release(frame)
	}
	s.order.queue = nil
	if s.classic != nil {
		f.classicClosed(s)
	}
	f.endSession(s)
	f.server.clients.remove(s.id)
	f.forget(s)
}

// forgetFrame frees the in-flight slot of a frame answered by silence
// (§2.2: an invalid header is dropped without a reply).
func (c *Conn) forgetFrame() {
	invariant.Assert(c.inflight > c.repliesQueued, "a forgotten frame was delivered")
	c.inflight--
	if c.state == connDraining {
		c.finishDrain()
		return
	}
	if c.paused && !c.resuming && c.state == connOpen {
		c.resuming = true
		c.shard.resume = append(c.shard.resume, c)
	}
}
