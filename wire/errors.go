package wire

import (
	"errors"
	"strconv"
)

// DecodeError reports bytes that do not decode. Offset is the byte position
// in the decoded slice where decoding stopped. For a truncation, Need is the
// number of bytes the decoder wanted there and Have how many remained; for a
// malformed value Need and Have are zero and What names the rule broken.
type DecodeError struct {
	Offset int
	Need   int
	Have   int
	What   string
}

func (e *DecodeError) Error() string {
	text := "wire: " + e.What + " at offset " + strconv.Itoa(e.Offset)
	if e.Need > 0 {
		text += ": need " + strconv.Itoa(e.Need) + " bytes, have " + strconv.Itoa(e.Have)
	}
	return text
}

// Truncated reports whether more input could make the decode succeed.
func (e *DecodeError) Truncated() bool { return e.Need > e.Have }

// Status returns the status a server answers for an undecodable body.
func (e *DecodeError) Status() Status { return StatusInvalidCommand }

// ErrStatus is implemented by every error of this package that maps to a
// protocol status code.
type ErrStatus interface {
	error
	Status() Status
}

// StatusOf maps an error to the status a server replies with: the status an
// error of this package carries, StatusError for anything else, and
// StatusOK for nil.
func StatusOf(err error) Status {
	if err == nil {
		return StatusOK
	}
	var withStatus ErrStatus
	if errors.As(err, &withStatus) {
		return withStatus.Status()
	}
	return StatusError
}

// BatchError reports a batch record that fails admission (§8.4). Code is
// the status a server answers with; Offset is the byte position in the batch.
type BatchError struct {
	Code   Status
	Offset int
	What   string
}

func (e *BatchError) Error() string {
	return "wire: batch: " + e.What + " at offset " + strconv.Itoa(e.Offset) +
		" (" + e.Code.String() + ")"
}

// Status returns the status code of the failed check.
func (e *BatchError) Status() Status { return e.Code }

func decodeFailure(offset int, what string) error {
	return &DecodeError{Offset: offset, What: what}
}
