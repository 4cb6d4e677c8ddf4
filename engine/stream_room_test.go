package engine_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// Tests of an owner receiving a streamed batch straight into its journal
// (StreamRoom, StreamReceived; stream.go). Method: a record arrives in
// seeded chunks, each either fed from the owner's copy (origin, as a
// frame would hold it) or received into the room, in which case origin
// keeps zeros there, as a frame does for bytes received elsewhere.

// roomFeeder drives one stream whose bytes are fed or received.
type roomFeeder struct {
	t       *testing.T
	p       *engine.Partition
	id      uint64
	record  []byte
	origin  []byte // the owner's copy: zeros where bytes were received into the room
	arrived int
	random  *rand.Rand
	cancels int
}

func openRoomFeeder(t *testing.T, p *engine.Partition, record []byte, seed uint64) *roomFeeder {
	t.Helper()
	f := &roomFeeder{t: t, p: p, record: record, origin: make([]byte, len(record)), random: rand.New(rand.NewPCG(seed, 7))}
	f.arrived = 4096
	copy(f.origin, record[:f.arrived])
	id, err := p.StreamOpen(record[:f.arrived], len(record), 20)
	if err != nil {
		t.Fatal(err)
	}
	f.id = id
	if err := p.StreamFeed(id, f.origin[:f.arrived]); err != nil {
		t.Fatal(err)
	}
	return f
}

// lend asks for the room and checks it covers the rest of the batch.
func (f *roomFeeder) lend() []byte {
	f.t.Helper()
	room := f.p.StreamRoom(f.id, f.origin, func() { f.cancels++ })
	if len(room) != len(f.record)-f.arrived {
		f.t.Fatalf("a room of %d bytes with %d of %d arrived", len(room), f.arrived, len(f.record))
	}
	return room
}

// receive receives the next n bytes into the room.
func (f *roomFeeder) receive(n int) error {
	copy(f.lend(), f.record[f.arrived:f.arrived+n])
	f.arrived += n
	return f.p.StreamReceived(f.id, n)
}

// step brings up to 128 KiB more, never the last byte, fed or received;
// it reports whether it received.
func (f *roomFeeder) step() (bool, error) {
	n := min(1+f.random.IntN(128<<10), len(f.record)-1-f.arrived)
	if f.random.IntN(3) == 0 {
		copy(f.origin[f.arrived:], f.record[f.arrived:f.arrived+n])
		f.arrived += n
		return false, f.p.StreamFeed(f.id, f.origin[:f.arrived])
	}
	return true, f.receive(n)
}

// TestStreamRoomReceivesInPlace: bytes received into the room are the
// batch's as fed ones are, in any mix; the batch finishes from an origin
// that lacks them, writes in pieces while they arrive, and reads back
// whole; the owner's copy is never written.
func TestStreamRoomReceivesInPlace(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		mem, storage, p, options := streamedPartition(t, seed, true)
		serial := uint64(0)
		record := enginetest.Batch(5, largeMessages(&serial, 90)...)
		f := openRoomFeeder(t, p, record, seed)
		received := 0
		for f.arrived < len(record)-1 {
			room, err := f.step()
			if err != nil {
				t.Fatalf("seed %d: at %d: %v", seed, f.arrived, err)
			}
			if room {
				received++
			}
			if f.random.IntN(2) == 0 {
				mem.Run(1)
			}
		}
		if err := f.receive(1); err != nil {
			t.Fatal(err)
		}
		before := append([]byte(nil), f.origin...)
		done := 0
		op := &engine.AppendOp{Batch: f.origin, Timestamp: 20, Done: func(*engine.AppendOp) { done++ }}
		if err := p.StreamFinish(f.id, op); err != nil {
			t.Fatalf("seed %d: finish: %v", seed, err)
		}
		storage.drain()
		if op.Err != nil || done != 1 || received == 0 || f.cancels != 0 || !bytes.Equal(f.origin, before) {
			t.Fatalf("seed %d: %d acks (%v), %d receives, %d cancels, origin written %v", seed, done, op.Err, received,
				f.cancels, !bytes.Equal(f.origin, before))
		}
		checkRoomMessages(t, storage, p, 0, 90)
		closePartition(t, storage, p)
		checkRoomMessages(t, storage, mustOpen(t, storage, options), 0, 90)
	}
}

// checkRoomMessages checks the payloads of offsets [first, end) of
// largeMessages' serials from first+1.
func checkRoomMessages(t *testing.T, storage backend, p *engine.Partition, first, end uint64) {
	t.Helper()
	checkMessages(t, storage, p, first, end)
	serial := first
	want := largeMessages(&serial, int(end-first))
	for offset := first; offset < end; {
		got := poll(t, storage, p, &engine.PollOp{Strategy: engine.PollOffset, Value: offset, Count: 100})
		for _, message := range got {
			if !bytes.Equal(message.Payload, want[offset-first].Payload) {
				t.Fatalf("offset %d: payload differs", offset)
			}
			offset++
		}
	}
}

