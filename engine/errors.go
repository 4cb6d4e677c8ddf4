package engine

import (
	"errors"
	"strconv"
)

// Operating errors returned to callers; shard maps them to Iggy status codes.
var (
	// ErrCorrupt marks damage before the last durable point: a partition
	// refuses to open (or a read fails) rather than serve wrong data.
	// Test with errors.Is; the wrapping CorruptError names file and position.
	ErrCorrupt = errors.New("engine: corrupt data")
	// ErrInvalidBatch rejects a record that does not have the batch layout.
	ErrInvalidBatch = errors.New("engine: invalid batch")
	// ErrJournalFull is backpressure: the write buffers hold journalBytesMax
	// already; retry after a completion.
	ErrJournalFull = errors.New("engine: journal full")
	// ErrBusy rejects an append or maintenance op while the partition is
	// purging, deleting segments or closing; retry after a completion.
	ErrBusy = errors.New("engine: partition busy")
	// ErrClosed rejects ops on a closed partition.
	ErrClosed = errors.New("engine: partition closed")
	// ErrInvalidOffset rejects storing an offset past the partition's
	// current offset or on an empty partition (Iggy 4100).
	ErrInvalidOffset = errors.New("engine: invalid offset")
	// ErrOffsetNotFound answers deleting an offset never stored (Iggy 3021).
	ErrOffsetNotFound = errors.New("engine: consumer offset not found")
	// ErrTooManyConsumers rejects a new consumer past consumersMax.
	ErrTooManyConsumers = errors.New("engine: too many consumers")
	// ErrInvalidOptions rejects partition options out of range.
	ErrInvalidOptions = errors.New("engine: invalid options")
)

// CorruptError names the file and byte position of damage found before
// the last durable point. errors.Is(err, ErrCorrupt) holds.
type CorruptError struct {
	Path     string
	Position int64
	Reason   string
}

func (e *CorruptError) Error() string {
	return "engine: corrupt data in " + e.Path + " at position " +
		strconv.FormatInt(e.Position, 10) + ": " + e.Reason
}

// Unwrap lets errors.Is(err, ErrCorrupt) match.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// FatalError reports a failure after which the process must stop: a failed
// fdatasync (the kernel may have dropped the dirty pages it reported, so a
// retry could claim durability it does not have). Every later op on the
// partition fails with the same error. shard turns it into fatal(reason)
// with its own exit code.
type FatalError struct {
	Op   string
	Path string
	Err  error
}

func (e *FatalError) Error() string {
	return "engine: fatal: " + e.Op + " " + e.Path + ": " + e.Err.Error()
}

func (e *FatalError) Unwrap() error { return e.Err }

// IsFatal reports whether err is (or wraps) a FatalError. It walks the
// chain with type assertions, not errors.As, whose target would escape
// and cost an allocation on every call (it runs on every data-plane
// completion).
func IsFatal(err error) bool {
	for range errorDepthMax {
		switch e := err.(type) {
		case nil:
			return false
		case *FatalError:
			return true
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				if IsFatal(inner) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}
