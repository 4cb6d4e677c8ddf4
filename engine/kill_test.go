package engine_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/enginetest"
)

const (
	killChildEnvironment = "ENGINE_KILL9_DIRECTORY"
	killCyclesLong       = 50
	killCyclesShort      = 4
)

// TestKill9Loop starts a child process that appends persisted batches to a
// partition on real files and reports each acknowledgement on stdout, kills
// it with SIGKILL at a random moment, reopens the partition and checks that
// every acknowledged offset is present, contiguous and holds the message
// appended there; then the next child continues. 50 cycles in the long
// run, 4 in -short.
func TestKill9Loop(t *testing.T) {
	if os.Getenv(killChildEnvironment) != "" {
		t.Skip("running as the kill -9 child")
	}
	cycles := killCyclesLong
	if testing.Short() {
		cycles = killCyclesShort
	}
	random := newRandom(testSeed(t))
	directory := t.TempDir()
	options := engine.PartitionOptions{Directory: directory, SegmentBytes: 1 << 20, Logger: quiet}
	acked := uint64(0)
	for cycle := 0; cycle < cycles; cycle++ {
		lifetime := time.Duration(30+random.IntN(250)) * time.Millisecond
		acked = max(acked, runKillChild(t, directory, lifetime))
		storage := directBackend{engine.NewDirectStorage()}
		p := mustOpen(t, storage, options)
		if p.OffsetNext() < acked {
			t.Fatalf("cycle %d: recovered up to offset %d, %d were acknowledged", cycle, p.OffsetNext(), acked)
		}
		checkKillMessages(t, storage, p)
		t.Logf("cycle %d: child lived %v, %d offsets, %d acknowledged, torn bytes %d",
			cycle, lifetime, p.OffsetNext(), acked, p.TornBytes())
		closePartition(t, storage, p)
	}
	if acked == 0 {
		t.Fatal("the child never acknowledged an append: the loop tested nothing")
	}
}

// runKillChild runs the child for lifetime, kills it, and returns one past
// the highest offset it reported acknowledged.
func runKillChild(t *testing.T, directory string, lifetime time.Duration) uint64 {
	command := exec.Command(os.Args[0], "-test.run=^TestKill9Child$", "-test.count=1")
	command.Env = append(os.Environ(), killChildEnvironment+"="+directory)
	var stdout bytes.Buffer
	command.Stdout = &stdout
	command.Stderr = &stdout
	if err := command.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.NewTimer(lifetime)
	<-timer.C
	_ = command.Process.Kill() // SIGKILL; an already exited child is reported by Wait
	_ = command.Wait()         // the exit status of a killed child is expected to be an error
	acked := uint64(0)
	scanner := bufio.NewScanner(&stdout)
	for scanner.Scan() {
		if fields := strings.Fields(scanner.Text()); len(fields) == 2 && fields[0] == "acked" {
			end, err := strconv.ParseUint(fields[1], 10, 64)
			if err == nil {
				acked = max(acked, end)
			}
		}
		if strings.Contains(scanner.Text(), "FAIL") || strings.Contains(scanner.Text(), "panic") {
			t.Fatalf("child failed: %s", stdout.String())
		}
	}
	return acked
}

func killPayload(offset uint64) []byte { return []byte("offset:" + strconv.FormatUint(offset, 10)) }

// checkKillMessages polls everything and checks each message is the one
// the child appended at that offset.
func checkKillMessages(t *testing.T, storage backend, p *engine.Partition) {
	out := make([]byte, 0, 4<<20)
	for offset := uint64(0); offset < p.OffsetNext(); {
		got := poll(t, storage, p, &engine.PollOp{Strategy: engine.PollOffset, Value: offset, Count: 5000, Out: out})
		if len(got) == 0 {
			t.Fatalf("nothing at offset %d of %d", offset, p.OffsetNext())
		}
		for _, message := range got {
			if message.Offset != offset || !bytes.Equal(message.Payload, killPayload(offset)) {
				t.Fatalf("offset %d holds %q at %d", offset, message.Payload, message.Offset)
			}
			offset++
		}
	}
}

// TestKill9Child is the child of TestKill9Loop: it appends until killed,
// a few batches in flight at a time, printing "acked <end>" after each
// acknowledgement.
func TestKill9Child(t *testing.T) {
	directory := os.Getenv(killChildEnvironment)
	if directory == "" {
		t.Skip("only runs as the child of TestKill9Loop")
	}
	storage := directBackend{engine.NewDirectStorage()}
	p := mustOpen(t, storage, engine.PartitionOptions{Directory: directory, SegmentBytes: 1 << 20, Logger: quiet})
	next := p.OffsetNext()
	for batch := uint64(0); ; batch++ {
		for inFlight := 0; inFlight < 3; inFlight++ {
			messages := make([]enginetest.Message, 1+batch%4)
			for index := range messages {
				messages[index] = enginetest.Message{IDLow: next + uint64(index), Payload: killPayload(next + uint64(index))}
			}
			op := &engine.AppendOp{Batch: enginetest.Batch(1, messages...), Timestamp: 1 + batch}
			op.Done = func(op *engine.AppendOp) {
				if op.Err == nil {
					fmt.Fprintf(os.Stdout, "acked %d\n", op.BaseOffset+uint64(op.Count))
				}
			}
			if err := p.Append(op); err != nil || op.BaseOffset != next {
				t.Fatalf("append at %d: offset %d, %v", next, op.BaseOffset, err)
			}
			next += uint64(len(messages))
		}
		storage.drain()
	}
}
