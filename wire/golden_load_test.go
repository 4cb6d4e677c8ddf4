package wire

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The golden vectors live next to PROTOCOL.md; they were captured from the
// Iggy Go SDK's real encoders and decoders.
var vectorsDir = filepath.Join("..", "..", "shared", "protocol", "vectors")

type requestVector struct {
	Command string          `json:"command"`
	Code    uint32          `json:"code"`
	Header  json.RawMessage `json:"header"`
	Payload string          `json:"payload_hex"`
	Frame   string          `json:"frame_hex"`
}

type requestVectorHeader struct {
	Client    string          `json:"client"`
	Command   string          `json:"command"`
	Operation string          `json:"operation"`
	Request   uint64          `json:"request"`
	Code      json.RawMessage `json:"reserved_code_at_196"`
	Session   uint64          `json:"session"`
	Size      uint32          `json:"size"`
}

type replyVector struct {
	Command       string            `json:"command"`
	Code          uint32            `json:"code"`
	Payload       string            `json:"payload_hex"`
	Body          string            `json:"reply_body_hex"`
	Frame         string            `json:"reply_frame_hex"`
	Header        map[string]any    `json:"reply_header"`
	ExpectedError string            `json:"expected_sdk_error"`
	Fields        map[string]any    `json:"fields"`
	Extra         map[string]string `json:"-"`
}

type statusVector struct {
	Code          uint32 `json:"code"`
	Name          string `json:"name"`
	MessageFormat string `json:"message_format"`
}

func loadJSON(t testing.TB, name string, into any) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(vectorsDir, name))
	if err != nil {
		t.Fatalf("read golden vectors: %v", err)
	}
	if err := json.Unmarshal(text, into); err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
}

func unhex(t testing.TB, text string) []byte {
	t.Helper()
	value, err := hex.DecodeString(text)
	if err != nil {
		t.Fatalf("bad hex %q: %v", text, err)
	}
	return value
}

// leadingNumber reads "160 (SendMessages)" or "0x00002c00 (0.11.0)" as a
// number; JSON numbers arrive as float64.
func leadingNumber(t testing.TB, value any) uint64 {
	t.Helper()
	switch typed := value.(type) {
	case float64:
		return uint64(typed)
	case string:
		field, _, _ := strings.Cut(typed, " ")
		number, err := strconv.ParseUint(field, 0, 64)
		if err != nil {
			t.Fatalf("not a number: %q", typed)
		}
		return number
	case json.RawMessage:
		var decoded any
		if err := json.Unmarshal(typed, &decoded); err != nil {
			t.Fatalf("bad raw number %s", typed)
		}
		return leadingNumber(t, decoded)
	}
	t.Fatalf("not a number: %#v", value)
	return 0
}

func parseClient(t testing.TB, text string) Uint128 {
	t.Helper()
	digits := strings.TrimPrefix(text, "0x")
	hi, err := strconv.ParseUint(digits[:16], 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	lo, err := strconv.ParseUint(digits[16:], 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	return Uint128{Lo: lo, Hi: hi}
}

var sdkErrorCode = regexp.MustCompile(`\(code (\d+)\)`)

// expectedErrorCode extracts N from "ierror.Unauthenticated (code 40)".
func expectedErrorCode(t testing.TB, text string) Status {
	t.Helper()
	match := sdkErrorCode.FindStringSubmatch(text)
	if match == nil {
		t.Fatalf("no code in %q", text)
	}
	code, _ := strconv.ParseUint(match[1], 10, 32)
	return Status(code)
}
