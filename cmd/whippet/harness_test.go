package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests build the real whippet-server and whippet binaries once per
// run, start the server on 127.0.0.1 with a free port and a temporary data
// directory, and run the CLI binary against it as a user would: nothing of
// ours is mocked, and every assertion reads the CLI's own output.

var binaries struct {
	dir    string
	server string
	cli    string
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "whippet-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }() // a temp dir; leftovers are harmless
	binaries.dir = dir
	binaries.server = filepath.Join(dir, "whippet-server")
	binaries.cli = filepath.Join(dir, "whippet")
	for _, build := range [][]string{{binaries.server, "../whippet-server"}, {binaries.cli, "."}} {
		output, err := exec.Command("go", "build", "-o", build[0], build[1]).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", build[1], err, output)
			return 1
		}
	}
	return m.Run()
}

// server is one running whippet-server process.
type server struct {
	t       *testing.T
	address string
	// tlsAddress is the TLS listener's address (tcp.tls), "" without one.
	tlsAddress string
	command    *exec.Cmd
	mu         sync.Mutex
	logs       strings.Builder
	exited     chan error
}

// startServer runs the server; extra adds WHIPPET_* settings.
func startServer(t *testing.T, extra ...string) *server {
	t.Helper()
	s := &server{t: t, exited: make(chan error, 1)}
	s.command = exec.Command(binaries.server)
	s.command.Env = append(cleanEnv(), "WHIPPET_SYSTEM_PATH="+t.TempDir(), "WHIPPET_TCP_ADDRESS=127.0.0.1:0",
		"WHIPPET_HTTP_ENABLED=false", "WHIPPET_SYSTEM_SHARDING_CPU_ALLOCATION=2",
		"WHIPPET_SYSTEM_SHARDING_SPIN=0 us", "WHIPPET_SYSTEM_CACHE_SIZE=32 MiB")
	s.command.Env = append(s.command.Env, extra...)
	stderr, err := s.command.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.command.Start(); err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 1)
	go s.readLogs(stderr, started)
	go func() { s.exited <- s.command.Wait(); close(s.exited) }()
	t.Cleanup(s.stop)
	select {
	case s.address = <-started:
	case err := <-s.exited:
		t.Fatalf("server exited at start: %v\n%s", err, s.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not start\n%s", s.log())
	}
	return s
}

func (s *server) readLogs(stderr io.Reader, started chan<- string) {
	scanner := bufio.NewScanner(stderr)
	for scanner.Scan() {
		line := scanner.Text()
		s.mu.Lock()
		s.logs.WriteString(line + "\n")
		for _, field := range strings.Fields(line) {
			if address, ok := strings.CutPrefix(field, "tls_address="); ok {
				s.tlsAddress = address // logged before "started", read after it
			}
		}
		s.mu.Unlock()
		if !strings.Contains(line, "whippet-server started") {
			continue
		}
		for _, field := range strings.Fields(line) {
			if address, ok := strings.CutPrefix(field, "address="); ok {
				started <- address
			}
		}
	}
}

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

func (s *server) stop() {
	_ = s.command.Process.Signal(syscall.SIGTERM) // the wait below reports what happened
	select {
	case err, open := <-s.exited:
		if open && err != nil {
			s.t.Errorf("server exit: %v\n%s", err, s.log())
		}
	case <-time.After(30 * time.Second):
		_ = s.command.Process.Kill() // it hung; the error below says so
		s.t.Errorf("server did not stop\n%s", s.log())
	}
}

// cleanEnv is the test's environment without WHIPPET_* and IGGY_*
// variables, so a developer's settings cannot leak into a run.
func cleanEnv() []string {
	var env []string
	for _, entry := range os.Environ() {
		if !strings.HasPrefix(entry, "WHIPPET_") && !strings.HasPrefix(entry, "IGGY_") {
			env = append(env, entry)
		}
	}
	return env
}

// result is one CLI run.
type result struct {
	args   []string
	stdout string
	stderr string
	code   int
}

func (r result) String() string {
	return fmt.Sprintf("whippet %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout,
		r.stderr)
}

// run executes the CLI with env (KEY=VALUE entries) and stdin.
func runCLI(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	command := exec.Command(binaries.cli, args...)
	// A fresh home per run unless env names one (the last entry wins), so
	// the developer's ~/.whippet never reaches a test.
	command.Env = append(append(cleanEnv(), "WHIPPET_HOME="+t.TempDir()), env...)
	command.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	command.Stdout, command.Stderr = &stdout, &stderr
	err := command.Run()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String()}
	if exitErr, ok := err.(*exec.ExitError); ok {
		r.code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("run whippet %v: %v", args, err)
	}
	return r
}

// root runs the CLI as the root user, the address in the environment.
func (s *server) root(t *testing.T, args ...string) result {
	t.Helper()
	return runCLI(t, s.env("iggy", "iggy"), "", args...)
}

func (s *server) env(username, password string) []string {
	return []string{"WHIPPET_TCP_SERVER_ADDRESS=" + s.address, "WHIPPET_USERNAME=" + username,
		"WHIPPET_PASSWORD=" + password}
}

// ok runs as root and fails the test unless the CLI exits 0.
func (s *server) ok(t *testing.T, args ...string) result {
	t.Helper()
	r := s.root(t, args...)
	if r.code != exitOK {
		t.Fatalf("want exit 0\n%s\n--- server log ---\n%s", r, s.log())
	}
	return r
}

// wantExit fails unless r exited with code and its stderr holds every
// one of texts.
func wantExit(t *testing.T, r result, code int, texts ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("want exit %d\n%s", code, r)
	}
	for _, text := range texts {
		if !strings.Contains(r.stderr, text) {
			t.Fatalf("stderr lacks %q\n%s", text, r)
		}
	}
}

// decode parses the CLI's JSON output into T.
func decode[T any](t *testing.T, r result) T {
	t.Helper()
	var value T
	if err := json.Unmarshal([]byte(r.stdout), &value); err != nil {
		t.Fatalf("output is not JSON of %T: %v\n%s", value, err, r)
	}
	return value
}

// rows parses table output: the header line names the columns, and each
// column starts where its header does (tabwriter pads with spaces).
func rows(t *testing.T, r result) []map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) == 0 || lines[0] == "" {
		t.Fatalf("no table header\n%s", r)
	}
	header := lines[0]
	var names []string
	var starts []int
	for i := 0; i < len(header); {
		if header[i] == ' ' {
			i++
			continue
		}
		end := strings.IndexByte(header[i:], ' ')
		if end < 0 {
			end = len(header) - i
		}
		names, starts = append(names, header[i:i+end]), append(starts, i)
		i += end
	}
	var out []map[string]string
	for _, line := range lines[1:] {
		if line == "" {
			break
		}
		row := map[string]string{}
		for column, name := range names {
			if starts[column] >= len(line) {
				row[name] = ""
				continue
			}
			end := len(line)
			if column+1 < len(starts) && starts[column+1] < len(line) {
				end = starts[column+1]
			}
			row[name] = strings.TrimSpace(line[starts[column]:end])
		}
		out = append(out, row)
	}
	return out
}

// column returns one column of a table, in row order.
func column(t *testing.T, r result, name string) []string {
	t.Helper()
	var values []string
	for _, row := range rows(t, r) {
		value, ok := row[name]
		if !ok {
			t.Fatalf("table has no column %s\n%s", name, r)
		}
		values = append(values, value)
	}
	return values
}

func wantStrings(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}
