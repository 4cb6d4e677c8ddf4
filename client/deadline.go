package client

import "time"

// A connection bounds the wait for each reply with one watchdog timer
// instead of a timer per call: replies come back in request order, so
// only the oldest pending call's deadline can be the next to pass. The
// watchdog sleeps until that deadline; when it fires and the oldest call
// is still waiting, the connection fails with errTimeout (the stream is
// in an unknown state, §5.6), which fails every pending call.

// watchReplies starts bounding replies on the connection to timeout.
func (c *conn) watchReplies(timeout time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.replyTimeout = timeout
	c.watchdog = time.AfterFunc(timeout, c.onWatchdog)
	c.watchdog.Stop()
}

// watchLocked stamps pending's deadline and wakes the watchdog when it
// was asleep with nothing to watch. The caller holds mu and has just
// queued pending.
func (c *conn) watchLocked(pending *call) {
	if c.watchdog == nil {
		return
	}
	pending.deadline = time.Now().Add(c.replyTimeout)
	if !c.watching {
		c.watching = true
		c.watchdog.Reset(c.replyTimeout)
	}
}

// onWatchdog runs on the timer's goroutine: it fails the connection when
// the oldest pending call's deadline has passed, else sleeps until it.
func (c *conn) onWatchdog() {
	c.mu.Lock()
	if c.broken != nil || len(c.pending) == 0 {
		c.watching = false
		c.mu.Unlock()
		return
	}
	if wait := time.Until(c.pending[0].deadline); wait > 0 {
		c.watchdog.Reset(wait)
		c.mu.Unlock()
		return
	}
	c.watching = false
	c.mu.Unlock()
	c.fail(errTimeout)
}
