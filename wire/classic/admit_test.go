package classic

import (
	"encoding/binary"
	"testing"
)

// Goal: Admit turns each framing situation of §1 and the login rule into the
// action a server takes, with the body drained except on close.
func TestAdmit(t *testing.T) {
	prologue := func(length uint32, code Code) []byte {
		out := binary.LittleEndian.AppendUint32(nil, length)
		return binary.LittleEndian.AppendUint32(out, uint32(code))
	}
	cases := []struct {
		name     string
		prologue []byte
		loggedIn bool
		want     Admission
	}{
		{"ping before login", prologue(4, CodePing), false, Admission{Action: Dispatch}},
		{"login before login", prologue(34, CodeLoginUser), false, Admission{Action: Dispatch, BodyBytes: 30}},
		{"stats before login", prologue(4, CodeGetStats), false,
			Admission{Action: Refuse, Status: StatusUnauthenticated}},
		{"logout before login", prologue(4, CodeLogoutUser), false,
			Admission{Action: Refuse, Status: StatusUnauthenticated}},
		{"send before login drains", prologue(111, CodeSendMessages), false,
			Admission{Action: Refuse, Status: StatusUnauthenticated, BodyBytes: 107}},
		{"send after login", prologue(111, CodeSendMessages), true, Admission{Action: Dispatch, BodyBytes: 107}},
		{"unknown code drains", prologue(4, 999), true, Admission{Action: Refuse, Status: StatusInvalidCommand}},
		{"length below 4", prologue(3, CodePing), true, Admission{Action: Refuse, Status: StatusInvalidCommand}},
		{"control body above cap", prologue(ControlBodyBytesMax+5, CodeCreateStream), true,
			Admission{Action: RefuseAndClose, Status: StatusInvalidCommand}},
		{"send above cap", prologue(SendMessagesBodyBytesMax+5, CodeSendMessages), true,
			Admission{Action: RefuseAndClose, Status: StatusInvalidCommand}},
	}
	for _, c := range cases {
		got := Admit(c.prologue, c.loggedIn)
		if got.Action != c.want.Action || got.Status != c.want.Status || got.BodyBytes != c.want.BodyBytes {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
