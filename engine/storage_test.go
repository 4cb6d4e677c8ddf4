package engine_test

import (
	"errors"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"unsafe"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

// TestStorageContract runs the same op script on DirectStorage (real
// files) and on enginetest.MemStorage, so the fake the crash tests rely on
// behaves like the real thing for every op the engine issues.
func TestStorageContract(t *testing.T) {
	backends := map[string]func(t *testing.T) (backend, string){
		"direct": func(t *testing.T) (backend, string) { return directBackend{engine.NewDirectStorage()}, t.TempDir() },
		"mem":    func(t *testing.T) (backend, string) { return memBackend{enginetest.NewMemStorage(1)}, "/contract" },
	}
	for _, name := range []string{"direct", "mem"} {
		t.Run(name, func(t *testing.T) {
			storage, directory := backends[name](t)
			runStorageScript(t, storage, directory)
		})
	}
}

func submit(t *testing.T, storage backend, op engine.Op) engine.Op {
	t.Helper()
	done := 0
	op.Callback = func(*engine.Op) { done++ }
	storage.Submit(&op)
	storage.drain()
	if done != 1 {
		t.Fatalf("op %d completed %d times", op.Code, done)
	}
	return op
}

func runStorageScript(t *testing.T, storage backend, directory string) {
	name := filepath.Join(directory, "a.log")
	if op := submit(t, storage, engine.Op{Code: engine.OpMkdir, Path: directory}); op.Err != nil {
		t.Fatal(op.Err)
	}
	if op := submit(t, storage, engine.Op{Code: engine.OpOpen, Path: name, Flags: engine.OpenDirect}); !errors.Is(op.Err, syscall.ENOENT) {
		t.Fatalf("open of a missing file without create: %v", op.Err)
	}
	opened := submit(t, storage, engine.Op{Code: engine.OpOpen, Path: name, Flags: engine.OpenDirect | engine.OpenCreate})
	file := engine.File(opened.Result)
	block := alignedBlock(t, 'x')
	if op := submit(t, storage, engine.Op{Code: engine.OpWrite, File: file, Buffer: block, Position: 4096}); op.Err != nil || op.Result != 4096 {
		t.Fatalf("write: %d, %v", op.Result, op.Err)
	}
	if op := submit(t, storage, engine.Op{Code: engine.OpSize, File: file}); op.Result != 8192 {
		t.Fatalf("size after a write at 4096: %d", op.Result)
	}
	read := alignedBlock(t, 0)
	if op := submit(t, storage, engine.Op{Code: engine.OpRead, File: file, Buffer: read, Position: 0}); op.Result != 4096 || read[0] != 0 {
		t.Fatalf("read of the hole: %d bytes, first %d", op.Result, read[0])
	}
	if op := submit(t, storage, engine.Op{Code: engine.OpRead, File: file, Buffer: read, Position: 8192}); op.Err != nil || op.Result != 0 {
		t.Fatalf("read at the end: %d, %v", op.Result, op.Err)
	}
	submit(t, storage, engine.Op{Code: engine.OpTruncate, File: file, Position: 5000})
	if op := submit(t, storage, engine.Op{Code: engine.OpSize, File: file}); op.Result != 5000 {
		t.Fatalf("size after truncate: %d", op.Result)
	}
	if op := submit(t, storage, engine.Op{Code: engine.OpSync, File: file}); op.Err != nil {
		t.Fatal(op.Err)
	}
	submit(t, storage, engine.Op{Code: engine.OpClose, File: file})
	renamed := filepath.Join(directory, "b.log")
	if op := submit(t, storage, engine.Op{Code: engine.OpRename, Path: name, Target: renamed}); op.Err != nil {
		t.Fatal(op.Err)
	}
	submit(t, storage, engine.Op{Code: engine.OpOpen, Path: filepath.Join(directory, "0.index"), Flags: engine.OpenCreate})
	listed := submit(t, storage, engine.Op{Code: engine.OpList, Path: directory})
	if !slices.Equal(listed.Names, []string{"0.index", "b.log"}) {
		t.Fatalf("list: %v", listed.Names)
	}
	if op := submit(t, storage, engine.Op{Code: engine.OpRemove, Path: filepath.Join(directory, "missing")}); op.Err != nil {
		t.Fatalf("removing a missing file: %v", op.Err)
	}
	directoryFile := submit(t, storage, engine.Op{Code: engine.OpOpen, Path: directory, Flags: engine.OpenDirectory})
	if op := submit(t, storage, engine.Op{Code: engine.OpSync, File: engine.File(directoryFile.Result), Flags: engine.OpenDirectory}); op.Err != nil {
		t.Fatalf("directory sync: %v", op.Err)
	}
}

func alignedBlock(t *testing.T, fill byte) []byte {
	raw := make([]byte, 8192)
	for start := 0; start < 4096; start++ {
		block := raw[start : start+4096]
		if uintptrOf(block)%4096 == 0 {
			for index := range block {
				block[index] = fill
			}
			return block
		}
	}
	t.Fatal("no aligned block")
	return nil
}

func uintptrOf(data []byte) uintptr { return uintptr(unsafe.Pointer(&data[0])) }
