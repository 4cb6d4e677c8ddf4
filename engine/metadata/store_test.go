package metadata

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

var quiet = slog.New(slog.DiscardHandler)

var seedFlag = flag.Uint64("seed", 0, "seed for the randomized metadata tests (0: time-based)")

type memDriver struct{ *enginetest.MemStorage }

func (d memDriver) drain() {
	for d.Pending() > 0 {
		d.Run(1 << 20)
	}
}

func openStore(t *testing.T, storage memDriver) (*Store, error) {
	t.Helper()
	var opened *Store
	var openErr error
	calls := 0
	OpenStore(storage, "/data/metadata", quiet, func(s *Store, err error) { opened, openErr, calls = s, err, calls+1 })
	storage.drain()
	if calls != 1 {
		t.Fatalf("open callback ran %d times", calls)
	}
	return opened, openErr
}

func execute(t *testing.T, storage memDriver, s *Store, command Command) (Result, error) {
	t.Helper()
	e := &Execution{Command: command}
	calls := 0
	e.Done = func(*Execution) { calls++ }
	s.Execute(e)
	storage.drain()
	if calls != 1 {
		t.Fatalf("execute callback ran %d times", calls)
	}
	return e.Result, e.Err
}

func snapshotBytes(state *State) []byte {
	return append([]byte(nil), encodeSnapshot(flatbuffers.NewBuilder(0), state)...)
}

// TestIDsAndValidation pins the numbering rules of PROTOCOL.md §9: lowest
// free slot for streams, topics and users, monotonic group ids, partitions
// appended and removed at the end, and the duplicate-name errors.
func TestIDsAndValidation(t *testing.T) {
	storage := memDriver{enginetest.NewMemStorage(1)}
	s, err := openStore(t, storage)
	if err != nil {
		t.Fatal(err)
	}
	for index, name := range []string{"a", "b", "c"} {
		result, err := execute(t, storage, s, Command{Kind: CreateStream, Name: name, CreatedAt: 5})
		if err != nil || result.StreamID != uint32(index) {
			t.Fatalf("stream %s: id %d, %v", name, result.StreamID, err)
		}
	}
	if _, err := execute(t, storage, s, Command{Kind: CreateStream, Name: "a"}); !errors.Is(err, ErrStreamNameExists) {
		t.Fatalf("duplicate stream: %v", err)
	}
	execute(t, storage, s, Command{Kind: DeleteStream, StreamID: 1})
	if result, _ := execute(t, storage, s, Command{Kind: CreateStream, Name: "d"}); result.StreamID != 1 {
		t.Fatalf("reused stream id %d, want the lowest free 1", result.StreamID)
	}
	result, err := execute(t, storage, s, Command{Kind: CreateTopic, StreamID: 0, Name: "t", Count: 3})
	if err != nil || len(result.PartitionIDs) != 3 || result.TopicID != 0 {
		t.Fatalf("create topic: %+v, %v", result, err)
	}
	result, _ = execute(t, storage, s, Command{Kind: CreatePartitions, StreamID: 0, TopicID: 0, Count: 2})
	if fmt.Sprint(result.PartitionIDs) != "[3 4]" {
		t.Fatalf("created partitions %v", result.PartitionIDs)
	}
	result, _ = execute(t, storage, s, Command{Kind: DeletePartitions, StreamID: 0, TopicID: 0, Count: 3})
	if fmt.Sprint(result.PartitionIDs) != "[2 3 4]" {
		t.Fatalf("deleted partitions %v", result.PartitionIDs)
	}
	if _, err := execute(t, storage, s, Command{Kind: DeletePartitions, StreamID: 0, TopicID: 0, Count: 3}); !errors.Is(err, ErrTooManyPartitions) {
		t.Fatalf("deleting more partitions than exist: %v", err)
	}
	for want := uint32(0); want < 3; want++ {
		result, _ = execute(t, storage, s, Command{Kind: CreateConsumerGroup, StreamID: 0, TopicID: 0, Name: fmt.Sprint("g", want)})
		if result.GroupID != want {
			t.Fatalf("group id %d, want %d", result.GroupID, want)
		}
	}
	execute(t, storage, s, Command{Kind: DeleteConsumerGroup, StreamID: 0, TopicID: 0, GroupID: 2})
	if result, _ = execute(t, storage, s, Command{Kind: CreateConsumerGroup, StreamID: 0, TopicID: 0, Name: "g9"}); result.GroupID != 3 {
		t.Fatalf("group id after a delete %d, want 3 (never reused)", result.GroupID)
	}
	if _, err := execute(t, storage, s, Command{Kind: CreateUser, Name: "ab"}); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("two-byte username: %v", err)
	}
	execute(t, storage, s, Command{Kind: CreateUser, Name: "iggy", Secret: "hash"})
	if _, err := execute(t, storage, s, Command{Kind: DeleteUser, UserID: 0}); !errors.Is(err, ErrRootUser) {
		t.Fatalf("deleting root: %v", err)
	}
	execute(t, storage, s, Command{Kind: CreatePersonalAccessToken, UserID: 0, Name: "pat", Secret: "tokenhash"})
	if user, token := s.State().TokenByHash("tokenhash"); user == nil || token.Name != "pat" {
		t.Fatal("token not found by hash")
	}
	if root := s.State().User(0); !root.HasToken("pat") || root.HasToken("other") {
		t.Fatal("HasToken disagrees with the tokens held")
	}
	execute(t, storage, s, Command{Kind: CreatePersonalAccessToken, UserID: 0, Name: "short", Secret: "h2", ExpiryAt: 100})
	if expired := s.State().ExpiredTokens(100); len(expired) != 1 || expired[0].Name != "short" {
		t.Fatalf("expired tokens %v", expired)
	}
	if expired := s.State().ExpiredTokens(99); len(expired) != 0 {
		t.Fatalf("tokens expired early: %v", expired)
	}
}

