package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
	"golang.org/x/sys/unix"
)

// The ENOSPC test runs the server on a 16 MiB file system and fills it:
// the producer gets an error status, never a hang or a disconnect; every
// acknowledged message stays readable; and once space is freed (a purge)
// sends succeed again.

const (
	enospcSize         = 16 << 20
	enospcBatch        = 16
	enospcPayloadBytes = 4096
	enospcSendsMax     = 10_000 // 640 MiB: far more than the file system holds
	enospcBlock        = 4096
	// enospcForceLoopEnv set makes the test use the ext4 loop image even
	// where tmpfs takes O_DIRECT.
	enospcForceLoopEnv = "WHIPPET_TEST_ENOSPC_LOOP"
)

// smallFileSystem mounts a 16 MiB file system that takes O_DIRECT writes
// (tmpfs, else an ext4 image on a loop device) and returns its directory;
// it is unmounted in cleanup. It skips the test when mounting is refused.
func smallFileSystem(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "mnt")
	check(t, "mkdir", os.Mkdir(dir, 0o755))
	err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(enospcSize))
	if errors.Is(err, unix.EPERM) {
		t.Skip("mounting a tmpfs is not permitted here (needs CAP_SYS_ADMIN)")
	}
	check(t, "mount tmpfs", err)
	if os.Getenv(enospcForceLoopEnv) != "" {
		t.Logf("%s set: using an ext4 loop image", enospcForceLoopEnv)
		unmount(t, dir)
		return loopFileSystem(t, base, dir)
	}
	if directErr := probeDirectWrite(dir); directErr == nil {
		t.Cleanup(func() { unmount(t, dir) })
		t.Logf("data on a %d MiB tmpfs", enospcSize>>20)
		return dir
	} else {
		t.Logf("tmpfs refuses O_DIRECT writes (%v): using an ext4 loop image", directErr)
	}
	unmount(t, dir)
	return loopFileSystem(t, base, dir)
}

// loopFileSystem formats an ext4 image file and mounts it through a loop
// device.
func loopFileSystem(t *testing.T, base, dir string) string {
	t.Helper()
	for _, tool := range []string{"mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: no size-limited file system for the ENOSPC test", tool)
		}
	}
	image := filepath.Join(base, "fs.img")
	check(t, "image", os.WriteFile(image, nil, 0o644))
	check(t, "image size", os.Truncate(image, enospcSize))
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", image).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v\n%s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", image, dir).CombinedOutput(); err != nil {
		t.Skipf("mount -o loop refused (no loop devices?): %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v\n%s", dir, err, out)
		}
	})
	if err := probeDirectWrite(dir); err != nil {
		t.Skipf("the ext4 loop image refuses O_DIRECT writes: %v", err)
	}
	return dir
}

// probeDirectWrite writes one aligned block with O_DIRECT into dir.
func probeDirectWrite(dir string) error {
	path := filepath.Join(dir, "direct-probe")
	defer func() { _ = os.Remove(path) }() // best effort
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_RDWR|unix.O_DIRECT, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(fd) }() // read-only use below
	block, err := unix.Mmap(-1, 0, enospcBlock, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Munmap(block) }() // the probe's own mapping
	_, err = unix.Pwrite(fd, block, 0)
	return err
}

func unmount(t *testing.T, dir string) {
	t.Helper()
	if err := unix.Unmount(dir, 0); err != nil {
		t.Errorf("unmount %s: %v", dir, err)
	}
}

// startServerIn starts the binary on dataDir (startServer's settings).
func startServerIn(t *testing.T, dataDir string) *server {
	t.Helper()
	s := &server{t: t, dataDir: dataDir}
	s.env = []string{"WHIPPET_SYSTEM_PATH=" + dataDir, "WHIPPET_TCP_ADDRESS=127.0.0.1:0",
		"WHIPPET_SYSTEM_SHARDING_CPU_ALLOCATION=" + strconv.Itoa(shardCount(t)), "WHIPPET_SYSTEM_SHARDING_SPIN=0 us",
		"WHIPPET_SYSTEM_CACHE_SIZE=32 MiB", "WHIPPET_HTTP_ADDRESS=127.0.0.1:0"}
	if backend := os.Getenv("WHIPPET_SYSTEM_SHARDING_BACKEND"); backend != "" {
		s.env = append(s.env, "WHIPPET_SYSTEM_SHARDING_BACKEND="+backend)
	}
	s.start()
	t.Cleanup(s.stop)
	return s
}

// enospcLedger holds the acknowledged payloads of one partition by offset.
type enospcLedger struct {
	topic    uint32
	payloads map[uint64][]byte
	next     uint64
}

// enospcPayloads builds a batch whose payloads name their sequence.
func enospcPayloads(topic uint32, first int) []wire.OutgoingMessage {
	out := make([]wire.OutgoingMessage, enospcBatch)
	for i := range out {
		payload := bytes.Repeat([]byte{byte(first + i)}, enospcPayloadBytes)
		copy(payload, fmt.Sprintf("t%d-m%d|", topic, first+i))
		out[i] = wire.OutgoingMessage{ID: wire.Uint128{Hi: uint64(topic) + 1, Lo: uint64(first+i) + 1}, Payload: payload}
	}
	return out
}

// send sends one batch and records it when acknowledged.
func (l *enospcLedger) send(t *testing.T, c *client.Client) error {
	t.Helper()
	ctx := ctxTimeout(t)
	outgoing := enospcPayloads(l.topic, int(l.next))
	confirmations, err := c.SendMessages(ctx, id(0), id(l.topic), wire.PartitionID(0), outgoing)
	if err != nil {
		return err
	}
	base := confirmations[0].BaseOffset
	if base != l.next {
		t.Fatalf("topic %d: batch confirmed at offset %d, %d was due", l.topic, base, l.next)
	}
	for i, message := range outgoing {
		l.payloads[base+uint64(i)] = message.Payload
	}
	l.next += uint64(len(outgoing))
	return nil
}

