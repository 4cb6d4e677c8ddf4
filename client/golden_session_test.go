package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// goldenReplyFor pairs a request vector with the reply vector the
// reference server sends for it; most share the command name.
var goldenReplyFor = map[string]string{
	"GetClusterMetadata (before login)": "GetClusterMetadata (denied before login: status 40 Unauthenticated)",
	"CreateStream (duplicate name)":     "CreateStream (committed rejection in the result section: 1012 StreamNameAlreadyExists)",
	"GetStream (not found)":             "GetStream (not found: status 0, empty body)",
	"PollMessages (sliced)":             "PollMessages (server-sliced batch)",
	"FlushUnsavedBuffer":                "FlushUnsavedBuffer (reference server: status 5 FeatureUnavailable)",
	"Unknown command 60000":             "Unknown command (status 3 InvalidCommand)",
}

type scriptStep struct {
	name    string
	request []byte
	reply   []byte
}

// goldenScript lists, in session order, every golden request frame the
// client must write and the golden reply the peer answers it with. The
// two leader checks after each login are part of the script.
func goldenScript(t *testing.T) []scriptStep {
	var requests []goldenRequest
	loadVectors(t, "requests.json", &requests)
	var replies []goldenReply
	loadVectors(t, "responses.json", &replies)
	replyFrames := map[string][]byte{}
	for _, reply := range replies {
		replyFrames[reply.Command] = unhex(t, reply.Frame)
	}
	var script []scriptStep
	for _, request := range requests {
		frame := unhex(t, request.Frame)
		name := request.Command
		if paired, ok := goldenReplyFor[name]; ok {
			name = paired
		}
		reply := replyFrames[name]
		if request.Command == "CreatePersonalAccessToken (Go SDK expiry quirk)" {
			reply = replyFrame(t, frame, &wire.RawToken{Token: "temp-token-raw"})
		}
		if reply == nil {
			t.Fatalf("no golden reply for %q", request.Command)
		}
		script = append(script, scriptStep{name: request.Command, request: frame, reply: reply})
	}
	// The PAT login is followed by the leader check, under session 2.
	check := bytes.Clone(script[3].request)
	binary.LittleEndian.PutUint64(check[184:], 2)
	return append(script, scriptStep{name: "GetClusterMetadata after the PAT login", request: check,
		reply: replyFrames["GetClusterMetadata"]})
}

// scriptedPeer answers each frame with the next script step, after checking
// the client wrote exactly the golden request.
func scriptedPeer(t *testing.T, script []scriptStep) (*peer, func() int) {
	var mu sync.Mutex
	next := 0
	p := startPeer(t, nil)
	p.handler = func(_ int, frame []byte) ([][]byte, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(script) {
			p.fail("request after the end of the script")
			return nil, true
		}
		step := script[next]
		next++
		if !bytes.Equal(frame, step.request) {
			p.fail(step.name + ": client wrote\n" + strconv.Quote(string(frame)) + "\nwant the golden frame")
			return nil, true
		}
		return [][]byte{step.reply}, false
	}
	return p, func() int {
		mu.Lock()
		defer mu.Unlock()
		return next
	}
}

// TestGoldenSession drives the client through the whole golden session:
// every one of the 55 golden request frames must leave the client byte for
// byte, and every golden reply must decode into the expected result.
func TestGoldenSession(t *testing.T) {
	script := goldenScript(t)
	p, progress := scriptedPeer(t, script)
	ctx := testContext(t)
	client, err := Dial(ctx, testOptions(p.address()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for _, step := range sessionSteps(t) {
		if err := step.run(ctx, client); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
	}
	if got := progress(); got != len(script) {
		t.Fatalf("client wrote %d of %d golden frames", got, len(script))
	}
}

type sessionStep struct {
	name string
	run  func(ctx context.Context, client *Client) error
}

func expectStatus(err error, want wire.Status) error {
	if !errors.Is(err, want) {
		return errors.Join(errors.New("want status "+want.String()), err)
	}
	return nil
}

func check(ok bool, what string) error {
	if !ok {
		return errors.New(what)
	}
	return nil
}
