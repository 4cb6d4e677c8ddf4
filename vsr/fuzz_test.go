package vsr

import "testing"

// FuzzDecodeMessage: decoding arbitrary bytes never panics, and an accepted
// message re-encodes to the same bytes.
func FuzzDecodeMessage(f *testing.F) {
	f.Add(EncodeRequest(nil, 1, 2, 3, 4, 5, []byte("body")))
	f.Add(make([]byte, headerBytes))
	f.Fuzz(func(t *testing.T, message []byte) {
		var h Header
		if DecodeMessage(message, &h) != nil {
			return
		}
		again := encodeMessage(make([]byte, len(message)), &h, message[headerBytes:])
		if string(again) != string(message) {
			t.Fatal("accepted message does not re-encode to the same bytes")
		}
	})
}

// FuzzStepPeerMessage feeds a replica well-formed (checksummed) peer
// messages with arbitrary fields: whatever a faulty peer says, the replica
// must not panic. Asserts guard its own state, not what peers claim.
func FuzzStepPeerMessage(f *testing.F) {
	f.Add(uint8(CommandCommit), uint8(0), uint32(0), uint64(9), uint64(3), uint32(7), uint32(0), uint32(0))
	f.Add(uint8(CommandDoViewChange), uint8(2), uint32(4), uint64(1), uint64(0), uint32(0), uint32(0), uint32(3))
	f.Add(uint8(CommandStartView), uint8(1), uint32(1), uint64(1), uint64(1), uint32(5), uint32(0), uint32(0))
	f.Fuzz(func(t *testing.T, command, replica uint8, view uint32, op, commit uint64, context, parent, logView uint32) {
		c := newTestCluster(t, 3, 0)
		for i := uint64(1); i <= 3; i++ {
			c.request(0, 5, i, "x")
		}
		h := Header{Command: Command(command % commandCount), Replica: replica % 3, View: view % 8,
			Op: op % 16, Commit: commit % 16, Context: context, Parent: parent, LogView: logView % 8}
		if h.Command == CommandReserved {
			return
		}
		message := c.craft(h)
		for i := range c.replicas {
			c.step(i, message)
		}
		c.queue = nil
		c.tick(5)
	})
}
