package shard

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
)

// Data is the partition data plane of one runtime: every shard owns the
// partitions OwnerOf assigns it and runs every op on them; ops start on
// any shard (the connection's) and complete back there. See data_doc.go.
type Data struct {
	options DataOptions
	logger  *slog.Logger
	budget  *engine.CacheBudget // nil: no cache
	shards  []*DataShard        // by shard ID, set in OnStart
	opening atomic.Int64        // partitions still recovering, all shards
	// cluster, when set, replicates the partitions' writes (ClusterInstall).
	cluster *Cluster
	fatal   atomic.Pointer[error]
}

// DataShard is one shard's part of the data plane: its partitions, its
// op pool and its held messages. Its methods run on its shard's thread.
type DataShard struct {
	data    *Data
	shard   *Shard
	storage *Storage
	cache   *engine.Cache
	// pinBlocked and loanBlocked are the cache's PinBlocked and
	// LoanBlocked counts the tick last acted on.
	pinBlocked, loanBlocked uint64
	// drainTimer copies the cache's held journals a slice per loop turn
	// while it has some (0: none waiting).
	drainTimer TimerID
	drainFn    func(time.Time)

	partitions map[PartitionKey]*dataPartition
	free       []*DataOp
	live       int // ops taken with Get and not yet Put

	pending      [][]Message // by peer: messages a full queue refused, in order
	pendingCount int
	retryTimer   TimerID // fires every turn while something waits
	retryFn      func(time.Time)
	// tickList holds the partitions the tick must visit (data_tick.go).
	tickList    []*dataPartition
	parked      []*dataPartition // partitions holding ops to retry
	parkedSpare []*dataPartition // the other half of parked's double buffer
	stopping    bool
	heldTotal   uint64 // messages ever held for a full queue (tests, metrics)
	// streamSerial names the streamed appends opened on this shard
	// (data_stream.go): unique for the shard's life, unlike an engine
	// stream id, which a partition deleted and created again reuses.
	streamSerial uint64

	clusterFailedFn func(req *ClusterRequest, err error)
}

// dataOpState is the data plane's part of a DataOp.
type dataOpState struct {
	kind   DataKind
	origin *DataShard // started it; Done runs there
	owner  *DataShard // runs it
	inUse  bool

	appendOp      engine.AppendOp
	pollOp        engine.PollOp
	offsetOp      engine.OffsetOp
	maintenanceOp engine.MaintenanceOp
	syncDone      func(error)
	fanPending    int // topic ops: shares not yet done (origin only)
	// clusterRequest proposes a write to a clustered partition's group.
	clusterRequest ClusterRequest
}

// NewData validates options and returns a data plane to install in a
// runtime's Options (Install).
func NewData(options DataOptions) (*Data, error) {
	if options.Directory == "" {
		return nil, fmt.Errorf("shard: data directory is empty")
	}
	if options.TickInterval == 0 {
		options.TickInterval = dataTickIntervalDefault
	}
	if options.MaintenanceInterval == 0 {
		options.MaintenanceInterval = dataMaintenanceIntervalDefault
	}
	if options.TickInterval < 0 || options.MaintenanceInterval < 0 {
		return nil, fmt.Errorf("shard: data tick and maintenance intervals must be positive")
	}
	if options.CacheBytes == 0 {
		options.CacheBytes = engine.CacheBytesDefault
	}
	if options.Now == nil {
		options.Now = time.Now
	}
	if options.Logger == nil {
		options.Logger = slog.Default()
	}
	for _, spec := range options.Partitions {
		if !spec.Key.Valid() {
			return nil, fmt.Errorf("shard: partition %v outside the namespace", spec.Key)
		}
	}
	if err := options.deriveOpenFiles(); err != nil {
		return nil, err
	}
	d := &Data{options: options, logger: options.Logger, shards: make([]*DataShard, shardCountMax)}
	if options.CacheBytes > 0 {
		d.budget = engine.NewCacheBudget(int64(options.CacheBytes))
	}
	return d, nil
}

// Install chains the data plane into options: OnStart opens the shard's
// partitions before the caller's OnStart runs, OnMessage takes the data
// plane's messages and passes the rest on, OnStop closes the partitions
// after the caller's OnStop.
func (d *Data) Install(options Options) Options {
	onStart, onMessage, onStop := options.OnStart, options.OnMessage, options.OnStop
	options.OnStart = func(sh *Shard) {
		d.OnStart(sh)
		if onStart != nil {
			onStart(sh)
		}
	}
	options.OnMessage = func(sh *Shard, from int, message Message) {
		if !d.OnMessage(sh, from, message) && onMessage != nil {
			onMessage(sh, from, message)
		}
	}
	options.OnStop = func(sh *Shard) {
		if onStop != nil {
			onStop(sh)
		}
		d.OnStop(sh)
	}
	return options
}

