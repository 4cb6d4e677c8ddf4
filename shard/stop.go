package shard

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// stepShutdown advances a shard through graceful shutdown, once the
// runtime asked for it:
//  1. stop accepting: cancel the accept, close the listener once it ends;
//  2. drain: every connection stops reading, answers what is in flight,
//     sends it, and closes; held handovers are closed;
//  3. when every shard has drained (peers may still be answering requests
//     this shard routed to them), take the last messages, run OnStop (the
//     flush), and leave the loop.
//
// A forced shutdown closes the remaining connections at once.
func (sh *Shard) stepShutdown() {
	rt := sh.runtime
	if !rt.stopRequested.Load() {
		return
	}
	if !sh.stopping {
		sh.stopping = true
		sh.beginStop()
	}
	if rt.forced.Load() && !sh.forced {
		sh.forced = true
		for _, conn := range sh.conns {
			if conn != nil {
				conn.close(ErrForcedClose)
			}
		}
	}
	if !sh.drained && sh.isDrained() {
		sh.drained = true
		if int(rt.drainedCount.Add(1)) == len(rt.shards) {
			rt.notifyAll()
		}
	}
	if sh.drained && int(rt.drainedCount.Load()) == len(rt.shards) {
		sh.takeMessages()
		if onStop := rt.options.OnStop; onStop != nil {
			onStop(sh)
		}
		sh.exit = true
	}
}

func (sh *Shard) beginStop() {
	if sh.accepting {
		if err := sh.backend.Cancel(sh.listener, makeToken(tokenAccept, 0, 0)); err != nil {
			sh.fail(err)
		}
	}
	sh.stopPeerAccept()
	if stopper, ok := sh.peerHandler.(shardStopper); ok {
		stopper.onStopping(sh)
	}
	for _, entry := range sh.handoff {
		target, fd := entry>>32, entry&(1<<32-1)
		_ = unix.Close(fd) // never adopted: closing is the whole goodbye
		sh.runtime.shards[target].connCount.Add(-1)
	}
	sh.handoff = sh.handoff[:0]
	for _, conn := range sh.conns {
		if conn != nil {
			conn.drain()
		}
	}
}

func (sh *Shard) isDrained() bool {
	if sh.accepting || sh.peerAccepting || len(sh.handoff) > 0 || sh.movesOut.Load() > 0 {
		return false
	}
	closeListener(sh.peerListener) // no op holds it any more
	sh.peerListener = -1
	if sh.listener >= 0 {
		_ = unix.Close(sh.listener) // no op holds it any more; nothing to report to a peer
		sh.listener = -1
	}
	for _, conn := range sh.conns {
		if conn != nil {
			return false
		}
	}
	return len(sh.fileOps) == len(sh.fileOpsFree)
}

// FileOp is one positioned read, positioned write or fsync through the
// shard's backend. The caller owns the struct and its buffer until Done
// runs on the shard's thread; Result is the byte count, Err the failure.
type FileOp struct {
	Done   func(op *FileOp)
	Result int
	Err    error
	buf    []byte // keeps the buffer reachable while the kernel holds it
	slot   uint32
	gen    uint32
	// kind and started feed the shard's file latency table.
	kind    FileOpKind
	started time.Time
}

// ReadAt reads into a prefix of buf from fd at position.
func (sh *Shard) ReadAt(fd int, buf []byte, position int64, op *FileOp) error {
	op.kind = FileRead
	token, err := sh.startFileOp(op, buf)
	if err != nil {
		return err
	}
	return sh.backend.Read(fd, buf, position, token)
}

// WriteAt writes a prefix of buf to fd at position. With inPlace, buf
// lies outside the Go heap and the caller keeps it unchanged and mapped
// until op completes, so the kernel reads it without a bounce copy
// (Backend.WriteInPlace).
func (sh *Shard) WriteAt(fd int, buf []byte, position int64, inPlace bool, op *FileOp) error {
	op.kind = FileWrite
	token, err := sh.startFileOp(op, buf)
	if err != nil {
		return err
	}
	if inPlace {
		return sh.backend.WriteInPlace(fd, buf, position, token)
	}
	return sh.backend.Write(fd, buf, position, token)
}

// Fdatasync flushes fd's data and the metadata needed to read it back
// (fdatasync(2): enough for segment, index and offset files, whose names
// are made durable by a directory sync). A failed fdatasync must not be
// retried: the kernel may have dropped the pages it could not write.
func (sh *Shard) Fdatasync(fd int, op *FileOp) error {
	op.kind = FileFsync
	token, err := sh.startFileOp(op, nil)
	if err != nil {
		return err
	}
	return sh.backend.Fdatasync(fd, token)
}

// Fallocate allocates fd's space up to size bytes, growing a shorter
// file to size (engine.OpAllocate).
func (sh *Shard) Fallocate(fd int, size int64, op *FileOp) error {
	op.kind = FileAllocate
	token, err := sh.startFileOp(op, nil)
	if err != nil {
		return err
	}
	return sh.backend.Fallocate(fd, size, token)
}

func (sh *Shard) startFileOp(op *FileOp, buf []byte) (uint64, error) {
	invariant.Assert(op.Done != nil, "file op has a Done callback")
	if len(sh.fileOpsFree) == 0 && len(sh.fileOps) >= fileOpsInFlightMax {
		return 0, ErrFileOpsFull
	}
	op.buf, op.Result, op.Err = buf, 0, nil
	op.started = time.Now()
	if last := len(sh.fileOpsFree) - 1; last >= 0 {
		op.slot = sh.fileOpsFree[last]
		sh.fileOpsFree = sh.fileOpsFree[:last]
		sh.fileOps[op.slot] = op
	} else {
		op.slot = uint32(len(sh.fileOps))
		sh.fileOps = append(sh.fileOps, op)
	}
	op.gen++
	return makeToken(tokenFile, op.gen, op.slot), nil
}

func (sh *Shard) onFileDone(slot uint32, completion Completion) {
	invariant.Assert(int(slot) < len(sh.fileOps), "file completion slot exists")
	op := sh.fileOps[slot]
	invariant.Assert(op != nil, "file completion's op is in flight")
	sh.fileOps[slot] = nil
	sh.fileOpsFree = append(sh.fileOpsFree, slot)
	op.buf = nil
	sh.fileLatency.observe(op.kind, time.Since(op.started))
	op.Result = completion.Result
	if completion.Errno != 0 {
		op.Err = completion.Errno
	}
	op.Done(op)
}
