package shard

import (
	"runtime/debug"
	"time"
)

// A broker idles between bursts. Ring pools fault their pages in on first
// touch and keep them while the buffers cycle; a shard that went a whole
// idleTrimDelay without a completion gives the pages of its free buffers
// back (Backend.Trim), and once every shard idles, shard 0 also returns
// the Go heap's free pages (the scavenger alone keeps them while the heap
// goal is large), so an idle server's RSS falls back to its floor.

// armTrim starts the shard's idle check; it runs on the shard's thread.
func (sh *Shard) armTrim() {
	if _, err := sh.Every(idleTrimDelay, sh.onTrimTimer); err != nil {
		sh.fail(err) // a fresh shard has room for one timer
	}
}

// onTrimTimer trims once per idle stretch: the first tick after a period
// with completions only notes the activity, the next one without trims.
// Shard 0 then returns the Go heap's pages once every shard idles, at
// most once per heapTrimIntervalMin (a later idle tick does it when the
// last one was too recent).
func (sh *Shard) onTrimTimer(now time.Time) {
	if sh.busy {
		sh.busy = false
		sh.idle.Store(false)
		return
	}
	if !sh.idle.Load() {
		sh.idle.Store(true)
		sh.backend.Trim()
		bump(&sh.stats.trims, 1)
		sh.heapTrimDue = sh.id == 0
	}
	if sh.heapTrimDue && sh.runtime.allIdle() && now.Sub(sh.heapTrimmed) >= heapTrimIntervalMin {
		sh.heapTrimDue = false
		sh.heapTrimmed = now
		debug.FreeOSMemory()
	}
}

// allIdle reports whether every shard has trimmed since its last
// completion; any thread.
func (rt *Runtime) allIdle() bool {
	for _, sh := range rt.shards {
		if !sh.idle.Load() {
			return false
		}
	}
	return true
}
