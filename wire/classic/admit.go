package classic

import "errors"

// Action is what a server does with a request once its prologue is known.
type Action uint8

// Actions, in the order a connection loop tests them.
const (
	// Dispatch: read the body and decode it as Header.Code.
	Dispatch Action = iota
	// Refuse: read and discard the announced body, then reply Status. The
	// 0.8 server skipped the drain for SendMessages before login, which made
	// the client's body parse as the next frame; draining keeps the stream
	// in step.
	Refuse
	// RefuseAndClose: reply Status and close without reading the body: it
	// is larger than the server will ever read, and draining it would let a
	// client hold the connection.
	RefuseAndClose
)

// Admission is the verdict on one request prologue.
type Admission struct {
	Action    Action
	Status    Status
	Header    RequestHeader
	BodyBytes int
}

// Admit applies the framing rules of PROTOCOL-0.8.md §1 and the login rule
// of §3 to a request prologue: a length below 4 or an unknown code ⇒ 3, a
// body above its cap ⇒ 3 and close, anything but Ping and the two logins
// before login ⇒ 40 (Logout included). The body is always drained first,
// except when the connection closes. prologue must hold 8 bytes.
func Admit(prologue []byte, loggedIn bool) Admission {
	header, err := DecodeRequestHeader(prologue)
	if errors.Is(err, ErrBodyTooLarge) {
		return Admission{Action: RefuseAndClose, Status: StatusInvalidCommand, Header: header}
	}
	if err != nil {
		return Admission{Action: Refuse, Status: StatusOf(err), Header: header}
	}
	admission := Admission{Action: Dispatch, Header: header, BodyBytes: header.BodyBytes()}
	switch {
	case !header.Code.Known():
		admission.Action, admission.Status = Refuse, StatusInvalidCommand
	case !loggedIn && !header.Code.AllowedBeforeLogin():
		admission.Action, admission.Status = Refuse, StatusUnauthenticated
	}
	return admission
}
