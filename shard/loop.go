package shard

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// run is the shard's event loop. Each turn: fire due timers, take peer
// messages, resume paused connections, then one Wait that submits every op
// the turn started and reaps up to completionsPerTurnMax completions.
func (sh *Shard) run() {
	for !sh.exit {
		sh.epochSeen = sh.runtime.epoch.Load()
		sh.clock = time.Now()
		work := sh.timers.fire(sh.clock)
		work += sh.takeMessages()
		work += sh.takeExternal()
		work += sh.runResumes()
		work += sh.retryHandoff()
		sh.stepShutdown()
		if sh.exit {
			return
		}
		count := sh.wait(sh.waitTimeout(work))
		for i := range count {
			sh.dispatch(&sh.completions[i])
			sh.completions[i] = Completion{}
		}
	}
}

// waitTimeout is how long the turn's Wait may block: not at all when work
// is queued outside the backend, else until the next timer.
func (sh *Shard) waitTimeout(work int) time.Duration {
	if len(sh.resume) > 0 || len(sh.local) > 0 {
		return 0
	}
	timeout := time.Duration(-1)
	if len(sh.handoff) > 0 {
		timeout = time.Millisecond
	}
	if deadline, ok := sh.timers.next(); ok {
		// A turn that did nothing before its Wait still has the clock
		// it read at its start.
		now := sh.clock
		if work > 0 {
			now = time.Now()
		}
		until := max(deadline.Sub(now), 0)
		if timeout < 0 || until < timeout {
			timeout = until
		}
	}
	return timeout
}

// wait reaps completions, spinning first (when configured and recently
// fruitful) and then blocking; peers wake a blocked shard when they queue
// a message for it.
func (sh *Shard) wait(timeout time.Duration) int {
	count := 0
	if timeout != 0 && sh.runtime.options.Spin > 0 && sh.spinIdle < spinIdleTurnsMax {
		count = sh.spin()
	}
	if count == 0 {
		if timeout != 0 {
			sh.sleeping.Store(true)
			if sh.inboxPending() || sh.runtime.epoch.Load() != sh.epochSeen {
				timeout = 0
			}
		}
		var err error
		count, err = sh.backend.Wait(sh.completions, timeout)
		sh.sleeping.Store(false)
		if err != nil {
			sh.fail(err)
			return 0
		}
	}
	if count > 0 {
		sh.spinIdle = 0
		sh.busy = true
		sh.clock = time.Now()
	}
	return count
}

// now is the turn's clock (loop.go), or the time when no turn ran yet.
func (sh *Shard) now() time.Time {
	if sh.clock.IsZero() {
		return time.Now()
	}
	return sh.clock
}

// spin polls the backend without blocking for up to Options.Spin; a spin
// that finds nothing counts toward turning spinning off while idle.
func (sh *Shard) spin() int {
	deadline := time.Now().Add(sh.runtime.options.Spin)
	for {
		count, err := sh.backend.Wait(sh.completions, 0)
		if err != nil {
			sh.fail(err)
			return 0
		}
		if count > 0 {
			return count
		}
		if sh.inboxPending() || sh.runtime.epoch.Load() != sh.epochSeen {
			return 0
		}
		if time.Now().After(deadline) {
			sh.spinIdle++
			return 0
		}
	}
}

func (sh *Shard) runResumes() int {
	resume := sh.resume
	sh.resume = sh.resume[len(resume):]
	for i, conn := range resume {
		conn.resume()
		resume[i] = nil
	}
	if len(sh.resume) == 0 {
		sh.resume = resume[:0]
	}
	return len(resume)
}

func (sh *Shard) dispatch(completion *Completion) {
	kind, gen, slot := splitToken(completion.Token)
	switch kind {
	case tokenRecv, tokenRecvInto, tokenSend:
		invariant.Assert(int(slot) < len(sh.conns), "completion slot is a connection slot")
		conn := sh.conns[slot]
		invariant.Assert(conn != nil, "completion's connection is live")
		invariant.Assert(conn.gen == gen, "completion belongs to the slot's connection")
		switch kind {
		case tokenRecv:
			conn.onRecv(*completion)
		case tokenRecvInto:
			conn.onRecvInto(*completion)
		default:
			conn.onSend(*completion)
		}
	case tokenAccept:
		if slot == peerAcceptSlot {
			sh.onPeerAccept(*completion)
			return
		}
		sh.onAccept(*completion)
	case tokenFile:
		sh.onFileDone(slot, *completion)
	default:
		invariant.Assert(false, "completion token has a known kind")
	}
}

// onAccept hands each accepted connection to the shard owning the fewest:
// SO_REUSEPORT's hash does not balance a handful of connections.
func (sh *Shard) onAccept(completion Completion) {
	if !completion.More {
		sh.accepting = false
	}
	if completion.Errno != 0 {
		if completion.Errno != unix.ECANCELED {
			// EMFILE and friends persist for a while: retry after a pause
			// instead of spinning on the same error.
			sh.logger.Warn("shard: accept failed, retrying", "err", completion.Errno.Error(), "after", acceptRetryDelay.String())
		}
		if !sh.stopping && !sh.accepting {
			_, err := sh.After(acceptRetryDelay, func(time.Time) {
				if !sh.stopping && !sh.accepting {
					sh.armAccept()
				}
			})
			if err != nil {
				sh.fail(err)
			}
		}
		return
	}
	fd := completion.Result
	invariant.Assert(fd >= 0, "accepted fd is valid")
	if !completion.More && !sh.stopping {
		sh.armAccept()
	}
	target := sh.runtime.leastLoaded()
	sh.runtime.shards[target].connCount.Add(1)
	if target == sh.id || sh.post(target, envelope{fd: int32(fd)}) != nil {
		sh.handoffOrAdopt(target, fd)
	}
}

func (sh *Shard) handoffOrAdopt(target, fd int) {
	if target == sh.id {
		sh.adopt(fd)
		return
	}
	if len(sh.handoff) < connectionsHandoffMax {
		sh.handoff = append(sh.handoff, target<<32|fd)
		return
	}
	sh.runtime.shards[target].connCount.Add(-1)
	sh.connCount.Add(1)
	sh.adopt(fd) // every queue full: serve it here rather than refuse it
}

// retryHandoff offers held fds to their target shards again.
func (sh *Shard) retryHandoff() int {
	kept := 0
	for _, entry := range sh.handoff {
		target, fd := entry>>32, entry&(1<<32-1)
		if sh.post(target, envelope{fd: int32(fd)}) != nil {
			sh.handoff[kept] = entry
			kept++
		}
	}
	moved := len(sh.handoff) - kept
	sh.handoff = sh.handoff[:kept]
	return moved
}

func (sh *Shard) armAccept() {
	invariant.Assert(sh.listener >= 0, "accepting shard has a listener")
	if err := sh.backend.Accept(sh.listener, makeToken(tokenAccept, 0, 0)); err != nil {
		sh.fail(err)
		return
	}
	sh.accepting = true
}
