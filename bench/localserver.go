package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/whippetio/whippet/client"
)

// ServerBinaryName is the server executable a local run starts.
const ServerBinaryName = "whippet-server"

// ErrNoServerBinary means no whippet-server was found to start.
var ErrNoServerBinary = errors.New("bench: no whippet-server binary found")

// Server is the server a run targets: an address, and for a local server
// its process id (for CPU accounting), data directory and log.
type Server struct {
	Address string
	PID     int
	DataDir string
	LogPath string
	process *exec.Cmd
	exited  chan struct{}
}

// FindServerBinary returns explicit if set, else whippet-server next to
// the running executable, else the one on PATH.
func FindServerBinary(explicit string) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("%w: %v", ErrNoServerBinary, err)
		}
		return explicit, nil
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), ServerBinaryName)
		if info, err := os.Stat(beside); err == nil && !info.IsDir() {
			return beside, nil
		}
	}
	path, err := exec.LookPath(ServerBinaryName)
	if err != nil {
		return "", fmt.Errorf("%w next to this binary or on PATH (use --server-binary)", ErrNoServerBinary)
	}
	return path, nil
}

// serverEnvironment configures a local server through WHIPPET_* variables:
// loopback on the given port, data under dir, no HTTP, bench credentials.
func serverEnvironment(address, dir, username, password string) []string {
	return append(os.Environ(),
		"WHIPPET_TCP_ADDRESS="+address,
		"WHIPPET_SYSTEM_PATH="+dir,
		"WHIPPET_HTTP_ENABLED=false",
		"WHIPPET_ROOT_USERNAME="+username,
		"WHIPPET_ROOT_PASSWORD="+password,
	)
}

// StartLocalServer starts binary on an ephemeral loopback port (the
// server binds 127.0.0.1:0 and names the port in its started line, so no
// other process can take it in between) with a fresh temp data directory,
// and waits until it answers a logged-in ping.
func StartLocalServer(ctx context.Context, binary, username, password string) (*Server, error) {
	dir, err := os.MkdirTemp("", "whippet-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench: data dir: %w", err)
	}
	server := &Server{DataDir: dir, LogPath: filepath.Join(dir, "server.log"), exited: make(chan struct{})}
	logFile, err := os.Create(server.LogPath)
	if err != nil {
		_ = os.RemoveAll(dir) // nothing was written yet
		return nil, fmt.Errorf("bench: server log: %w", err)
	}
	server.process = exec.Command(binary)
	server.process.Env = serverEnvironment("127.0.0.1:0", filepath.Join(dir, "data"), username, password)
	server.process.Stdout = logFile
	stderr, err := server.process.StderrPipe()
	if err == nil {
		err = server.process.Start()
	}
	if err != nil {
		_ = logFile.Close()
		_ = os.RemoveAll(dir) // the server never ran
		return nil, fmt.Errorf("bench: start %s: %w", binary, err)
	}
	server.PID = server.process.Process.Pid
	started := make(chan string, 1)
	copied := make(chan struct{})
	go func() {
		copyLog(stderr, logFile, started)
		close(copied)
	}()
	go func() {
		<-copied                  // Wait closes the pipe: read it to the end first
		_ = server.process.Wait() // its exit status is read from the log on failure
		_ = logFile.Close()
		close(server.exited)
	}()
	if err := server.awaitReady(ctx, started, username, password); err != nil {
		_ = server.Stop()
		return nil, err
	}
	return server, nil
}

// copyLog copies the server's log lines to file and sends the address of
// its started line ("whippet-server started … address=host:port").
func copyLog(stderr io.Reader, file *os.File, started chan<- string) {
	scanner := bufio.NewScanner(stderr)
	sent := false
	for scanner.Scan() {
		line := scanner.Text()
		_, _ = file.WriteString(line + "\n") // a lost log line does not fail the run
		if sent || !strings.Contains(line, "whippet-server started") {
			continue
		}
		for _, field := range strings.Fields(line) {
			if address, ok := strings.CutPrefix(field, "address="); ok {
				started <- address
				sent = true
				break
			}
		}
	}
	_, _ = io.Copy(file, stderr) // past an overlong line: keep the rest
}

// awaitReady waits for the started line, then pings until the server
// answers, it exits, or the start timeout passes.
func (s *Server) awaitReady(ctx context.Context, started <-chan string, username, password string) error {
	ctx, cancel := context.WithTimeout(ctx, ServerStartTimeout)
	defer cancel()
	select {
	case s.Address = <-started:
	case <-s.exited:
		return fmt.Errorf("bench: local server exited during start (log: %s)", s.LogPath)
	case <-ctx.Done():
		return fmt.Errorf("bench: local server not started after %v (log: %s)", ServerStartTimeout, s.LogPath)
	}
	for {
		probe, err := client.Dial(ctx, client.Options{Address: s.Address, Username: username, Password: password,
			ReconnectAttempts: -1, DialTimeout: time.Second})
		if err == nil {
			err = probe.Ping(ctx)
			_ = probe.Close() // a probe only
			if err == nil {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("bench: local server exited during start (log: %s)", s.LogPath)
		case <-ctx.Done():
			return fmt.Errorf("bench: local server not ready after %v: %w (log: %s)", ServerStartTimeout, err, s.LogPath)
		case <-time.After(ServerProbeInterval):
		}
	}
}

// Stop ends a local server (SIGTERM, SIGKILL after ServerStopTimeout) and
// removes its data directory. A remote server is left alone.
func (s *Server) Stop() error {
	if s.process == nil {
		return nil
	}
	_ = s.process.Process.Signal(syscall.SIGTERM) // it may have exited already
	select {
	case <-s.exited:
	case <-time.After(ServerStopTimeout):
		_ = s.process.Process.Kill() // graceful stop timed out
		<-s.exited
	}
	s.process = nil
	return os.RemoveAll(s.DataDir)
}

// ReadLog returns the local server's output so far (nil for a remote one).
func (s *Server) ReadLog() []byte {
	if s.LogPath == "" {
		return nil
	}
	text, _ := os.ReadFile(s.LogPath) // absent log: nothing to attach
	return text
}
