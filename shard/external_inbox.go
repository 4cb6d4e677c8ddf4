package shard

import (
	"errors"
	"sync"
	"sync/atomic"
)

// The external inbox lets goroutines outside the runtime (the TLS
// terminator, the HTTP API) hand a shard a connected stream socket, such
// as one end of a socketpair, to serve as one of its connections: the
// same front, sessions and ordering as an accepted TCP client, with no
// lock on any shard state. Many producers, one consumer: producers take
// the inbox's own mutex; the shard swaps the slice out once per turn.

// externalInboxMax bounds sockets waiting in one shard's external inbox;
// past it Adopt refuses with ErrExternalInboxFull rather than queue
// without bound or drop.
const externalInboxMax = 1024

// ErrExternalInboxFull reports a shard whose external inbox holds
// externalInboxMax sockets; the caller still owns the fd.
var ErrExternalInboxFull = errors.New("shard: external inbox full")

// ErrRuntimeStopped reports an Adopt after the runtime stopped.
var ErrRuntimeStopped = errors.New("shard: runtime stopped")

type externalInbox struct {
	mu      sync.Mutex
	fds     []externalConn
	spare   []externalConn // the slice the shard drained last, reused
	pending atomic.Bool    // fds is not empty; read before sleeping
}

// externalConn is one socket waiting in an external inbox: a client
// connection (Adopt), or a peer connection (AdoptPeer) with what its
// handler finds attached.
type externalConn struct {
	fd     int
	peer   bool
	attach any
}

// Adopt hands fd, a connected stream socket, to the least-loaded shard,
// which serves it as a client connection; any goroutine may call it. On
// success the runtime owns fd (it closes it when the connection ends);
// on error the caller still does.
func (rt *Runtime) Adopt(fd int) error {
	return rt.adoptExternal(rt.leastLoaded(), externalConn{fd: fd})
}

// AdoptPeer hands fd, a connected stream socket, to shard, which serves
// it with its peer Handler (Options.NewPeerHandler) and attach attached;
// any goroutine may call it. Ownership of fd is as with Adopt.
func (rt *Runtime) AdoptPeer(shard, fd int, attach any) error {
	if rt.options.NewPeerHandler == nil {
		return errors.New("shard: AdoptPeer without Options.NewPeerHandler")
	}
	if shard < 0 || shard >= len(rt.shards) {
		return errors.New("shard: AdoptPeer target is not a shard")
	}
	return rt.adoptExternal(shard, externalConn{fd: fd, peer: true, attach: attach})
}

func (rt *Runtime) adoptExternal(shard int, item externalConn) error {
	select {
	case <-rt.done:
		return ErrRuntimeStopped
	default:
	}
	target := rt.shards[shard]
	inbox := &target.external
	inbox.mu.Lock()
	if len(inbox.fds) >= externalInboxMax {
		inbox.mu.Unlock()
		return ErrExternalInboxFull
	}
	inbox.fds = append(inbox.fds, item)
	target.connCount.Add(1)
	inbox.pending.Store(true)
	inbox.mu.Unlock()
	// Pairs with the shard's sleep as Shard.post does: it sets sleeping,
	// then reads pending; we set pending, then read sleeping.
	if target.sleeping.Load() && target.sleeping.CompareAndSwap(true, false) {
		if err := target.backend.Notify(); err != nil {
			target.runtime.failWith(err)
		}
	}
	return nil
}

// takeExternal adopts the sockets other goroutines handed this shard.
func (sh *Shard) takeExternal() int {
	inbox := &sh.external
	if !inbox.pending.Load() {
		return 0
	}
	inbox.mu.Lock()
	fds := inbox.fds
	inbox.fds = inbox.spare[:0]
	inbox.pending.Store(false)
	inbox.mu.Unlock()
	for i, item := range fds {
		// Counted in connCount by adoptExternal; adopt uncounts a refused one.
		if item.peer {
			sh.adoptPeer(item.fd, item.attach)
		} else {
			sh.adopt(item.fd)
		}
		fds[i] = externalConn{} // drop attach for the GC
	}
	inbox.mu.Lock()
	inbox.spare = fds[:0]
	inbox.mu.Unlock()
	return len(fds)
}
