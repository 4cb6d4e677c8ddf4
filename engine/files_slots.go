package engine

import (
	"fmt"

	"github.com/whippetio/whippet/internal/invariant"
)

// A handle is File(generation<<fileIndexBits | index): index 0 is never
// used, so no handle is 0, and a stale handle of a reused slot is told
// from the live one by its generation.
func fileHandle(index int32, generation uint8) File {
	return File(int32(generation)<<fileIndexBits | index)
}

// lookup returns the slot of a live handle.
func (t *FileTable) lookup(file File) (int32, bool) {
	index := int32(file) & (1<<fileIndexBits - 1)
	generation := uint8(int32(file) >> fileIndexBits)
	if file <= 0 || index == 0 || int(index) >= len(t.slots) {
		return 0, false
	}
	s := &t.slots[index]
	return index, s.state != slotFree && s.generation == generation
}

// allocate makes a shut slot for a new handle on path.
func (t *FileTable) allocate(path string, flags OpenFlags) (int32, error) {
	var slot int32
	if last := len(t.free) - 1; last >= 0 {
		slot = t.free[last]
		t.free = t.free[:last]
	} else {
		if len(t.slots) == fileHandlesMax {
			return 0, fmt.Errorf("%w: open %s", ErrTooManyHandles, path)
		}
		t.slots = append(t.slots, fileSlot{})
		slot = int32(len(t.slots) - 1)
	}
	s := &t.slots[slot]
	invariant.Assert(s.state == slotFree, "an allocated slot was free")
	generation := s.generation
	*s = fileSlot{path: path, flags: flags, state: slotShut, generation: generation}
	s.samePath = t.paths[path]
	t.paths[path] = slot
	return slot, nil
}

// release frees the slot of a closed handle.
func (t *FileTable) release(slot int32) {
	s := &t.slots[slot]
	invariant.Assert(s.state == slotShut, "a released slot has no inner file")
	invariant.Assert(s.waitHead == nil && s.pins == 0, "a released slot has no ops")
	if !s.detached {
		t.unlinkPath(slot)
	}
	generation := (s.generation + 1) & (1<<fileGenerationBits - 1)
	*s = fileSlot{generation: generation}
	t.free = append(t.free, slot)
}

func (t *FileTable) unlinkPath(slot int32) {
	s := &t.slots[slot]
	at := t.paths[s.path]
	if at == slot {
		if s.samePath == 0 {
			delete(t.paths, s.path)
		} else {
			t.paths[s.path] = s.samePath
		}
		s.samePath = 0
		return
	}
	for steps := 0; at != 0 && steps < fileHandlesMax; steps++ {
		if t.slots[at].samePath == slot {
			t.slots[at].samePath = s.samePath
			s.samePath = 0
			return
		}
		at = t.slots[at].samePath
	}
	invariant.Assert(false, "a live slot is linked under its path")
}

func (t *FileTable) enqueue(slot int32, w *fileOp) {
	s := &t.slots[slot]
	if s.waitTail == nil {
		s.waitHead = w
	} else {
		s.waitTail.next = w
	}
	s.waitTail = w
	t.waiting++
}

func (t *FileTable) dequeue(slot int32) *fileOp {
	s := &t.slots[slot]
	w := s.waitHead
	s.waitHead = w.next
	if s.waitHead == nil {
		s.waitTail = nil
	}
	w.next = nil
	t.waiting--
	return w
}

// wantDescriptor opens a shut slot with waiters now, or queues it for the
// next descriptor and makes room.
func (t *FileTable) wantDescriptor(slot int32) {
	s := &t.slots[slot]
	if s.state != slotShut || s.waitHead == nil || s.starved {
		return
	}
	if t.held < t.options.OpenMax && !t.exhausted && t.starvedNext == len(t.starved) {
		t.startOpen(slot)
		return
	}
	s.starved = true
	t.starved = append(t.starved, slot)
	t.stats.Waits++
	t.makeRoom()
}

// makeRoom evicts idle files until the evictions in flight cover the
// starved slots.
func (t *FileTable) makeRoom() {
	for t.roomShort() && t.lruTail != 0 {
		t.evict(t.lruTail)
	}
}

// serveStarved opens starved slots while descriptors are free.
func (t *FileTable) serveStarved() {
	for t.starvedNext < len(t.starved) && t.held < t.options.OpenMax && !t.exhausted {
		slot := t.starved[t.starvedNext]
		t.starvedNext++
		t.slots[slot].starved = false
		t.startOpen(slot)
	}
	if t.starvedNext == len(t.starved) {
		t.starved, t.starvedNext = t.starved[:0], 0
	}
	t.makeRoom()
}

