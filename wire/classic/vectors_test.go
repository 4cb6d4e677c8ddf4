package classic

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// vectorsDir holds the legacy golden data, captured from the classic Go SDK
// and checked against the 0.8 server's own codecs.
var vectorsDir = filepath.Join("..", "..", "..", "shared", "protocol", "legacy", "vectors")

type requestVector struct {
	Command string `json:"command"`
	Code    uint32 `json:"code"`
	Header  struct {
		Code          uint32 `json:"code"`
		Length        uint32 `json:"length"`
		PayloadLength int    `json:"payload_length"`
	} `json:"header"`
	PayloadHex string `json:"payload_hex"`
	FrameHex   string `json:"frame_hex"`
}

type responseVector struct {
	Command     string `json:"command"`
	Code        uint32 `json:"code"`
	Status      uint32 `json:"status"`
	PayloadHex  string `json:"payload_hex"`
	FrameHex    string `json:"reply_frame_hex"`
	ReplyHeader struct {
		Status uint32 `json:"status"`
		Length uint32 `json:"length"`
	} `json:"reply_header"`
}

type detectionVector struct {
	Name     string `json:"name"`
	Prefix   string `json:"prefix_hex"`
	Expected string `json:"expected"`
	Decided  int    `json:"decided_after_bytes"`
	Reason   string `json:"reason"`
}

type errorCodeVector struct {
	Code  uint32 `json:"code"`
	Name  string `json:"name"`
	Known bool   `json:"known_to_legacy_go_sdk"`
}

func loadVectors[T any](t testing.TB, name string, want int) []T {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(vectorsDir, name))
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	var items []T
	if err := json.Unmarshal(text, &items); err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	if len(items) != want {
		t.Fatalf("%s holds %d items, want %d", name, len(items), want)
	}
	return items
}

func unhex(t testing.TB, text string) []byte {
	t.Helper()
	raw, err := hex.DecodeString(text)
	if err != nil {
		t.Fatalf("bad hex %q: %v", text, err)
	}
	return raw
}