// TestStreamRoomDropHandsBytesBack: a stream dropped for its request to
// be appended whole (a Sync's yield, a failed piece, StreamDrop, bad
// bytes) copies the bytes received into the room back to origin, so the
// owner holds the whole arrived prefix, while its own StreamAbort copies
// nothing. A drop while a receive into the room runs cancels it once and
// leaves the partition busy until StreamReceived, whose bytes also go
// back; the batch then appends whole from origin.
func TestStreamRoomDropHandsBytesBack(t *testing.T) {
	type dropCase struct {
		name   string
		lent   bool // the drop comes while a receive into the room runs
		drop   func(f *roomFeeder, mem *enginetest.MemStorage)
		keep   bool // origin gets the bytes back
		reason error
	}
	syncDrop := func(f *roomFeeder, _ *enginetest.MemStorage) {
		if err := f.p.Sync(func(error) {}); err != nil {
			f.t.Fatal(err)
		}
	}
	cases := []dropCase{
		{name: "drop", drop: func(f *roomFeeder, _ *enginetest.MemStorage) { f.p.StreamDrop(f.id) }, keep: true, reason: engine.ErrClosed},
		{name: "sync", drop: syncDrop, keep: true, reason: engine.ErrClosed},
		{name: "sync while lent", lent: true, drop: syncDrop, keep: true, reason: engine.ErrClosed},
		{name: "failed piece while lent", lent: true, drop: func(f *roomFeeder, mem *enginetest.MemStorage) {
			mem.Inject = func(op *engine.Op) error {
				if op.Code == engine.OpWrite {
					return syscall.EIO
				}
				return nil
			}
			mem.Run(mem.PendingOps(engine.OpWrite))
			mem.Inject = nil
		}, keep: true, reason: syscall.EIO},
		{name: "owner abort", drop: func(f *roomFeeder, _ *enginetest.MemStorage) { f.p.StreamAbort(f.id) }},
	}
	for index, c := range cases {
		for seed := uint64(1); seed <= 3; seed++ {
			mem, storage, p, _ := streamedPartition(t, seed, true)
			serial := uint64(0)
			record := enginetest.Batch(5, largeMessages(&serial, 60)...)
			f := openRoomFeeder(t, p, record, seed*10+uint64(index))
			for f.arrived < len(record)/2 {
				if _, err := f.step(); err != nil {
					t.Fatalf("%s seed %d: %v", c.name, seed, err)
				}
			}
			var err error
			if c.lent {
				room := f.lend()
				c.drop(f, mem)
				if f.cancels != 1 {
					t.Fatalf("%s seed %d: the drop cancelled the receive %d times", c.name, seed, f.cancels)
				}
				p.StreamDrop(f.id) // a second drop asks no second cancel
				storage.drain()
				if append := p.Append(&engine.AppendOp{Batch: record, Timestamp: 30, Done: func(*engine.AppendOp) {}}); f.cancels != 1 ||
					!errors.Is(append, engine.ErrBusy) {
					t.Fatalf("%s seed %d: with the receive running, %d cancels, an append: %v", c.name, seed, f.cancels, append)
				}
				n := 1000
				copy(room, record[f.arrived:f.arrived+n])
				f.arrived += n
				err = p.StreamReceived(f.id, n)
			} else {
				c.drop(f, mem)
				err = p.StreamFeed(f.id, f.origin[:f.arrived])
			}
			storage.drain()
			if c.reason != nil && !errors.Is(err, c.reason) {
				t.Fatalf("%s seed %d: the dropped stream answers %v, want %v", c.name, seed, err, c.reason)
			}
			if got := bytes.Equal(f.origin[:f.arrived], record[:f.arrived]); got != c.keep {
				t.Fatalf("%s seed %d: origin holds the arrived bytes: %v, want %v", c.name, seed, got, c.keep)
			}
			if !c.keep {
				p.StreamAbort(f.id)
				continue
			}
			if _, err := appendBatch(t, storage, p, record, 40); err != nil {
				t.Fatalf("%s seed %d: the batch appended whole from origin: %v", c.name, seed, err)
			}
			copy(f.origin[f.arrived:], record[f.arrived:])
			if !bytes.Equal(f.origin, record) {
				t.Fatalf("%s seed %d: origin differs from the batch", c.name, seed)
			}
		}
	}
}

// TestStreamRoomBadBytes: bytes received into the room that fail
// validation fail the stream with ErrInvalidBatch, and go back to origin
// like any dropped stream's.
func TestStreamRoomBadBytes(t *testing.T) {
	_, storage, p, _ := streamedPartition(t, 9, true)
	serial := uint64(0)
	record := enginetest.Batch(5, largeMessages(&serial, 60)...)
	bad := append([]byte(nil), record...)
	bad[len(bad)/2] ^= 0xff
	f := openRoomFeeder(t, p, bad, 9)
	err := f.receive(len(bad) - 1 - f.arrived)
	storage.drain()
	if !errors.Is(err, engine.ErrInvalidBatch) || !bytes.Equal(f.origin[:f.arrived], bad[:f.arrived]) {
		t.Fatalf("bad bytes received into the room: %v, origin holds them: %v", err, bytes.Equal(f.origin[:f.arrived], bad[:f.arrived]))
	}
	if _, err := appendBatch(t, storage, p, record, 40); err != nil {
		t.Fatalf("an append after the failed stream: %v", err)
	}
}

// TestStreamRoomOnlyInLentRegions: a journal of the storage's pools
// lends no room (its memory may be the Go heap's), nor does a stream
// that ended.
func TestStreamRoomOnlyInLentRegions(t *testing.T) {
	_, storage, p, _ := streamedPartition(t, 3, false)
	serial := uint64(0)
	record := enginetest.Batch(5, largeMessages(&serial, 60)...)
	id, err := p.StreamOpen(record[:4096], len(record), 20)
	if err != nil {
		t.Fatal(err)
	}
	if room := p.StreamRoom(id, make([]byte, len(record)), func() {}); room != nil {
		t.Fatalf("a pooled journal lent a room of %d bytes", len(room))
	}
	p.StreamAbort(id)
	storage.drain()
	_, storage, p, _ = streamedPartition(t, 4, true)
	id, err = p.StreamOpen(record[:4096], len(record), 20)
	if err != nil {
		t.Fatal(err)
	}
	p.StreamAbort(id)
	storage.drain()
	if room := p.StreamRoom(id, make([]byte, len(record)), func() {}); room != nil {
		t.Fatalf("an aborted stream lent a room of %d bytes", len(room))
	}
}