// startOpen opens a shut slot's file; a slot nobody waits for any more
// (its waiters failed) stays shut.
func (t *FileTable) startOpen(slot int32) {
	s := &t.slots[slot]
	if s.state != slotShut || s.waitHead == nil {
		return
	}
	invariant.Assert(t.held < t.options.OpenMax, "an open fits the budget")
	t.held++
	t.stats.OpenPeak = max(t.stats.OpenPeak, t.held)
	s.state = slotOpening
	w := t.get(nil, slot)
	w.inner.Code, w.inner.Path, w.inner.Flags = OpOpen, s.path, s.flags
	w.inner.Buffer, w.inner.Position, w.inner.Names, w.inner.Target = nil, 0, nil, ""
	if s.opened {
		t.stats.Reopens++
	}
	t.inner.Submit(&w.inner)
}

func (t *FileTable) openDone(w *fileOp) {
	slot := w.slot
	s := &t.slots[slot]
	err := w.inner.Err
	inner := File(w.inner.Result)
	t.put(w)
	invariant.Assert(s.state == slotOpening, "an open completes an opening slot")
	if err == nil {
		s.state, s.inner = slotOpen, inner
		s.opened = true
		s.flags &^= OpenCreate // a reopen must not bring back a removed file
		t.runWaiters(slot)
		return
	}
	t.held--
	s.state = slotShut
	if isOutOfDescriptors(err) {
		t.stats.Exhausted++
		if t.held > 0 {
			// Connections took the process's descriptors: close one of
			// ours and retry when it is closed.
			t.exhausted = true
			t.warnOnce(&t.warnedExhausted, "the process is out of file descriptors below the budget; closing idle files",
				"budget", t.options.OpenMax, "open", t.held)
			s.starved = true
			t.starved = append(t.starved, slot)
			t.makeRoom()
			return
		}
		err = fmt.Errorf("%w: no file of the table left to close (budget %d): %w", ErrTooManyOpenFiles,
			t.options.OpenMax, err)
	}
	t.failWaiters(slot, err)
	t.serveStarved()
}

// failWaiters fails every op waiting on a shut slot; a handle whose first
// open failed is released.
func (t *FileTable) failWaiters(slot int32, err error) {
	for t.slots[slot].waitHead != nil {
		w := t.dequeue(slot)
		outer := w.outer
		t.put(w)
		wrapped := err
		if outer.Code != OpOpen {
			wrapped = fmt.Errorf("engine: reopen %s: %w", t.slots[slot].path, err)
		}
		t.complete(outer, wrapped)
	}
	if !t.slots[slot].opened {
		t.release(slot)
	}
}

// runWaiters starts the ops queued on an open slot in order: an open
// answers with the handle, a close waits for the ops in flight.
func (t *FileTable) runWaiters(slot int32) {
	for steps := 0; steps < fileHandlesMax; steps++ {
		s := &t.slots[slot]
		if s.state != slotOpen || s.waitHead == nil {
			break
		}
		switch s.waitHead.outer.Code {
		case OpOpen:
			w := t.dequeue(slot)
			outer := w.outer
			t.put(w)
			outer.Result = int64(fileHandle(slot, s.generation))
			t.complete(outer, nil)
		case OpClose:
			if s.pins > 0 {
				return
			}
			t.startClose(slot, t.dequeue(slot))
			return
		default:
			w := t.dequeue(slot)
			t.pin(slot)
			w.inner.File = s.inner
			t.inner.Submit(&w.inner)
		}
	}
	if s := &t.slots[slot]; s.state == slotOpen && s.pins == 0 && s.waitHead == nil {
		t.idle(slot)
	}
}

func (t *FileTable) pin(slot int32) {
	s := &t.slots[slot]
	invariant.Assert(s.state == slotOpen, "ops run on an open slot")
	if s.inLRU {
		t.lruRemove(slot)
	}
	s.pins++
}

func (t *FileTable) unpin(slot int32) {
	s := &t.slots[slot]
	invariant.Assert(s.pins > 0, "a completed op was pinned")
	s.pins--
	if s.pins > 0 {
		return
	}
	if s.waitHead != nil {
		if t.roomShort() && !s.detached && s.waitHead.outer.Code != OpClose {
			t.evict(slot) // its waiters queue for a descriptor behind the starved
			return
		}
		t.runWaiters(slot)
		return
	}
	t.idle(slot)
}

// roomShort reports whether starved slots need more descriptors than
// the free ones and the evictions in flight give them.
func (t *FileTable) roomShort() bool {
	need := len(t.starved) - t.starvedNext
	if !t.exhausted {
		need -= t.options.OpenMax - t.held
	}
	return t.closing < need
}

// idle files an open slot with nothing in flight: evicted at once when a
// starved slot needs the room, else at the recent end of the LRU (a
// directory, synced only at rolls and creations, at the old end).
func (t *FileTable) idle(slot int32) {
	s := &t.slots[slot]
	invariant.Assert(s.state == slotOpen && s.pins == 0, "an idle slot is open with nothing in flight")
	if s.detached {
		return // the path is gone: kept open until the handle closes
	}
	if t.roomShort() {
		t.evict(slot)
		return
	}
	t.lruPush(slot, s.flags&OpenDirectory != 0)
}

