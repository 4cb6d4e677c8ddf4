package main

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
	"github.com/whippetio/whippet/wire/classic"
)

// detectionSample is one item of the legacy detection vectors.
type detectionSample struct {
	Name     string `json:"name"`
	Prefix   string `json:"prefix_hex"`
	Expected string `json:"expected"`
}

// TestClassicDetectionVectors replays every first-bytes sample of
// shared/protocol/legacy/vectors/detection.json against the real
// server's connection handling (PROTOCOL-0.8.md §11): a classic sample
// gets a classic reply, a VSR sample a 256-byte 0.9 reply or eviction,
// a rejected one is closed without a byte, and one that needs more bytes
// gets no reply: closed silently after the candidate deadline when it is
// a VSR candidate, left open when fewer than 8 bytes arrived.
func TestClassicDetectionVectors(t *testing.T) {
	raw, err := os.ReadFile("../../../shared/protocol/legacy/vectors/detection.json")
	if err != nil {
		t.Fatalf("read detection vectors: %v", err)
	}
	var samples []detectionSample
	if err := json.Unmarshal(raw, &samples); err != nil {
		t.Fatal(err)
	}
	if len(samples) != 126 {
		t.Fatalf("%d detection samples, want 126", len(samples))
	}
	s := startServer(t)
	// The samples run at once, since the deadline cases each wait seconds.
	failures := make(chan string, len(samples))
	var wg sync.WaitGroup
	for _, sample := range samples {
		wg.Go(func() {
			if why := replaySample(s, sample); why != "" {
				failures <- sample.Name + ": " + why
			}
		})
	}
	wg.Wait()
	close(failures)
	for why := range failures {
		t.Error(why)
	}
	// The server is unharmed: a classic and a 0.9 client still work.
	legacy := s.dialClassic(t)
	check(t, "classic ping after the samples", legacy.Ping(ctxTimeout(t)))
	check(t, "0.9 ping after the samples", s.dial(t).Ping(ctxTimeout(t)))
}

// replaySample sends one sample on a fresh connection and checks the
// server's answer; it returns why it failed, or "".
func replaySample(s *server, sample detectionSample) string {
	prefix, err := hex.DecodeString(sample.Prefix)
	if err != nil {
		return err.Error()
	}
	conn, err := net.DialTimeout("tcp", s.address, 5*time.Second)
	if err != nil {
		return err.Error()
	}
	defer conn.Close()
	// The vectors hold at most 256 bytes; the rest of a longer frame is
	// sent as zeros, so that a decided connection gets its reply.
	if _, err := conn.Write(completeFrame(sample.Expected, prefix)); err != nil {
		return err.Error()
	}
	switch sample.Expected {
	case "classic":
		return wantClassicReply(conn)
	case "vsr":
		if len(prefix) < wire.HeaderBytes {
			// Decided VSR on 8 zero bytes: the 0.9 reader waits for its
			// header with no detection deadline.
			return wantNothing(conn, classic.DetectCandidateDeadline+time.Second)
		}
		return wantVSRReply(conn)
	case "reject":
		return wantClosedSilently(conn, 2*time.Second)
	case "need-more":
		if len(prefix) < classic.DetectPrologueBytes {
			return wantNothing(conn, classic.DetectCandidateDeadline+time.Second)
		}
		if why := wantNothing(conn, classic.DetectCandidateDeadline/2); why != "" {
			return why
		}
		return wantClosedSilently(conn, classic.DetectCandidateDeadline+2*time.Second)
	}
	return "unknown expectation " + sample.Expected
}

// completeFrame pads a decided sample to the size its header declares.
func completeFrame(expected string, prefix []byte) []byte {
	size := len(prefix)
	switch {
	case expected == "classic":
		size = 4 + int(binary.LittleEndian.Uint32(prefix[0:4]))
	case expected == "vsr" && len(prefix) >= wire.HeaderBytes:
		size = int(binary.LittleEndian.Uint32(prefix[48:52]))
	}
	return append(prefix, make([]byte, max(0, size-len(prefix)))...)
}

func wantClassicReply(conn net.Conn) string {
	var prologue [classic.ReplyPrologueBytes]byte
	if why := readWithin(conn, prologue[:], 5*time.Second); why != "" {
		return why
	}
	header, err := classic.DecodeReplyHeader(prologue[:])
	if err != nil || !header.Status.Known() || (header.Status != classic.StatusOK && header.Length != 0) {
		return fmt.Sprintf("not a classic reply prologue: %x (%v)", prologue, err)
	}
	return ""
}

func wantVSRReply(conn net.Conn) string {
	head := make([]byte, wire.HeaderBytes)
	if why := readWithin(conn, head, 5*time.Second); why != "" {
		return why
	}
	size := int(binary.LittleEndian.Uint32(head[48:52]))
	if size < wire.HeaderBytes || size > wire.FrameBytesMax {
		return fmt.Sprintf("reply size %d", size)
	}
	frame := append(head, make([]byte, size-wire.HeaderBytes)...)
	if why := readWithin(conn, frame[wire.HeaderBytes:], 5*time.Second); why != "" {
		return why
	}
	if _, _, err := wire.DecodeReply(frame); err != nil {
		return fmt.Sprintf("the reply does not decode as 0.9: %v", err)
	}
	return ""
}

func readWithin(conn net.Conn, buf []byte, timeout time.Duration) string {
	_ = conn.SetReadDeadline(time.Now().Add(timeout)) // a failure shows as a read error
	if _, err := io.ReadFull(conn, buf); err != nil {
		return fmt.Sprintf("read %d reply bytes: %v", len(buf), err)
	}
	return ""
}

// wantClosedSilently: the server closes conn within timeout without
// sending a byte.
func wantClosedSilently(conn net.Conn, timeout time.Duration) string {
	_ = conn.SetReadDeadline(time.Now().Add(timeout)) // a failure shows as a read error
	var one [1]byte
	n, err := conn.Read(one[:])
	if n != 0 || err == nil || !(errors.Is(err, io.EOF) || isReset(err)) {
		return fmt.Sprintf("want a silent close; read %d bytes, %v", n, err)
	}
	return ""
}

// wantNothing: conn receives no byte and stays open for wait.
func wantNothing(conn net.Conn, wait time.Duration) string {
	_ = conn.SetReadDeadline(time.Now().Add(wait)) // a failure shows as a read error
	var one [1]byte
	n, err := conn.Read(one[:])
	var netErr net.Error
	if n != 0 || !errors.As(err, &netErr) || !netErr.Timeout() {
		return fmt.Sprintf("want no reply and an open connection for %v; read %d bytes, %v", wait, n, err)
	}
	return ""
}
