package classic

import (
	"errors"
	"strconv"
)

// DecodeError reports why untrusted bytes were refused: which field, where,
// and either how many bytes it needed and had (truncation) or which value it
// found (a bad discriminant or a failed check). Status is the code the server
// answers with (3 InvalidCommand for shape errors, 4 InvalidFormat for failed
// validation, the 4xxx batch codes for SendMessages checks).
type DecodeError struct {
	What   string
	Offset int
	Need   int
	Have   int
	Value  uint64
	Status Status
	Cause  error
}

// Unwrap exposes the sentinel behind the error, if any (ErrBodyTooLarge).
func (e *DecodeError) Unwrap() error { return e.Cause }

func (e *DecodeError) Error() string {
	text := "classic: " + e.What + " at offset " + strconv.Itoa(e.Offset)
	if e.Need > 0 {
		return text + ": need " + strconv.Itoa(e.Need) + " bytes, have " + strconv.Itoa(e.Have)
	}
	return text + ": invalid value " + strconv.FormatUint(e.Value, 10) + " (" + e.Status.String() + ")"
}

// StatusOf maps a decode or encode error to the status a server replies with:
// the DecodeError's status, else StatusInvalidCommand.
func StatusOf(err error) Status {
	var decodeError *DecodeError
	if errors.As(err, &decodeError) {
		return decodeError.Status
	}
	return StatusInvalidCommand
}

// Sentinel errors of the package.
var (
	// ErrNameLength: a name8 value is empty or longer than NameBytesMax.
	ErrNameLength = errors.New("classic: name must be 1..255 bytes")
	// ErrIdentifier: an identifier is neither numeric nor a 1..255-byte name.
	ErrIdentifier = errors.New("classic: invalid identifier")
	// ErrFieldRange: a value does not fit its wire field (a password longer
	// than 255 bytes, an unknown enum value, an offset delta beyond u32).
	ErrFieldRange = errors.New("classic: value out of range for its field")
	// ErrBodyTooLarge: a request or reply body exceeds its cap.
	ErrBodyTooLarge = errors.New("classic: body exceeds its cap")
)
