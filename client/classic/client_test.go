package classic

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	codec "github.com/whippetio/whippet/wire/classic"
)

// The client is driven against a scripted server that replays the
// legacy golden frames (shared/protocol/legacy/vectors): each step checks
// the request frame the client wrote byte for byte and answers with the
// captured reply.

type requestVector struct {
	Command string `json:"command"`
	Frame   string `json:"frame_hex"`
}

type replyVector struct {
	Command string `json:"command"`
	Frame   string `json:"reply_frame_hex"`
}

func loadVectors[T any](t *testing.T, name string) []T {
	t.Helper()
	raw, err := os.ReadFile("../../../shared/protocol/legacy/vectors/" + name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	var out []T
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func frameOf[T any](t *testing.T, vectors []T, command string, pick func(T) (string, string)) []byte {
	t.Helper()
	for _, vector := range vectors {
		name, frame := pick(vector)
		if name == command {
			decoded, err := hex.DecodeString(frame)
			if err != nil {
				t.Fatal(err)
			}
			return decoded
		}
	}
	t.Fatalf("no vector %q", command)
	return nil
}

// scripted serves one connection: for each step it reads the expected
// request and writes the reply.
func scripted(t *testing.T, steps [][2][]byte) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = listener.Close() })
	done := make(chan error, 1)
	go func() {
		conn, err := listener.Accept()
		if err != nil {
			done <- err
			return
		}
		defer conn.Close()
		for _, step := range steps {
			got := make([]byte, len(step[0]))
			if _, err := io.ReadFull(conn, got); err != nil {
				done <- err
				return
			}
			if !bytes.Equal(got, step[0]) {
				done <- errors.New("request frame " + hex.EncodeToString(got) + ", want " + hex.EncodeToString(step[0]))
				return
			}
			if _, err := conn.Write(step[1]); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	t.Cleanup(func() {
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(5 * time.Second):
			t.Error("the scripted server did not finish")
		}
	})
	return listener.Addr().String()
}

func TestClientAgainstGoldenFrames(t *testing.T) {
	requests := loadVectors[requestVector](t, "requests.json")
	replies := loadVectors[replyVector](t, "responses.json")
	request := func(command string) []byte {
		return frameOf(t, requests, command, func(v requestVector) (string, string) { return v.Command, v.Frame })
	}
	reply := func(command string) []byte {
		return frameOf(t, replies, command, func(v replyVector) (string, string) { return v.Command, v.Frame })
	}
	address := scripted(t, [][2][]byte{
		{request("Ping"), {0, 0, 0, 0, 0, 0, 0, 0}},
		{request("LoginUser (wrong password)"), reply("LoginUser (bad credentials: status 42 InvalidCredentials)")},
		{request("LoginUser"), reply("LoginUser")},
		{request("GetStream"), reply("GetStream")},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, address)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	// The vector's LoginUser frames carry the Go SDK's version string.
	var loginBad codec.LoginUser
	if _, err := loginBad.Decode(request("LoginUser (wrong password)")[8:]); err != nil {
		t.Fatal(err)
	}
	var loginGood codec.LoginUser
	if _, err := loginGood.Decode(request("LoginUser")[8:]); err != nil {
		t.Fatal(err)
	}
	_, err = c.Call(ctx, loginBad, &codec.LoginReply{})
	if StatusOf(err) != codec.StatusInvalidCredentials {
		t.Fatalf("bad login: %v, want status 42", err)
	}
	var login codec.LoginReply
	if found, err := c.Call(ctx, loginGood, &login); err != nil || !found || login.UserID != 0 {
		t.Fatalf("login: %+v found %v err %v", login, found, err)
	}
	var getStream codec.GetStream
	if _, err := getStream.Decode(request("GetStream")[8:]); err != nil {
		t.Fatal(err)
	}
	details, found, err := c.GetStream(ctx, getStream.Stream)
	if err != nil || !found || details.Stream.Name != "orders" || len(details.Topics) != 2 {
		t.Fatalf("get stream %+v found %v err %v", details, found, err)
	}
}

// TestClientBreaksOnBadPrologue: a reply prologue that cannot be right
// (a body above the cap) leaves the stream out of step, so the client
// refuses every later call.
func TestClientBreaksOnBadPrologue(t *testing.T) {
	ping := []byte{4, 0, 0, 0, 1, 0, 0, 0}
	address := scripted(t, [][2][]byte{{ping, {0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, address)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ping(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("first ping: %v, want ErrClosed", err)
	}
	if err := c.Ping(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("a call after the break: %v, want ErrClosed", err)
	}
}
