package engine

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// ReadAt reads a handle's file synchronously (BlockingReader, for
// ExportSnapshot). It needs an inner storage whose Files are descriptors
// (DirectStorage, the shard's storage): it reads through the handle's
// open descriptor, or opens one for the read and closes it after, first
// closing the least recently used idle file when the budget is full. With
// every file of the budget busy it fails with ErrBusy (retry later).
func (t *FileTable) ReadAt(file File, buffer []byte, position int64) (int, error) {
	slot, ok := t.lookup(file)
	if !ok {
		return 0, fmt.Errorf("engine: file handle %d: %w", file, unix.EBADF)
	}
	s := &t.slots[slot]
	if s.state == slotOpen {
		count, err := directRead(int(s.inner), buffer, position)
		return int(count), err
	}
	if s.detached {
		return 0, fmt.Errorf("%w: %s", ErrFileRemoved, s.path)
	}
	if t.held >= t.options.OpenMax {
		if t.lruTail == 0 {
			return 0, fmt.Errorf("%w: every file of the budget (%d) has an op in flight", ErrBusy, t.options.OpenMax)
		}
		t.closeNow(t.lruTail)
		defer t.serveStarved() // after the read's descriptor is closed
	}
	descriptor, err := directOpen(s.path, s.flags&^OpenCreate)
	if err != nil {
		return 0, fmt.Errorf("engine: reopen %s: %w", s.path, err)
	}
	count, err := directRead(int(descriptor), buffer, position)
	_ = unix.Close(int(descriptor)) // read-only use: a close error loses nothing
	return int(count), err
}

// closeNow closes an idle file synchronously (ReadAt's room): the file
// has no op in flight, so no completion can meet the closed descriptor.
func (t *FileTable) closeNow(slot int32) {
	s := &t.slots[slot]
	t.lruRemove(slot)
	if err := unix.Close(int(s.inner)); err != nil {
		t.evictFailed(s, err)
	}
	s.state, s.inner = slotShut, 0
	t.held--
	t.stats.Evictions++
}