// randomCommand draws a command over a small id and name space, so that
// many are valid and some are rejected.
func randomCommand(random *rand.Rand) Command {
	kinds := []Kind{CreateStream, UpdateStream, DeleteStream, CreateTopic, UpdateTopic, DeleteTopic, PurgeTopic,
		CreatePartitions, DeletePartitions, CreateUser, UpdateUser, DeleteUser, UpdatePermissions, ChangePassword,
		CreatePersonalAccessToken, DeletePersonalAccessToken, CreateConsumerGroup, DeleteConsumerGroup}
	return Command{
		Kind: kinds[random.IntN(len(kinds))], StreamID: uint32(random.IntN(4)), TopicID: uint32(random.IntN(3)),
		GroupID: uint32(random.IntN(3)), UserID: uint32(random.IntN(4)), Count: uint32(1 + random.IntN(3)),
		Name: fmt.Sprint("name", random.IntN(6)), HasName: random.IntN(2) == 0, HasStatus: true,
		Secret: fmt.Sprint("secret", random.IntN(100)), Status: uint8(1 + random.IntN(2)),
		HasPermissions: true, Permissions: []byte{byte(random.IntN(256)), 1, 0},
		CreatedAt: uint64(random.IntN(1000)), ExpiryAt: uint64(random.IntN(1000)),
		Config: TopicConfig{MessageExpiryMicros: uint64(random.IntN(9)), SegmentBytes: 1 << 20, Durability: 1,
			Options: []Option{{Key: "durability", Kind: 2, Value: []byte("written")}}},
	}
}

// TestStoreCrashReplay executes seeded random commands, crashing into a
// clone that keeps synced bytes plus a seeded share of unsynced ones, and
// reopening: the state must equal the state after the acknowledged
// commands (byte-equal snapshots), across snapshots and log resets.
func TestStoreCrashReplay(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -seed %d)", seed, seed)
	random := rand.New(rand.NewPCG(seed, 1))
	storage := memDriver{enginetest.NewMemStorage(seed)}
	s, err := openStore(t, storage)
	if err != nil {
		t.Fatal(err)
	}
	commands := 20000
	if testing.Short() {
		commands = 8000
	}
	crashes := 0
	for index := 0; index < commands; index++ {
		execute(t, storage, s, randomCommand(random))
		if random.IntN(200) == 0 {
			crashes++
			want := snapshotBytes(s.State())
			storage = memDriver{storage.Crash(seed + uint64(index))}
			if s, err = openStore(t, storage); err != nil {
				t.Fatalf("reopen after %d commands: %v", index, err)
			}
			if !bytes.Equal(snapshotBytes(s.State()), want) {
				t.Fatalf("state after crash at command %d differs from the acknowledged state", index)
			}
		}
	}
	t.Logf("%d records applied, %d crashes", s.State().Index, crashes)
	if s.State().Index < uint64(snapshotRecords) {
		t.Fatalf("only %d records applied, no snapshot exercised", s.State().Index)
	}
}

// TestStoreTornAndCorruptLog: junk after the last record is a torn append
// (truncated); damage to a record followed by a good one is ErrCorrupt.
func TestStoreTornAndCorruptLog(t *testing.T) {
	storage := memDriver{enginetest.NewMemStorage(3)}
	s, _ := openStore(t, storage)
	for index := 0; index < 5; index++ {
		execute(t, storage, s, Command{Kind: CreateStream, Name: fmt.Sprint("s", index)})
	}
	want := snapshotBytes(s.State())
	log, _ := storage.File("/data/metadata/log")
	storage.SetFile("/data/metadata/log", append(append([]byte(nil), log...), 9, 0, 0, 0, 1, 2, 3))
	s, err := openStore(t, storage)
	if err != nil || s.TornBytes != 7 || !bytes.Equal(snapshotBytes(s.State()), want) {
		t.Fatalf("torn tail: %v, torn bytes %d", err, s.TornBytes)
	}
	damaged := append([]byte(nil), log...)
	damaged[20] ^= 1
	storage.SetFile("/data/metadata/log", damaged)
	if _, err := openStore(t, storage); !errors.Is(err, engine.ErrCorrupt) {
		t.Fatalf("damaged first record: %v, want ErrCorrupt", err)
	}
}

// TestStoreSnapshotDamage: a snapshot is written whole and renamed into
// place, so a bad one is damage: open refuses it with ErrCorrupt.
func TestStoreSnapshotDamage(t *testing.T) {
	storage := memDriver{enginetest.NewMemStorage(4)}
	s, _ := openStore(t, storage)
	for index := 0; index < snapshotRecords+10; index++ {
		execute(t, storage, s, Command{Kind: CreateUser, Name: fmt.Sprintf("user%d", index), Secret: "h"})
	}
	want := snapshotBytes(s.State())
	if s, err := openStore(t, storage); err != nil || !bytes.Equal(snapshotBytes(s.State()), want) {
		t.Fatalf("reopen from snapshot and log: %v", err)
	}
	snapshot, ok := storage.File("/data/metadata/snapshot")
	if !ok {
		t.Fatal("no snapshot written")
	}
	damaged := append([]byte(nil), snapshot...)
	damaged[len(damaged)/2] ^= 0x10
	storage.SetFile("/data/metadata/snapshot", damaged)
	if _, err := openStore(t, storage); !errors.Is(err, engine.ErrCorrupt) {
		t.Fatalf("damaged snapshot: %v, want ErrCorrupt", err)
	}
}
