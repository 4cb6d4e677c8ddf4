package vsr

import (
	"encoding/binary"
	"errors"
	"testing"
)

// TestHeaderLayout pins every field to the offset doc.go draws: a change to
// the layout must change this test and the diagram together.
func TestHeaderLayout(t *testing.T) {
	h := Header{Cluster: 0x0102030405060708, Group: 0x1112131415161718, View: 0x21222324,
		Command: CommandPrepare, Replica: 5, Operation: 9, Parent: 0x31323334,
		Op: 0x4142434445464748, Commit: 0x5152535455565758, Client: 0x6162636465666768,
		Request: 0x7172737475767778, Context: 0x81828384, LogView: 0x91929394, Nonce: 0xa1a2a3a4a5a6a7a8}
	body := []byte("body")
	buf := encodeMessage(make([]byte, headerBytes+len(body)), &h, body)
	le := binary.LittleEndian
	checks := []struct {
		name   string
		got    uint64
		expect uint64
	}{
		{"checksum@0", uint64(le.Uint32(buf[0:])), uint64(checksum(buf[4:headerBytes]))},
		{"checksum_body@4", uint64(le.Uint32(buf[4:])), uint64(checksum(body))},
		{"cluster@8", le.Uint64(buf[8:]), h.Cluster},
		{"group@16", le.Uint64(buf[16:]), h.Group},
		{"size@24", uint64(le.Uint32(buf[24:])), uint64(headerBytes + len(body))},
		{"view@28", uint64(le.Uint32(buf[28:])), uint64(h.View)},
		{"command@32", uint64(buf[32]), uint64(CommandPrepare)},
		{"replica@33", uint64(buf[33]), 5},
		{"operation@34", uint64(buf[34]), 9},
		{"parent@36", uint64(le.Uint32(buf[36:])), uint64(h.Parent)},
		{"op@40", le.Uint64(buf[40:]), h.Op},
		{"commit@48", le.Uint64(buf[48:]), h.Commit},
		{"client@56", le.Uint64(buf[56:]), h.Client},
		{"request@64", le.Uint64(buf[64:]), h.Request},
		{"context@72", uint64(le.Uint32(buf[72:])), uint64(h.Context)},
		{"log_view@76", uint64(le.Uint32(buf[76:])), uint64(h.LogView)},
		{"nonce@80", le.Uint64(buf[80:]), h.Nonce},
	}
	for _, c := range checks {
		if c.got != c.expect {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.expect)
		}
	}
	var decoded Header
	if err := DecodeMessage(buf, &decoded); err != nil {
		t.Fatal(err)
	}
	if decoded != h {
		t.Fatalf("round trip:\n got %+v\nwant %+v", decoded, h)
	}
}

// TestDecodeRejects flips, cuts and stretches a valid message and expects
// the reason for each rejection.
func TestDecodeRejects(t *testing.T) {
	valid := EncodeRequest(nil, 1, 2, 3, 4, 5, []byte("payload"))
	cases := []struct {
		name   string
		mutate func([]byte) []byte
		want   error
	}{
		{"short", func(m []byte) []byte { return m[:headerBytes-1] }, ErrShort},
		{"truncated body", func(m []byte) []byte { return m[:len(m)-1] }, ErrSize},
		{"header bit flip", func(m []byte) []byte { m[40] ^= 1; return m }, ErrChecksum},
		{"body bit flip", func(m []byte) []byte { m[headerBytes] ^= 1; return m }, ErrChecksumBody},
		{"too large", func(m []byte) []byte { return make([]byte, messageBytesMax+1) }, ErrTooLarge},
		{"reserved byte", func(m []byte) []byte {
			m[100] = 1
			binary.LittleEndian.PutUint32(m, checksum(m[4:headerBytes]))
			return m
		}, ErrReserved},
		{"unknown command", func(m []byte) []byte {
			m[32] = 200
			binary.LittleEndian.PutUint32(m, checksum(m[4:headerBytes]))
			return m
		}, ErrCommand},
	}
	for _, c := range cases {
		m := c.mutate(append([]byte(nil), valid...))
		var h Header
		if err := DecodeMessage(m, &h); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	var h Header
	if err := DecodeMessage(valid, &h); err != nil || h.Client != 3 || h.Request != 4 || h.Operation != 5 {
		t.Fatalf("valid request: %v %+v", err, h)
	}
}

func TestHardStateRoundTrip(t *testing.T) {
	hs := HardState{View: 7, LogView: 6, VoteView: 7, Commit: 99, CommitChecksum: 0xabcdef, Recovering: true,
		Clients: []ClientSession{{1, 2, 3}, {4, 5, 6}}}
	buf, _ := hs.AppendBinary(nil)
	got, err := DecodeHardState(buf)
	if err != nil {
		t.Fatal(err)
	}
	if got.View != 7 || got.LogView != 6 || got.VoteView != 7 || got.Commit != 99 || got.CommitChecksum != 0xabcdef ||
		!got.Recovering || !got.written {
		t.Fatalf("got %+v", got)
	}
	if len(got.Clients) != 2 || got.Clients[1] != (ClientSession{4, 5, 6}) {
		t.Fatalf("clients %+v", got.Clients)
	}
	for i := range buf {
		corrupt := append([]byte(nil), buf...)
		corrupt[i] ^= 0x10
		if _, err := DecodeHardState(corrupt); !errors.Is(err, ErrHardState) {
			t.Fatalf("flipped byte %d accepted", i)
		}
	}
	if _, err := DecodeHardState(buf[:len(buf)-1]); !errors.Is(err, ErrHardState) {
		t.Fatal("truncated hard state accepted")
	}
}

// TestClientTableEvictsOldest fills the table and checks that the session
// committed longest ago makes room, deterministically.
func TestClientTableEvictsOldest(t *testing.T) {
	table := newClientTable(3)
	table.commit(10, 1, 5)
	table.commit(11, 1, 6)
	table.commit(12, 1, 7)
	table.commit(10, 2, 8) // client 10 is now the newest
	table.commit(13, 1, 9) // evicts client 11 (op 6)
	if _, ok := table.find(11); ok {
		t.Fatal("client 11 should have been evicted")
	}
	for _, client := range []uint64{10, 12, 13} {
		if _, ok := table.find(client); !ok {
			t.Fatalf("client %d missing", client)
		}
	}
	if s, _ := table.find(10); s.Request != 2 || s.Op != 8 {
		t.Fatalf("client 10 = %+v", s)
	}
}
