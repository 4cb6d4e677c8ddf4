package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/shard"
	"github.com/whippetio/whippet/wire"
)

// The integration tests build the real binary once per test run, start it
// on 127.0.0.1 with a free port and a temporary data directory, and drive
// it through our client: no component of ours is mocked.

var (
	buildOnce   sync.Once
	binaryPath  string
	buildOutput []byte
	buildErr    error
	binaryDir   string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binaryDir != "" {
		_ = os.RemoveAll(binaryDir) // a temp dir; leftovers are harmless
	}
	os.Exit(code)
}

func serverBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		binaryDir, buildErr = os.MkdirTemp("", "whippet-server-test")
		if buildErr != nil {
			return
		}
		binaryPath = filepath.Join(binaryDir, "whippet-server")
		command := exec.Command("go", "build", "-o", binaryPath, ".")
		buildOutput, buildErr = command.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build whippet-server: %v\n%s", buildErr, buildOutput)
	}
	return binaryPath
}

// server is one running whippet-server process.
type server struct {
	t       testing.TB
	args    []string
	dataDir string
	address string
	env     []string
	command *exec.Cmd
	logs    *logBuffer
	exited  chan error
}

// shardCount is two shards where the process may use two CPUs (so that
// cross-shard paths run), else one.
func shardCount(t testing.TB) int {
	cpus, err := shard.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	return min(2, len(cpus))
}

// logBuffer keeps the server's log and signals the started line.
type logBuffer struct {
	mu      sync.Mutex
	text    strings.Builder
	started chan string
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.text.String()
}

// startServer starts the binary with a fresh data directory; extra
// environment entries (KEY=VALUE) override the defaults.
func startServer(t testing.TB, extra ...string) *server {
	t.Helper()
	s := &server{t: t, dataDir: t.TempDir()}
	s.env = append([]string{"WHIPPET_SYSTEM_PATH=" + s.dataDir, "WHIPPET_TCP_ADDRESS=127.0.0.1:0",
		"WHIPPET_SYSTEM_SHARDING_CPU_ALLOCATION=" + strconv.Itoa(shardCount(t)), "WHIPPET_SYSTEM_SHARDING_SPIN=0 us",
		"WHIPPET_SYSTEM_CACHE_SIZE=32 MiB", "WHIPPET_HTTP_ADDRESS=127.0.0.1:0"}, extra...)
	if backend := os.Getenv("WHIPPET_SYSTEM_SHARDING_BACKEND"); backend != "" {
		s.env = append(s.env, "WHIPPET_SYSTEM_SHARDING_BACKEND="+backend)
	}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *server) start() {
	s.t.Helper()
	if err := s.launch(30 * time.Second); err != nil {
		s.t.Fatal(err)
	}
}

// launch starts the process and waits for its started line; an exit or
// a timeout first is the error, with the log.
func (s *server) launch(timeout time.Duration) error {
	s.command = exec.Command(serverBinary(s.t), s.args...)
	s.command.Env = append(environWithout("WHIPPET_"), s.env...)
	stderr, err := s.command.StderrPipe()
	if err != nil {
		return err
	}
	s.logs = &logBuffer{started: make(chan string, 1)}
	if err := s.command.Start(); err != nil {
		return err
	}
	s.exited = make(chan error, 1)
	// Wait closes the pipe once the process exits, so it runs only after
	// the log was read to its end: an exit's last lines are never lost.
	go func() {
		s.readLogs(stderr)
		s.exited <- s.command.Wait()
	}()
	select {
	case s.address = <-s.logs.started:
		return nil
	case err := <-s.exited:
		s.command = nil
		return &startError{exit: err, log: s.logs.String()}
	case <-time.After(timeout):
		return fmt.Errorf("server did not start in %v\n%s", timeout, s.logs)
	}
}

// startError is a server that exited before its started line.
type startError struct {
	exit error
	log  string
}

func (e *startError) Error() string {
	return fmt.Sprintf("server exited at start: %v\n%s", e.exit, e.log)
}

// environWithout is this process's environment less the variables named
// with prefix: a developer's WHIPPET_* settings must not reach the servers
// a test starts, or the test would run another configuration than it says.
func environWithout(prefix string) []string {
	var out []string
	for _, entry := range os.Environ() {
		if !strings.HasPrefix(entry, prefix) {
			out = append(out, entry)
		}
	}
	return out
}

