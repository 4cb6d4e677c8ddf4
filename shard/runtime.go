package shard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a Runtime. The zero value of each field but
// NewHandler selects its default.
type Options struct {
	// CPUs lists the CPUs to run one shard on each; empty means every CPU
	// the process may use (sched_getaffinity).
	CPUs []int
	// Backend is "auto" (io_uring when available, else epoll with one log
	// line naming why), "io_uring" or "epoll".
	Backend string
	// Listen is the TCP address to accept on ("127.0.0.1:0" picks a
	// port); empty means no listener.
	Listen string
	// NewHandler builds each shard's Handler, on that shard's thread.
	NewHandler func(sh *Shard) Handler
	// PeerListen is a second TCP address (a cluster's replica port),
	// accepted on the last shard; NewPeerHandler's handlers serve its
	// connections and those handed over with Runtime.AdoptPeer. Empty
	// means no second listener.
	PeerListen string
	// NewPeerHandler builds each shard's Handler for peer connections, on
	// that shard's thread; nil means the runtime has none.
	NewPeerHandler func(sh *Shard) Handler
	// OnStart runs on each shard's thread before its loop (set timers).
	OnStart func(sh *Shard)
	// OnMessage receives, on the target shard's thread, what a peer sent
	// with Shard.Send, in the order that peer sent it.
	OnMessage func(sh *Shard, from int, message Message)
	// OnStop runs on each shard's thread once every shard has drained its
	// connections: the place to flush.
	OnStop func(sh *Shard)
	// Spin is how long a shard polls for completions before it blocks,
	// while polling keeps finding work (adaptive: it stops after
	// spinIdleTurnsMax fruitless spins until work returns). Zero never
	// spins; spinning costs a core, so set it only where shards own theirs.
	Spin time.Duration
	// Unpinned leaves each shard's locked thread free to run on any CPU
	// instead of binding it to its CPU in CPUs (which then only counts
	// the shards).
	Unpinned bool
	// Logger receives the runtime's few log lines; nil means slog.Default.
	Logger *slog.Logger
}

// Runtime is the set of shards of one process.
type Runtime struct {
	options     Options
	logger      *slog.Logger
	backendName string
	shards      []*Shard
	addr        net.Addr
	peerAddr    net.Addr
	peerNext    atomic.Uint32 // round robin of accepted peer connections

	stopRequested atomic.Bool
	forced        atomic.Bool
	drainedCount  atomic.Int32
	epoch         atomic.Uint64  // bumped by every runtime-wide change a shard must see
	loops         sync.WaitGroup // running shard loops
	threads       sync.WaitGroup // shard threads, until their backend is closed
	done          chan struct{}

	mu       sync.Mutex // guards err, and Notify against backends closing
	err      error
	closed   []bool // closed[i]: shard i's backend is closed
	stopOnce sync.Once
}

// Start validates options, opens every shard's backend on its pinned
// thread, and starts the loops.
func Start(options Options) (*Runtime, error) {
	rt, err := newRuntime(options)
	if err != nil {
		return nil, err
	}
	newBackend, name, err := chooseBackend(options.Backend, rt.logger)
	if err != nil {
		return nil, err
	}
	rt.backendName = name
	listener := -1
	if options.Listen != "" {
		if listener, rt.addr, err = listenTCP(options.Listen); err != nil {
			return nil, err
		}
	}
	peerListener := -1
	if options.PeerListen != "" {
		if peerListener, rt.peerAddr, err = listenTCP(options.PeerListen); err != nil {
			closeListener(listener)
			return nil, err
		}
	}
	rt.makeShards(listener)
	rt.shards[len(rt.shards)-1].peerListener = peerListener
	addShardProcs(len(rt.shards))
	if err := rt.startThreads(newBackend); err != nil {
		removeShardProcs(len(rt.shards))
		closeListener(listener)
		closeListener(peerListener)
		return nil, err
	}
	go func() {
		rt.threads.Wait()
		removeShardProcs(len(rt.shards))
		close(rt.done)
	}()
	return rt, nil
}

func newRuntime(options Options) (*Runtime, error) {
	if options.NewHandler == nil && options.Listen != "" {
		return nil, errors.New("shard: Options.NewHandler is required with a listener")
	}
	if options.NewPeerHandler == nil && options.PeerListen != "" {
		return nil, errors.New("shard: Options.NewPeerHandler is required with a peer listener")
	}
	allowed, err := AllowedCPUs()
	if err != nil {
		return nil, err
	}
	if len(options.CPUs) == 0 {
		options.CPUs = allowed
	}
	if err := checkCPUs(options.CPUs, allowed); err != nil {
		return nil, err
	}
	if len(options.CPUs) > shardCountMax {
		return nil, fmt.Errorf("%w: %d CPUs, at most %d shards", ErrCPUList, len(options.CPUs), shardCountMax)
	}
	if options.Spin < 0 || options.Spin > spinMax {
		return nil, fmt.Errorf("shard: Options.Spin %v outside 0..%v", options.Spin, spinMax)
	}
	logger := options.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &Runtime{options: options, logger: logger, done: make(chan struct{})}, nil
}