// Local returns sh's part of the data plane; call it on sh's thread, after
// the data plane's OnStart ran there.
func (d *Data) Local(sh *Shard) *DataShard {
	ds := d.shards[sh.ID()]
	invariant.Assert(ds != nil && ds.shard == sh, "data plane started on the shard")
	return ds
}

// Opening returns how many partitions are still recovering; any thread.
func (d *Data) Opening() int { return int(d.opening.Load()) }

// Fatal returns the fatal error (an *engine.FatalError) that stopped the
// runtime, or nil; any thread. Runtime.Err returns the same error.
func (d *Data) Fatal() error {
	if err := d.fatal.Load(); err != nil {
		return *err
	}
	return nil
}

// OnStart sets up sh's part of the data plane and starts recovering the
// partitions of DataOptions.Partitions it owns.
func (d *Data) OnStart(sh *Shard) {
	count := len(sh.runtime.shards)
	invariant.Assert(count <= shardCountMax, "shard count within the limit")
	ds := &DataShard{
		data:       d,
		shard:      sh,
		storage:    NewStorage(sh, max(d.options.OpenFilesMax/count, engine.OpenFilesMin)),
		partitions: make(map[PartitionKey]*dataPartition),
		pending:    make([][]Message, count),
	}
	if d.budget != nil {
		ds.cache = engine.NewCache(d.budget, count)
		ds.cache.SetWake(ds.armDrain)
		ds.cache.PopulateAhead()
		ds.drainFn = func(time.Time) { ds.drain() }
	}
	ds.retryFn = func(time.Time) { ds.retry() }
	ds.clusterFailedFn = ds.clusterFailed
	d.shards[sh.ID()] = ds
	for _, spec := range d.options.Partitions {
		if OwnerOf(spec.Key, count) == sh.ID() {
			ds.open(spec.Key, spec.Config, nil)
		}
	}
	ds.startTimers()
}

// OnMessage runs the data plane's messages and reports whether message was
// one of them; other kinds are the caller's.
func (d *Data) OnMessage(sh *Shard, from int, message Message) bool {
	if message.Kind <= dataMessageBase || message.Kind > dataMessageLast {
		return false
	}
	ds := d.shards[sh.ID()]
	switch message.Kind {
	case dataMessageRequest:
		op := message.Data.(*DataOp)
		invariant.Assert(op.origin.shard.id == from, "a request comes from its origin")
		ds.run(op)
	case dataMessageReply:
		op := message.Data.(*DataOp)
		invariant.Assert(op.origin == ds, "a reply reaches the op's origin")
		ds.finish(op)
	case dataMessageFan:
		ds.runFan(message.Data.(*dataFan))
	case dataMessageFanDone:
		ds.fanDone(message.Data.(*dataFan))
	}
	return true
}

// Storage returns the shard's engine.Storage (the metadata store on shard
// 0 uses it too).
func (ds *DataShard) Storage() *Storage { return ds.storage }

// Shard returns the shard this part runs on.
func (ds *DataShard) Shard() *Shard { return ds.shard }

// Get returns a cleared DataOp from the shard's pool.
func (ds *DataShard) Get() *DataOp {
	invariant.Assert(ds.live < dataOpsPerShardMax, "data ops within the per-shard limit")
	ds.live++
	var op *DataOp
	if last := len(ds.free) - 1; last >= 0 {
		op = ds.free[last]
		ds.free[last] = nil
		ds.free = ds.free[:last]
	} else {
		op = newDataOp()
	}
	op.origin, op.inUse = ds, false
	return op
}

// Put returns op to the pool once its Done ran (or it was never started).
func (ds *DataShard) Put(op *DataOp) {
	invariant.Assert(op.origin == ds, "an op returns to the pool it came from")
	invariant.Assert(!op.inUse, "an op returns to the pool after Done")
	ds.live--
	op.reset()
	if len(ds.free) < dataOpsPoolMax {
		ds.free = append(ds.free, op)
	}
}

// newDataOp allocates an op with its engine completions bound once, so
// reusing it allocates nothing.
func newDataOp() *DataOp {
	op := &DataOp{}
	op.appendOp.Done = func(*engine.AppendOp) { op.owner.appendDone(op) }
	op.pollOp.Done = func(*engine.PollOp) { op.owner.pollDone(op) }
	op.offsetOp.Done = func(*engine.OffsetOp) { op.owner.offsetDone(op) }
	op.maintenanceOp.Done = func(*engine.MaintenanceOp) { op.owner.maintenanceDone(op) }
	op.syncDone = func(err error) { op.owner.syncDone(op, err) }
	return op
}