func (s *server) readLogs(stderr io.Reader) {
	scanner := bufio.NewScanner(stderr)
	for scanner.Scan() {
		line := scanner.Text()
		s.logs.mu.Lock()
		s.logs.text.WriteString(line + "\n")
		s.logs.mu.Unlock()
		if strings.Contains(line, "whippet-server started") {
			for _, field := range strings.Fields(line) {
				if address, ok := strings.CutPrefix(field, "address="); ok {
					s.logs.started <- address
				}
			}
		}
	}
	// A line too long for the scanner ends the scan: the rest is drained,
	// or the process would block on a full pipe and never exit.
	_, _ = io.Copy(io.Discard, stderr)
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop() {
	if s.command == nil || s.command.ProcessState != nil {
		return
	}
	_ = s.command.Process.Signal(syscall.SIGTERM) // the wait below reports what happened
	select {
	case err := <-s.exited:
		if err != nil {
			s.t.Errorf("server exit: %v\n%s", err, s.logs)
		}
	case <-time.After(30 * time.Second):
		_ = s.command.Process.Kill() // it hung; the error below says so
		s.t.Errorf("server did not stop\n%s", s.logs)
	}
	s.command = nil
}

// crash kills the server with SIGKILL (an unclean stop: no shutdown
// flush, no clean close; the page cache survives, so it is not a power
// loss) and starts it again on the same data.
func (s *server) crash() {
	s.t.Helper()
	if err := s.command.Process.Kill(); err != nil {
		s.t.Fatal(err)
	}
	<-s.exited
	s.command = nil
	s.start()
}

// restart stops the server and starts it again on the same data.
func (s *server) restart() {
	s.t.Helper()
	s.stop()
	s.start()
}

// dial connects and logs in as root.
func (s *server) dial(t testing.TB) *client.Client {
	t.Helper()
	return s.dialAs(t, "iggy", "iggy")
}

func (s *server) dialAs(t testing.TB, username, password string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, client.Options{Address: s.address, Username: username, Password: password,
		ReconnectAttempts: -1, ReplyTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("dial %s as %s: %v\n%s", s.address, username, err, s.logs)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// raw opens a plain TCP connection for hand-made frames.
func (s *server) raw(t testing.TB) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", s.address, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func ctxTimeout(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// wantStatus fails unless err carries status.
func wantStatus(t *testing.T, what string, err error, status wire.Status) {
	t.Helper()
	if got := client.StatusOf(err); got != status {
		t.Fatalf("%s: status %v (err %v), want %v", what, got, err, status)
	}
}

func must[T any](t *testing.T, what string) func(value T, err error) T {
	return func(value T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return value
	}
}

func check(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func id(n uint32) wire.Identifier { return wire.NumericID(n) }

// messages builds count messages with payloads "<prefix>-<i>" and one
// String user header.
func messages(prefix string, count int) []wire.OutgoingMessage {
	out := make([]wire.OutgoingMessage, count)
	for i := range out {
		headers := wire.Headers{wire.StringHeader("k", fmt.Sprintf("v%d", i))}
		encoded := make([]byte, headers.EncodedSize())
		headers.Encode(encoded)
		out[i] = wire.OutgoingMessage{ID: wire.Uint128{Lo: uint64(i + 1)}, Payload: []byte(fmt.Sprintf("%s-%d", prefix, i)),
			UserHeaders: encoded}
	}
	return out
}

// payloads returns the payloads of a poll reply.
func payloads(t *testing.T, polled *wire.PolledMessages) []string {
	t.Helper()
	var out []string
	iterator := polled.Messages()
	for {
		message, ok := iterator.Next()
		if !ok {
			break
		}
		out = append(out, string(message.Payload))
	}
	if len(out) != int(polled.MessagesCount) {
		t.Fatalf("poll reply counts %d messages, holds %d", polled.MessagesCount, len(out))
	}
	return out
}

// dialToken connects and logs in with a personal access token.
func (s *server) dialToken(t testing.TB, token string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, client.Options{Address: s.address, Token: token, ReconnectAttempts: -1})
	if err != nil {
		t.Fatalf("dial with a token: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