func (rt *Runtime) makeShards(listener int) {
	count := len(rt.options.CPUs)
	rt.closed = make([]bool, count)
	rt.shards = make([]*Shard, count)
	for id, cpu := range rt.options.CPUs {
		rt.shards[id] = &Shard{
			id: id, cpu: cpu, runtime: rt, logger: rt.logger, listener: -1, peerListener: -1,
			timers:      newTimers(),
			inbox:       make([]*Queue[envelope], count),
			outbox:      make([]*Queue[envelope], count),
			completions: make([]Completion, completionsPerTurnMax),
		}
	}
	rt.shards[0].listener = listener
	for from := range count {
		for to := range count {
			if from != to {
				queue := NewQueue[envelope](queueSlotCount)
				rt.shards[from].outbox[to] = queue
				rt.shards[to].inbox[from] = queue
			}
		}
	}
}

// startThreads starts one pinned thread per shard and waits until every
// backend is open (peers must exist before anyone can wake them).
func (rt *Runtime) startThreads(newBackend newBackendFunc) error {
	opened := make(chan error, len(rt.shards))
	begin := make(chan bool)
	rt.threads.Add(len(rt.shards))
	rt.loops.Add(len(rt.shards))
	for _, sh := range rt.shards {
		go sh.main(newBackend, opened, begin)
	}
	var first error
	for range rt.shards {
		if err := <-opened; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		close(begin) // a closed channel without a true value aborts
		rt.threads.Wait()
		return first
	}
	for range rt.shards {
		begin <- true
	}
	return nil
}

// main is a shard thread's life: pin, open the backend, run the loop,
// wait for every peer's loop to end (a peer may still wake this backend),
// close the backend. The goroutine never unlocks its thread, so the
// runtime discards the pinned thread when it returns.
func (sh *Shard) main(newBackend newBackendFunc, opened chan<- error, begin <-chan bool) {
	rt := sh.runtime
	defer rt.threads.Done()
	var err error
	if rt.options.Unpinned {
		runtime.LockOSThread()
	} else {
		err = pinThread(sh.cpu)
	}
	if err == nil {
		sh.backend, err = newBackend()
	}
	if uring, ok := sh.backend.(*uringBackend); ok && err == nil {
		uring.attach(&sh.stats, rt.logger)
	}
	opened <- err
	if ok := <-begin; !ok {
		rt.loops.Done()
		if sh.backend != nil {
			_ = sh.backend.Close() // aborted start: the open error is the one reported
		}
		return
	}
	sh.handler = nil
	if rt.options.NewHandler != nil {
		sh.handler = rt.options.NewHandler(sh)
	}
	if rt.options.NewPeerHandler != nil {
		sh.peerHandler = rt.options.NewPeerHandler(sh)
	}
	if rt.options.OnStart != nil {
		rt.options.OnStart(sh)
	}
	sh.armTrim()
	if sh.listener >= 0 {
		sh.armAccept()
	}
	if sh.peerListener >= 0 {
		sh.armPeerAccept()
	}
	sh.run()
	rt.loops.Done()
	rt.loops.Wait()
	rt.mu.Lock()
	rt.closed[sh.id] = true
	rt.mu.Unlock()
	if err := sh.backend.Close(); err != nil {
		sh.logger.Warn("shard: close backend", "shard", sh.id, "err", err.Error())
	}
}

// Shards returns the shards, indexed by ID.
func (rt *Runtime) Shards() []*Shard { return rt.shards }

// Addr returns the listener's address, or nil without a listener.
func (rt *Runtime) Addr() net.Addr { return rt.addr }

// PeerAddr returns the peer listener's address, or nil without one.
func (rt *Runtime) PeerAddr() net.Addr { return rt.peerAddr }

// BackendName returns the backend every shard runs: "io_uring" or "epoll".
func (rt *Runtime) BackendName() string { return rt.backendName }

// Done is closed once every shard thread has ended.
func (rt *Runtime) Done() <-chan struct{} { return rt.done }

// Err returns the error that stopped the runtime, if one did.
func (rt *Runtime) Err() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.err
}

// Shutdown stops accepting, lets every connection answer and send what it
// has in flight, runs OnStop on each shard, and closes everything. When
// ctx ends first, the remaining connections are closed at once and
// Shutdown returns ctx's error after the shards have stopped.
func (rt *Runtime) Shutdown(ctx context.Context) error {
	rt.requestStop()
	select {
	case <-rt.done:
		return rt.Err()
	case <-ctx.Done():
	}
	rt.forced.Store(true)
	rt.notifyAll()
	<-rt.done
	return ctx.Err()
}

func (rt *Runtime) requestStop() {
	rt.stopOnce.Do(func() {
		rt.stopRequested.Store(true)
		rt.notifyAll()
	})
}

// notifyAll makes every shard take another turn: it bumps the epoch (a
// spinning or about-to-sleep shard sees it) and wakes every shard whose
// backend is still open (a sleeping one).
func (rt *Runtime) notifyAll() {
	rt.epoch.Add(1)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for id, sh := range rt.shards {
		if !rt.closed[id] && sh.backend != nil {
			if err := sh.backend.Notify(); err != nil {
				rt.logger.Warn("shard: wake", "shard", id, "err", err.Error())
			}
		}
	}
}

// failWith records the first fatal error and stops the runtime.
func (rt *Runtime) failWith(err error) {
	rt.mu.Lock()
	if rt.err == nil {
		rt.err = err
	}
	rt.mu.Unlock()
	rt.forced.Store(true)
	rt.stopRequested.Store(true)
	rt.notifyAll()
}

// leastLoaded returns the shard owning the fewest connections, the lowest
// ID among equals.
func (rt *Runtime) leastLoaded() int {
	best, bestCount := 0, rt.shards[0].connCount.Load()
	for id, sh := range rt.shards[1:] {
		if count := sh.connCount.Load(); count < bestCount {
			best, bestCount = id+1, count
		}
	}
	return best
}
