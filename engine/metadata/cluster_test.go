package metadata

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/whippetio/whippet/engine/enginetest"
)

// TestCommandCodecRoundTrip: every field of a command survives
// EncodeCommand and DecodeCommand.
func TestCommandCodecRoundTrip(t *testing.T) {
	random := rand.New(rand.NewPCG(7, 7))
	for index := 0; index < 200; index++ {
		command := randomCommand(random)
		command.Op = random.Uint64()
		encoded := mustEncode(t, &command)
		decoded, err := DecodeCommand(encoded)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(mustEncode(t, &decoded), encoded) || decoded.Op != command.Op ||
			decoded.Name != command.Name || decoded.Secret != command.Secret {
			t.Fatalf("command %d: decoded %+v, want %+v", index, decoded, command)
		}
	}
}

func mustEncode(t *testing.T, command *Command) []byte {
	t.Helper()
	encoded, err := EncodeCommand(command)
	if err != nil {
		t.Fatal(err)
	}
	return encoded
}

// TestCommandTooLarge: a command past the record limit (a client may send
// a permissions set that large) is refused by the codec and by the store,
// which logs nothing and stays usable.
func TestCommandTooLarge(t *testing.T) {
	huge := Command{Kind: UpdatePermissions, UserID: 0, HasPermissions: true, Permissions: make([]byte, recordBytesMax)}
	if _, err := EncodeCommand(&huge); !errors.Is(err, ErrCommandTooLarge) {
		t.Fatalf("encode: %v", err)
	}
	storage, s := replicaStore(t, 11)
	execute(t, storage, s, Command{Kind: CreateUser, Name: "root", Secret: "h"})
	before := s.ExportSnapshot(nil)
	if _, err := execute(t, storage, s, huge); !errors.Is(err, ErrCommandTooLarge) {
		t.Fatalf("execute: %v", err)
	}
	if !bytes.Equal(s.ExportSnapshot(nil), before) {
		t.Fatal("a refused command changed the state")
	}
	if _, err := execute(t, storage, s, Command{Kind: CreateStream, Name: "after"}); err != nil {
		t.Fatalf("the store is stuck after a refusal: %v", err)
	}
}

// TestDecodeCommandRejects: truncated and bit-flipped records are refused
// or decoded, never read out of bounds (a panic fails the test).
func TestDecodeCommandRejects(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	random := rand.New(rand.NewPCG(seed, 2))
	if _, err := DecodeCommand(nil); !errors.Is(err, ErrMalformedCommand) {
		t.Fatalf("empty record: %v", err)
	}
	command := randomCommand(random)
	encoded := mustEncode(t, &command)
	if _, err := DecodeCommand(encoded[:len(encoded)/2]); !errors.Is(err, ErrMalformedCommand) {
		t.Fatalf("half a record: %v", err)
	}
	rejected := 0
	for index := 0; index < 20000; index++ {
		damaged := append([]byte(nil), encoded...)
		for flips := 1 + random.IntN(4); flips > 0; flips-- {
			damaged[random.IntN(len(damaged))] ^= byte(1 + random.IntN(255))
		}
		damaged = damaged[:len(damaged)-random.IntN(3)]
		if _, err := DecodeCommand(damaged); err != nil {
			rejected++
		}
	}
	if rejected == 0 {
		t.Fatal("no damaged record was rejected")
	}
}

// replicaStore opens a store on its own memory storage.
func replicaStore(t *testing.T, seed uint64) (memDriver, *Store) {
	t.Helper()
	storage := memDriver{enginetest.NewMemStorage(seed)}
	s, err := openStore(t, storage)
	if err != nil {
		t.Fatal(err)
	}
	return storage, s
}

// TestReplicasApplyIdentically is the determinism a replicated metadata
// group rests on: stores fed the same encoded commands (ops 1, 2, ...; a
// share of them rejected) reach byte-identical snapshots and the same
// results, and a store that installs another's snapshot midway continues
// in step with it, also across a reopen.
func TestReplicasApplyIdentically(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -seed %d)", seed, seed)
	random := rand.New(rand.NewPCG(seed, 3))
	storages := make([]memDriver, 3)
	stores := make([]*Store, 3)
	for index := range stores {
		storages[index], stores[index] = replicaStore(t, seed+uint64(index))
	}
	commands := 5000
	for op := uint64(1); op <= uint64(commands); op++ {
		command := randomCommand(random)
		command.Op = op
		encoded := mustEncode(t, &command)
		var want Result
		var wantErr error
		for index := range stores {
			decoded, err := DecodeCommand(encoded)
			if err != nil {
				t.Fatal(err)
			}
			result, err := execute(t, storages[index], stores[index], decoded)
			if index == 0 {
				want, wantErr = result, err
			} else if !sameResult(result, want) || !errors.Is(err, wantErr) && err != wantErr {
				t.Fatalf("op %d on replica %d: %+v %v, replica 0: %+v %v", op, index, result, err, want, wantErr)
			}
		}
		if op == uint64(commands)/2 {
			installInto(t, storages[2], stores[2], stores[0], op)
			stores[2] = reopen(t, storages[2])
		}
		compareReplicas(t, stores, op)
	}
	if stores[0].State().AppliedOp == 0 || stores[0].State().Index < snapshotRecords {
		t.Fatalf("applied op %d, index %d: too little exercised", stores[0].State().AppliedOp, stores[0].State().Index)
	}
}