// verify reads the partition from from and compares it with the ledger:
// every acknowledged message present, intact, nothing beyond.
func (l *enospcLedger) verify(t *testing.T, c *client.Client, from uint64) {
	t.Helper()
	ctx := ctxTimeout(t)
	offset := from
	for {
		polled, err := c.PollMessages(ctx, &wire.PollMessages{Consumer: single(0), Stream: id(0), Topic: id(l.topic),
			Partition: wire.PartitionOf(0), Strategy: wire.Strategy{Kind: wire.StrategyOffset, Value: offset}, Count: 500})
		check(t, "poll", err)
		count := 0
		iterator := polled.Messages()
		for message, ok := iterator.Next(); ok; message, ok = iterator.Next() {
			want, acknowledged := l.payloads[message.Offset]
			if message.Offset != offset || !acknowledged || !bytes.Equal(message.Payload, want) {
				t.Fatalf("topic %d: offset %d (due %d) holds %q…, acknowledged %v", l.topic, message.Offset, offset,
					message.Payload[:min(16, len(message.Payload))], acknowledged)
			}
			offset++
			count++
		}
		if count == 0 {
			break
		}
	}
	if offset != l.next {
		t.Fatalf("topic %d: read %d..%d, acknowledged up to %d", l.topic, from, offset, l.next)
	}
}

// TestDiskFull fills a 16 MiB file system through a producer, for each
// durability that acknowledges after the disk: persisted and written
// (persisted only in -short).
func TestDiskFull(t *testing.T) {
	for _, durability := range []string{"persisted", "written"} {
		if testing.Short() && durability != "persisted" {
			continue // one durability is enough for the quick run
		}
		t.Run(durability, func(t *testing.T) { diskFull(t, durability) })
	}
}

func diskFull(t *testing.T, durability string) {
	dir := smallFileSystem(t)
	s := startServerIn(t, dir)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	must[*wire.StreamInfo](t, "stream")(c.CreateStream(ctx, "full", nil))
	keep := &enospcLedger{topic: 0, payloads: map[uint64][]byte{}}
	fill := &enospcLedger{topic: 1, payloads: map[uint64][]byte{}}
	for _, name := range []string{"keep", "fill"} {
		must[*wire.TopicDetails](t, "topic")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: id(0), PartitionsCount: 1,
			Name: name, Options: wire.Headers{wire.Uint64Header(wire.OptionSegmentSize, 1<<20),
				wire.StringHeader(wire.OptionDurability, durability)}}))
	}
	for range 4 {
		check(t, "send to keep", keep.send(t, c))
	}
	fullAndReadable(t, s, c, keep, fill)
	check(t, "purge the full topic", c.PurgeTopic(ctx, id(0), id(1)))
	fill.payloads, fill.next = map[uint64][]byte{}, 0 // a purge starts the partition again at offset 0
	check(t, "send to keep after the purge", keep.send(t, c))
	check(t, "send to fill after the purge", fill.send(t, c))
	keep.verify(t, c, 0)
	fill.verify(t, c, 0)
	s.restart()
	c = s.dial(t)
	keep.verify(t, c, 0)
	fill.verify(t, c, 0)
	fullAndReadable(t, s, c, keep, fill)
	check(t, "delete the full topic", c.DeleteTopic(ctx, id(0), id(1)))
	check(t, "send to keep after the delete", keep.send(t, c))
	keep.verify(t, c, 0)
	s.restart()
	c = s.dial(t)
	keep.verify(t, c, 0)
	check(t, "send after the restart", keep.send(t, c))
}

// fullAndReadable fills the disk through fill's topic and checks the
// refusal and that everything acknowledged stays readable.
func fullAndReadable(t *testing.T, s *server, c *client.Client, keep, fill *enospcLedger) {
	t.Helper()
	ctx := ctxTimeout(t)
	began := time.Now()
	refusal := fillUp(t, s, c, fill)
	t.Logf("full after %d acknowledged messages (%d MiB of payload) in %v: %v", fill.next,
		fill.next*enospcPayloadBytes>>20, time.Since(began).Round(time.Millisecond), refusal)
	var status *client.Error
	if !errors.As(refusal, &status) || client.StatusOf(refusal) != wire.StatusCannotAppendToFile {
		t.Fatalf("a send to a full disk failed without the CannotAppendToFile status: %v", refusal)
	}
	check(t, "ping while full", c.Ping(ctx))
	keep.verify(t, c, 0)
	fill.verify(t, c, 0)
	if err := keep.send(t, c); err != nil && client.StatusOf(err) == wire.StatusOK {
		t.Fatalf("a second send while full failed without a status: %v", err)
	}
	keep.verify(t, c, 0)
}

// fillUp sends to ledger's topic until a send fails, and returns that error.
func fillUp(t *testing.T, s *server, c *client.Client, ledger *enospcLedger) error {
	t.Helper()
	for range enospcSendsMax {
		err := ledger.send(t, c)
		if err == nil {
			continue
		}
		if errors.Is(err, client.ErrDisconnected) || errors.Is(err, client.ErrClosed) {
			t.Fatalf("the server dropped the producer on a full disk: %v\n%s", err, s.logs)
		}
		return err
	}
	t.Fatalf("%d batches of %d bytes fit on a %d-byte file system", enospcSendsMax, enospcBatch*enospcPayloadBytes,
		enospcSize)
	return nil
}