// reset clears what a previous use left, keeping the bound completions.
func (op *DataOp) reset() {
	appendDone, pollDone := op.appendOp.Done, op.pollOp.Done
	offsetDone, maintenanceDone := op.offsetOp.Done, op.maintenanceOp.Done
	origin, syncDone := op.origin, op.syncDone
	*op = DataOp{}
	op.appendOp.Done, op.pollOp.Done = appendDone, pollDone
	op.offsetOp.Done, op.maintenanceOp.Done = offsetDone, maintenanceDone
	op.origin, op.syncDone = origin, syncDone
}

// start routes a partition op to its owner.
func (ds *DataShard) start(op *DataOp, kind DataKind) {
	invariant.Assert(op.origin == ds, "an op starts on the shard it came from")
	invariant.Assert(!op.inUse, "an op is started once until Done")
	invariant.Assert(op.Done != nil, "an op has a Done callback")
	op.kind, op.inUse, op.Err = kind, true, nil
	if ds.stopping {
		op.Err = ErrDataStopped
		ds.finish(op)
		return
	}
	if !op.Key.Valid() {
		op.Err = ErrPartitionNotFound
		ds.finish(op)
		return
	}
	owner := OwnerOf(op.Key, len(ds.shard.runtime.shards))
	if owner == ds.shard.id {
		ds.run(op)
		return
	}
	ds.send(owner, Message{Kind: dataMessageRequest, Data: op})
}

// complete sends a finished op back to its origin (or finishes it here).
func (ds *DataShard) complete(op *DataOp) {
	if op.Stream != 0 {
		// Answered before its stream finished (streamFinish clears it):
		// the request's frame goes with the answer, so the stream must
		// not hand bytes back to it later.
		ds.StreamAbort(op.Key, op.Stream)
		op.Stream = 0
	}
	if engine.IsFatal(op.Err) {
		ds.data.fail(ds.shard, op.Err)
	}
	if op.origin == ds {
		ds.finish(op)
		return
	}
	ds.send(op.origin.shard.id, Message{Kind: dataMessageReply, Data: op})
}

// finish runs Done on the origin.
func (ds *DataShard) finish(op *DataOp) {
	invariant.Assert(op.origin == ds, "Done runs on the op's origin")
	invariant.Assert(op.inUse, "a finished op was started")
	op.inUse = false
	op.Done(op)
}

// send posts message to peer, or holds it behind earlier held ones when
// the peer's queue is full; held messages go out on the next loop turns,
// in order, and are never dropped.
func (ds *DataShard) send(peer int, message Message) {
	if len(ds.pending[peer]) == 0 {
		if err := ds.shard.Send(peer, message); err == nil {
			return
		}
	}
	invariant.Assert(ds.pendingCount < dataPendingSendsMax, "held messages within the limit")
	ds.pending[peer] = append(ds.pending[peer], message)
	ds.pendingCount++
	ds.heldTotal++
	ds.armRetry()
}

// armRetry makes retry run at every loop turn until nothing waits: a
// periodic timer whose period is shorter than any turn, set once per
// episode of waiting rather than once per turn, so a long episode
// (a producer outrunning the disk) allocates nothing per retry.
func (ds *DataShard) armRetry() {
	if ds.retryTimer != 0 {
		return
	}
	id, err := ds.shard.Every(dataRetryPeriod, ds.retryFn)
	if err != nil {
		ds.shard.fail(err) // held messages would never leave
		return
	}
	ds.retryTimer = id
}

// retry sends held messages and re-runs parked ops; with nothing left
// waiting it stops its timer.
func (ds *DataShard) retry() {
	for peer, held := range ds.pending {
		sent := 0
		for sent < len(held) && ds.shard.Send(peer, held[sent]) == nil {
			sent++
		}
		if sent > 0 {
			rest := copy(held, held[sent:])
			clear(held[rest:])
			ds.pending[peer] = held[:rest]
			ds.pendingCount -= sent
		}
	}
	ds.unparkAll()
	if ds.pendingCount == 0 && len(ds.parked) == 0 && ds.retryTimer != 0 {
		ds.shard.Stop(ds.retryTimer)
		ds.retryTimer = 0
	}
}

// fail stops the runtime after a fatal storage error: the process exits
// with its own code (cmd reads engine.IsFatal(Runtime.Err())).
func (d *Data) fail(sh *Shard, err error) {
	if d.fatal.CompareAndSwap(nil, &err) {
		d.logger.Error("shard: fatal storage error, stopping", "shard", sh.id, "err", err.Error())
	}
	sh.runtime.failWith(err)
}