func sameResult(a, b Result) bool {
	return a.StreamID == b.StreamID && a.TopicID == b.TopicID && a.GroupID == b.GroupID && a.UserID == b.UserID &&
		bytes.Equal(uint32Bytes(a.PartitionIDs), uint32Bytes(b.PartitionIDs))
}

func uint32Bytes(values []uint32) []byte {
	var out []byte
	for _, value := range values {
		out = append(out, byte(value), byte(value>>8), byte(value>>16), byte(value>>24))
	}
	return out
}

func compareReplicas(t *testing.T, stores []*Store, op uint64) {
	t.Helper()
	want := stores[0].ExportSnapshot(nil)
	for index := 1; index < len(stores); index++ {
		if got := stores[index].ExportSnapshot(nil); !bytes.Equal(got, want) {
			t.Fatalf("after op %d replica %d's state differs from replica 0's", op, index)
		}
	}
}

// installInto makes target install source's exported state as of op.
func installInto(t *testing.T, storage memDriver, target, source *Store, op uint64) {
	t.Helper()
	e := &Execution{Snapshot: source.ExportSnapshot(nil), Command: Command{Op: op}}
	calls := 0
	e.Done = func(*Execution) { calls++ }
	target.Execute(e)
	storage.drain()
	if calls != 1 || e.Err != nil {
		t.Fatalf("install: %d calls, %v", calls, e.Err)
	}
	if target.State().AppliedOp != op {
		t.Fatalf("installed applied op %d, want %d", target.State().AppliedOp, op)
	}
}

func reopen(t *testing.T, storage memDriver) *Store {
	t.Helper()
	s, err := openStore(t, storage)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	return s
}

// TestInstallRejectsDamage: a damaged transfer is refused and leaves the
// state as it was.
func TestInstallRejectsDamage(t *testing.T) {
	storage, s := replicaStore(t, 9)
	execute(t, storage, s, Command{Kind: CreateStream, Name: "kept", Op: 1})
	before := s.ExportSnapshot(nil)
	_, source := replicaStore(t, 10)
	damaged := source.ExportSnapshot(nil)
	damaged[len(damaged)-1] ^= 1
	e := &Execution{Snapshot: damaged, Command: Command{Op: 5}}
	e.Done = func(*Execution) {}
	s.Execute(e)
	storage.drain()
	if e.Err == nil || !bytes.Equal(s.ExportSnapshot(nil), before) {
		t.Fatalf("damaged snapshot: %v", e.Err)
	}
}

// TestSnapshotLayoutChecked: a transferred snapshot whose bytes are
// damaged but whose checksum matches (the damage happened before it was
// framed) is refused by the layout check, or installed, but never read
// out of bounds (a panic fails the test).
func TestSnapshotLayoutChecked(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	random := rand.New(rand.NewPCG(seed, 4))
	storage, source := replicaStore(t, seed)
	for op := uint64(1); op <= 300; op++ {
		command := randomCommand(random)
		command.Op = op
		execute(t, storage, source, command)
	}
	exported := source.ExportSnapshot(nil)
	refused := 0
	for index := 0; index < 2000; index++ {
		damaged := append([]byte(nil), exported...)
		for flips := 1 + random.IntN(4); flips > 0; flips-- {
			damaged[snapshotHeaderBytes+random.IntN(len(damaged)-snapshotHeaderBytes)] ^= byte(1 + random.IntN(255))
		}
		binary.LittleEndian.PutUint64(damaged[12:], xxh3.Hash(damaged[snapshotHeaderBytes:]))
		if _, reason := snapshotPayload(damaged); reason != "" {
			refused++
			continue
		}
		_ = decodeSnapshot(damaged[snapshotHeaderBytes:]) // accepted: must decode without a panic
	}
	if refused == 0 {
		t.Fatal("no damaged layout was refused")
	}
	t.Logf("%d of 2000 damaged snapshots refused", refused)
}
