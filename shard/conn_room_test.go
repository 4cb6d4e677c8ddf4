package shard

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"
)

// roomHandler watches every frame and lends memory of its own for the
// frame's next bytes (frameRoom), as the front does for a streamed send;
// it records what the connection reports of each receive into it.
type roomHandler struct {
	closeRecorder
	room       []byte // the last room lent: the rest of the frame then
	lent       bool   // a room is lent, its receive not yet reported
	received   []int  // n of each frameReceived, in order
	badArrived bool   // a frameReceived whose arrived did not count its bytes
	closedLent bool   // OnClose ran while a room was lent
}

func (h *roomHandler) watchesFrame(*Conn, int) bool            { return true }
func (h *roomHandler) onFrameProgress(*Conn, []byte, int) bool { return true }

func (h *roomHandler) frameRoom(_ *Conn, frame []byte, arrived int) []byte {
	h.room, h.lent = make([]byte, len(frame)-arrived), true
	return h.room
}

func (h *roomHandler) frameReceived(conn *Conn, _ []byte, arrived, n int) bool {
	h.badArrived = h.badArrived || !h.lent || arrived != conn.frameLen
	h.lent = false
	h.received = append(h.received, n)
	return true
}

func (h *roomHandler) OnClose(conn *Conn, err error) {
	h.closedLent = h.closedLent || h.lent
	h.closeRecorder.OnClose(conn, err)
}

// TestConnRoomReceive drives a connection whose handler lends a room
// for the frame's next bytes (frameRoom, RecvIntoOwned): each receive
// goes into the room, never into the frame, in steps of
// progressRecvBytes to the frame's last byte, and the handler
// hears of each one (frameReceived) before anything else happens: the
// next receive, the frame's delivery, or OnClose after a close whose
// cancel landed with part of the bytes or none.
func TestConnRoomReceive(t *testing.T) {
	frame := makeFrame(2*progressRecvBytes+directRecvBytesMin/2+5000, 6)
	for _, tc := range []struct {
		name  string
		close bool
		tail  Completion // the cancelled second receive's end, when closed
	}{
		{name: "delivered"},
		{name: "closed with bytes", close: true, tail: Completion{Result: 10}},
		{name: "closed without", close: true, tail: Completion{Errno: unix.ECANCELED}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh, fake, _, conn := newFakeShard(t)
			handler := &roomHandler{closeRecorder: closeRecorder{echoHandler: echoHandler{shard: sh}}}
			conn.handler = handler
			conn.onRecv(Completion{Token: fake.recvs[0], Result: 1000, Data: frame[:1000], More: true})
			conn.onRecv(Completion{Token: fake.recvs[0], Errno: unix.ECANCELED}) // the switch into the frame
			arrived := 1000
			for step := range 2 {
				if len(fake.owned) != step+1 || len(fake.owned[step]) != progressRecvBytes || &fake.owned[step][0] != &handler.room[0] {
					t.Fatalf("receive %d: %d receives into rooms, not the next %d bytes of the handler's room", step, len(fake.owned), progressRecvBytes)
				}
				if tc.close && step == 1 {
					conn.Close()
					tail := tc.tail
					tail.Token = fake.into[step]
					conn.onRecvInto(tail)
					if len(handler.received) != 2 || handler.received[1] != tail.Result || handler.closedLent || len(handler.closed) != 1 {
						t.Fatalf("closed: the handler heard %v, OnClose ran %d times (a room lent: %v)",
							handler.received, len(handler.closed), handler.closedLent)
					}
					return
				}
				copy(fake.owned[step], frame[arrived:])
				conn.onRecvInto(Completion{Token: fake.into[step], Result: progressRecvBytes})
				arrived += progressRecvBytes
				if len(handler.received) != step+1 || handler.received[step] != progressRecvBytes || handler.badArrived {
					t.Fatalf("receive %d: the handler heard %v (arrived miscounted: %v)", step, handler.received, handler.badArrived)
				}
				if conn.frameLen != arrived || bytes.Equal(conn.frame[arrived-progressRecvBytes:arrived], frame[arrived-progressRecvBytes:arrived]) {
					t.Fatalf("receive %d: %d bytes arrived, want %d, none of the room's in the frame", step, conn.frameLen, arrived)
				}
			}
			if got := sh.Stats(); got.BytesRoom != 2*progressRecvBytes || got.BytesDirect != 2*progressRecvBytes {
				t.Fatalf("stats after two receives into rooms: %+v", got)
			}
			// Less than directRecvBytesMin is missing: the rest goes into
			// rooms all the same, to the frame's last byte, and the frame is
			// delivered from the last one.
			for len(fake.owned) < 10 && sh.Stats().FramesIn == 0 {
				step := len(fake.owned) - 1
				rest := len(frame) - arrived
				if len(fake.recvs) != 1 || len(fake.owned[step]) != min(rest, progressRecvBytes) {
					t.Fatalf("receive %d: %d bytes into a room with %d missing, %d multishot receives", step,
						len(fake.owned[step]), rest, len(fake.recvs))
				}
				n := len(fake.owned[step])
				copy(fake.owned[step], frame[arrived:])
				conn.onRecvInto(Completion{Token: fake.into[step], Result: n})
				arrived += n
			}
			if sh.Stats().FramesIn != 1 || arrived != len(frame) || len(handler.received) != len(fake.owned) || handler.lent ||
				sh.Stats().BytesRoom != uint64(len(frame)-1000) {
				t.Fatalf("frame not delivered from its rooms' receives: %+v, heard %v", sh.Stats(), handler.received)
			}
		})
	}
}