// evict closes an idle slot's file to make room.
func (t *FileTable) evict(slot int32) {
	s := &t.slots[slot]
	if s.inLRU {
		t.lruRemove(slot)
	}
	t.stats.Evictions++
	t.warnOnce(&t.warnedBudget, "open files budget reached: closing the least recently used files and reopening them on demand",
		"budget", t.options.OpenMax, "handles", len(t.slots)-1-len(t.free))
	t.closing++
	t.startClose(slot, t.get(nil, slot))
}

// startClose closes an open slot's inner file; w carries a caller's
// OpClose or is the table's own eviction.
func (t *FileTable) startClose(slot int32, w *fileOp) {
	s := &t.slots[slot]
	invariant.Assert(s.state == slotOpen && s.pins == 0, "only an idle file is closed")
	if s.inLRU {
		t.lruRemove(slot)
	}
	s.state = slotClosing
	w.inner.Code, w.inner.File = OpClose, s.inner
	w.inner.Buffer, w.inner.Names = nil, nil
	t.inner.Submit(&w.inner)
}

func (t *FileTable) closeDone(w *fileOp) {
	slot, outer, err := w.slot, w.outer, w.inner.Err
	t.put(w)
	s := &t.slots[slot]
	invariant.Assert(s.state == slotClosing, "a close completes a closing slot")
	t.held--
	t.exhausted = false
	s.state, s.inner = slotShut, 0
	if outer == nil {
		t.closing--
		if err != nil {
			t.evictFailed(s, err)
		}
		if w := s.waitHead; w != nil && w.next == nil && w.outer.Code == OpClose {
			t.dequeue(slot) // the handle closed while its file was being evicted
			closed := w.outer
			t.put(w)
			t.release(slot)
			t.serveStarved()
			closed.Result, closed.Err = 0, nil
			closed.Callback(closed)
			return
		}
		if s.waitHead != nil {
			t.wantDescriptor(slot)
		}
		t.serveStarved()
		return
	}
	invariant.Assert(s.waitHead == nil, "nothing is queued behind a handle's close")
	t.release(slot)
	t.serveStarved()
	outer.Result, outer.Err = 0, err
	outer.Callback(outer)
}

// evictFailed keeps the error of an eviction's close: the handle's next
// fdatasync reports it.
func (t *FileTable) evictFailed(s *fileSlot, err error) {
	t.logger.Warn("closing an idle file failed", "path", s.path, "error", err)
	if s.lost == nil {
		s.lost = err
	}
}

// pathChanged keeps handles on the right paths after a removal or rename.
func (t *FileTable) pathChanged(op *Op) {
	if op.Code == OpRename {
		t.detachPath(op.Target)
		for slot := t.paths[op.Path]; slot != 0; slot = t.paths[op.Path] {
			t.unlinkPath(slot)
			s := &t.slots[slot]
			s.path = op.Target
			s.samePath = t.paths[op.Target]
			t.paths[op.Target] = slot
		}
		return
	}
	t.detachPath(op.Path)
}

// detachPath marks the live handles of a removed or replaced path.
func (t *FileTable) detachPath(path string) {
	for slot := t.paths[path]; slot != 0; slot = t.paths[path] {
		t.unlinkPath(slot)
		s := &t.slots[slot]
		s.detached = true
		if s.inLRU {
			t.lruRemove(slot)
		}
		if s.state == slotShut {
			t.logger.Warn("file removed while its handle was open and its descriptor closed", "path", path)
		}
	}
}

func (t *FileTable) lruPush(slot int32, old bool) {
	s := &t.slots[slot]
	invariant.Assert(!s.inLRU, "a slot is filed once")
	s.inLRU = true
	if t.lruHead == 0 {
		s.prev, s.next = 0, 0
		t.lruHead, t.lruTail = slot, slot
		return
	}
	if old {
		s.prev, s.next = t.lruTail, 0
		t.slots[t.lruTail].next = slot
		t.lruTail = slot
		return
	}
	s.prev, s.next = 0, t.lruHead
	t.slots[t.lruHead].prev = slot
	t.lruHead = slot
}

func (t *FileTable) lruRemove(slot int32) {
	s := &t.slots[slot]
	invariant.Assert(s.inLRU, "a removed slot was filed")
	if s.prev == 0 {
		t.lruHead = s.next
	} else {
		t.slots[s.prev].next = s.next
	}
	if s.next == 0 {
		t.lruTail = s.prev
	} else {
		t.slots[s.next].prev = s.prev
	}
	s.prev, s.next, s.inLRU = 0, 0, false
}

// warnOnce logs the first time the budget or the process forces closing.
func (t *FileTable) warnOnce(warned *bool, message string, args ...any) {
	if *warned {
		return
	}
	*warned = true
	t.logger.Warn(message, args...)
}
